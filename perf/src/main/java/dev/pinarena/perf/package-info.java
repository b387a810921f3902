/** JMH benchmarks of the arena against Netty, allocateDirect and register-per-buffer. */
package dev.pinarena.perf;
