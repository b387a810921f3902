/*
 * Counts the memory registrations a process makes through libibverbs, whoever makes them (UCX's transports,
 * its registration cache, our arena): LD_PRELOAD it and read the counts with the exported functions.
 * Only counts and forwards; never changes an argument or a result.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

static atomic_long registrations;
static atomic_long deregistrations;

typedef struct ibv_mr *(*reg_mr_fn)(struct ibv_pd *, void *, size_t, int);
typedef struct ibv_mr *(*reg_mr_iova_fn)(struct ibv_pd *, void *, size_t, uint64_t, int);
typedef struct ibv_mr *(*reg_mr_iova2_fn)(struct ibv_pd *, void *, size_t, uint64_t, unsigned int);
typedef int (*dereg_mr_fn)(struct ibv_mr *);

/*
 * The real function. RTLD_NEXT alone is not enough: UCX loads its transports (and so libibverbs) with
 * dlopen(RTLD_LOCAL), outside the global scope RTLD_NEXT searches; ask libibverbs itself then.
 */
static void *next(const char *name)
{
    void *fn = dlsym(RTLD_NEXT, name);
    if (fn == NULL) {
        void *verbs = dlopen("libibverbs.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (verbs == NULL)
            verbs = dlopen("libibverbs.so.1", RTLD_LAZY);
        if (verbs != NULL)
            fn = dlsym(verbs, name);
    }
    if (fn == NULL) {
        static const char msg[] = "verbs_reg_counter: libibverbs function not found\n";
        (void)!write(2, msg, sizeof msg - 1);
        abort();
    }
    return fn;
}

#undef ibv_reg_mr
__attribute__((visibility("default")))
struct ibv_mr *ibv_reg_mr(struct ibv_pd *pd, void *addr, size_t length, int access)
{
    reg_mr_fn real = (reg_mr_fn)next("ibv_reg_mr");
    atomic_fetch_add(&registrations, 1);
    return real(pd, addr, length, access);
}

#undef ibv_reg_mr_iova
__attribute__((visibility("default")))
struct ibv_mr *ibv_reg_mr_iova(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, int access)
{
    reg_mr_iova_fn real = (reg_mr_iova_fn)next("ibv_reg_mr_iova");
    atomic_fetch_add(&registrations, 1);
    return real(pd, addr, length, iova, access);
}

__attribute__((visibility("default")))
struct ibv_mr *ibv_reg_mr_iova2(struct ibv_pd *pd, void *addr, size_t length, uint64_t iova, unsigned int access)
{
    reg_mr_iova2_fn real = (reg_mr_iova2_fn)next("ibv_reg_mr_iova2");
    atomic_fetch_add(&registrations, 1);
    return real(pd, addr, length, iova, access);
}

__attribute__((visibility("default")))
int ibv_dereg_mr(struct ibv_mr *mr)
{
    dereg_mr_fn real = (dereg_mr_fn)next("ibv_dereg_mr");
    atomic_fetch_add(&deregistrations, 1);
    return real(mr);
}

/* Memory registrations made so far by this process. */
__attribute__((visibility("default")))
long pinarena_verbs_registrations(void)
{
    return atomic_load(&registrations);
}

/* Memory deregistrations made so far by this process. */
__attribute__((visibility("default")))
long pinarena_verbs_deregistrations(void)
{
    return atomic_load(&deregistrations);
}
