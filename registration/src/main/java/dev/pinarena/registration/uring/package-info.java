/** The io_uring registrar: fixed buffers, a real long-term kernel pin without RDMA hardware. */
package dev.pinarena.registration.uring;
