/** The registration cache for memory pinarena does not own, fed by the C hooks' invalidations. */
package dev.pinarena.registration.cache;
