/*
 * Testbed self-test: register and deregister memory with the first RDMA device.
 * Opens the first verbs device, allocates a PD, and for buffer sizes 4 KiB .. 64 MiB
 * (x4 steps) registers the buffer with ibv_reg_mr, prints lkey/rkey and timings,
 * and deregisters it. Exits non-zero on any failure.
 *
 * Build: gcc -O2 -Wall -o reg_mr reg_mr.c -libverbs   (testbed/softroce --selftest does it)
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(void)
{
    int num = 0, rc = 1;
    struct ibv_device **list = ibv_get_device_list(&num);
    if (!list) {
        fprintf(stderr, "ibv_get_device_list: %s\n", strerror(errno));
        return 1;
    }
    if (num == 0) {
        fprintf(stderr, "no RDMA devices\n");
        ibv_free_device_list(list);
        return 1;
    }

    struct ibv_context *ctx = ibv_open_device(list[0]);
    if (!ctx) {
        fprintf(stderr, "ibv_open_device(%s): %s\n", ibv_get_device_name(list[0]), strerror(errno));
        ibv_free_device_list(list);
        return 1;
    }
    printf("device %s\n", ibv_get_device_name(list[0]));

    struct ibv_pd *pd = ibv_alloc_pd(ctx);
    if (!pd) {
        fprintf(stderr, "ibv_alloc_pd: %s\n", strerror(errno));
        goto close;
    }

    const int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
    for (size_t size = 4096; size <= 64u << 20; size *= 4) {
        void *buf = NULL;
        int err = posix_memalign(&buf, 4096, size);
        if (err) {
            fprintf(stderr, "posix_memalign(%zu): %s\n", size, strerror(err));
            goto dealloc;
        }
        memset(buf, 0xA5, size); /* fault the pages in before pinning */

        double t0 = now_us();
        struct ibv_mr *mr = ibv_reg_mr(pd, buf, size, access);
        double t1 = now_us();
        if (!mr) {
            fprintf(stderr, "ibv_reg_mr(%zu bytes): %s\n", size, strerror(errno));
            free(buf);
            goto dealloc;
        }
        uint32_t lkey = mr->lkey, rkey = mr->rkey;
        err = ibv_dereg_mr(mr);
        double t2 = now_us();
        free(buf);
        if (err) {
            fprintf(stderr, "ibv_dereg_mr(%zu bytes): %s\n", size, strerror(err));
            goto dealloc;
        }
        printf("size %9zu  lkey 0x%08x  rkey 0x%08x  reg %8.1f us  dereg %8.1f us\n",
               size, lkey, rkey, t1 - t0, t2 - t1);
    }
    rc = 0;

dealloc:
    if (ibv_dealloc_pd(pd)) {
        fprintf(stderr, "ibv_dealloc_pd failed\n");
        rc = 1;
    }
close:
    if (ibv_close_device(ctx)) {
        fprintf(stderr, "ibv_close_device failed\n");
        rc = 1;
    }
    ibv_free_device_list(list);
    printf("reg_mr selftest: %s\n", rc ? "FAILED" : "OK");
    return rc;
}
