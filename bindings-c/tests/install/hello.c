/* hello.c — a user's program built against the installed pinarena (pkg-config, nothing from the source
 * tree): allocates, asks the shim for the block's registration, prints one line.
 *   registrar=NAME registered=0|1
 * Exit 0 when the block is the shim's and registered; 1 otherwise. */
#include <pinarena.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char* p = malloc(1 << 20);
  if (p == NULL) return 1;
  memset(p, 0x5a, 1 << 20);
  pinarena_region_t r;
  int rc = pinarena_lookup(p, 1 << 20, &r);
  printf("registrar=%s registered=%d\n", pinarena_registrar(), rc == 0);
  free(p);
  return rc == 0 ? 0 : 1;
}
