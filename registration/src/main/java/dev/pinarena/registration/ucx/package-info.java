/** The UCX registrar: {@code ucp_mem_map} of existing chunks on the caller's UCX context. */
package dev.pinarena.registration.ucx;
