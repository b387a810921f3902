/** The mlock registrar: residency only, the last fallback. */
package dev.pinarena.registration.mlock;
