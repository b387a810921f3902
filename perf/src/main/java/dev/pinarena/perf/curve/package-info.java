/** The registration cost curve: cost of a registration by size and page backing. */
package dev.pinarena.perf.curve;
