/** A Netty {@code ByteBufAllocator} whose direct buffers are pinned arena memory. */
package dev.pinarena.netty;
