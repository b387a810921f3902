/**
 * Not API: internals of the registration module (native bindings and raw helpers) that other pinarena
 * packages share. Anything here may change or disappear without notice; do not use it from outside pinarena.
 */
package dev.pinarena.registration.verbs.internal;
