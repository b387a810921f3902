/* fabric_old_abi.c — a program bound to libfabric's oldest fi_fabric
 * (FABRIC_1.0, the ABI of libfabric 1.0-1.4), as one built years ago is.
 *
 *   pinarena-fabric-old-abi      (FI_PROVIDER=tcp: any host)
 *
 * It opens a fabric with ABI 1.0's attributes, whose struct ends at
 * prov_version: the 4 bytes after it, which the current struct reads as
 * api_version, are filled with 0x5a as a stale stack would leave them. Only
 * libfabric's FABRIC_1.0 entry point reads that struct right (it sets
 * api_version to 1.0); the current one takes 0x5a5a5a5a for a version and
 * refuses it (-FI_EINVAL). Prints
 *   fabric rc=R api_version=0xV fed=F
 * fed: pinarena_stack_events_ofi() when libpinarena.so is loaded (0: its
 * monitor was imported at this fi_fabric; -1: not; absent: no shim). */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <rdma/fabric.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fabric_attr_1_0 {
  struct fid_fabric* fabric;
  char* name;
  char* prov_name;
  uint32_t prov_version;
};

int fabric_1_0(struct fabric_attr_1_0* attr, struct fid_fabric** fabric, void* context);
__asm__(".symver fabric_1_0, fi_fabric@FABRIC_1.0");

int main(void) {
  setenv("FI_PROVIDER", "tcp", 0);
  struct fi_info* info = NULL;
  int rc = fi_getinfo(FI_VERSION(1, 13), NULL, NULL, 0, NULL, &info);
  if (rc != 0 || info == NULL) {
    fprintf(stderr, "fabric_old_abi: fi_getinfo found no provider (%d)\n", rc);
    return 2;
  }
  union { struct fabric_attr_1_0 attr; unsigned char bytes[sizeof(struct fi_fabric_attr)]; } old;
  memset(old.bytes, 0x5a, sizeof old.bytes);
  old.attr.fabric = NULL;
  old.attr.name = info->fabric_attr->name;
  old.attr.prov_name = info->fabric_attr->prov_name;
  old.attr.prov_version = info->fabric_attr->prov_version;
  struct fid_fabric* fabric = NULL;
  rc = fabric_1_0(&old.attr, &fabric, NULL);
  long (*fed)(void) = (long (*)(void))dlsym(RTLD_DEFAULT, "pinarena_stack_events_ofi");
  printf("fabric rc=%d api_version=0x%x", rc, fabric != NULL ? fabric->api_version : 0u);
  if (fed != NULL) printf(" fed=%ld", fed());
  printf("\n");
  if (fabric != NULL) fi_close(&fabric->fid);
  fi_freeinfo(info);
  return 0;
}
