/** OS memory: aligned chunks, page backings, pagemap, page sizes, RLIMIT_MEMLOCK, hugepage pools. */
package dev.pinarena.registration.os;
