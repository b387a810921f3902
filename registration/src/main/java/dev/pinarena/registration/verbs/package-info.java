/** The verbs registrar ({@code ibv_reg_mr}), its probe and the memory windows of remote keys. */
package dev.pinarena.registration.verbs;
