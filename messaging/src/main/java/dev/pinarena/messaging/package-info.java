/** Messages and RDMA put/get from arena buffers over UCX (JUCX), with no registration per message. */
package dev.pinarena.messaging;
