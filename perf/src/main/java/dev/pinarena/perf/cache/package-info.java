/** Benchmarks of the registration cache and of the jnr-ffi crossings it would pay in C. */
package dev.pinarena.perf.cache;
