/** Registrars (pinning backends), regions, access bits, the pin budget and their exceptions. */
package dev.pinarena.registration;
