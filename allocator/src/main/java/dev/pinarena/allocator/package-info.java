/** The pinned arena: zero-garbage off-heap buffers from registered chunks, with their keys in O(1) and remote keys that reach exactly one buffer. */
package dev.pinarena.allocator;
