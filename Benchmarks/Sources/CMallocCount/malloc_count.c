#include "malloc_count.h"
#include <malloc.h>
#include <stdatomic.h>
#include <stddef.h>
#include <errno.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
extern void *__libc_memalign(size_t, size_t);

static _Atomic int enabled;
static _Atomic uint64_t allocations;
static _Atomic int64_t net_bytes;

/* Per-thread tracking (initial-exec TLS in the executable: no allocation on first use). */
static __thread int tl_tracking;
static __thread uint64_t tl_allocations;
static __thread int64_t tl_net_bytes;

static inline int on(void) { return atomic_load_explicit(&enabled, memory_order_relaxed); }

static inline void count_alloc(void *p) {
    if (!p) return;
    if (on()) {
        atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&net_bytes, (int64_t)malloc_usable_size(p), memory_order_relaxed);
    }
    if (tl_tracking) {
        tl_allocations++;
        tl_net_bytes += (int64_t)malloc_usable_size(p);
    }
}

static inline void count_free(void *p) {
    if (!p) return;
    if (on()) atomic_fetch_sub_explicit(&net_bytes, (int64_t)malloc_usable_size(p), memory_order_relaxed);
    if (tl_tracking) tl_net_bytes -= (int64_t)malloc_usable_size(p);
}

void *malloc(size_t size) {
    void *p = __libc_malloc(size);
    count_alloc(p);
    return p;
}

void *calloc(size_t n, size_t size) {
    void *p = __libc_calloc(n, size);
    count_alloc(p);
    return p;
}

void *realloc(void *old, size_t size) {
    count_free(old);
    void *p = __libc_realloc(old, size);
    if (p) count_alloc(p);
    else if (old && size != 0) { /* failed: the old block is still live */
        if (on()) atomic_fetch_add_explicit(&net_bytes, (int64_t)malloc_usable_size(old), memory_order_relaxed);
        if (tl_tracking) tl_net_bytes += (int64_t)malloc_usable_size(old);
    }
    return p;
}

void free(void *p) {
    count_free(p);
    __libc_free(p);
}

void *memalign(size_t alignment, size_t size) {
    void *p = __libc_memalign(alignment, size);
    count_alloc(p);
    return p;
}

void *aligned_alloc(size_t alignment, size_t size) {
    void *p = __libc_memalign(alignment, size);
    count_alloc(p);
    return p;
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *p = __libc_memalign(alignment, size);
    if (!p) return ENOMEM;
    count_alloc(p);
    *out = p;
    return 0;
}

void mc_set_enabled(bool e) { atomic_store(&enabled, e ? 1 : 0); }
bool mc_enabled(void) { return atomic_load(&enabled) != 0; }

mc_snapshot_t mc_snapshot(void) {
    mc_snapshot_t s;
    s.allocations = atomic_load(&allocations);
    s.net_bytes = atomic_load(&net_bytes);
    return s;
}

void mc_thread_begin(void) {
    tl_allocations = 0;
    tl_net_bytes = 0;
    tl_tracking = 1;
}

mc_snapshot_t mc_thread_end(void) {
    tl_tracking = 0;
    mc_snapshot_t s = { tl_allocations, tl_net_bytes };
    return s;
}

bool mc_self_test(void) {
    int was = atomic_exchange(&enabled, 1);
    uint64_t before = atomic_load(&allocations);
    void *volatile p = malloc(24);
    uint64_t after = atomic_load(&allocations);
    free(p);
    atomic_store(&enabled, was);
    return after == before + 1;
}
