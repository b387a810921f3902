/** The Java part of the {@code ./pinarena} command: doctor and the stale-registration demo. */
package dev.pinarena.cli;
