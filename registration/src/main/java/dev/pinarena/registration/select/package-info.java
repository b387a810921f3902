/** Choosing a registrar ({@code auto}) and saying why each better one was passed over. */
package dev.pinarena.registration.select;
