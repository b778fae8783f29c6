#ifndef UVLOOP_BENCH_MALLOC_COUNT_H
#define UVLOOP_BENCH_MALLOC_COUNT_H
/*
 * A malloc interposer for the benchmarks. The executable defines malloc, calloc, realloc, free,
 * posix_memalign, aligned_alloc and memalign, forwarding to glibc's __libc_* entry points; so every
 * allocation in the process (Swift runtime, NIO, Dispatch, libuv) goes through it.
 * While counting is enabled, each allocation bumps a counter, and live bytes (malloc_usable_size)
 * are added on allocation and subtracted on free. Disabled, the cost is one relaxed load.
 */
#include <stdint.h>
#include <stdbool.h>

typedef struct {
    uint64_t allocations;   /* malloc/calloc/realloc/memalign calls while enabled */
    int64_t net_bytes;      /* usable bytes allocated minus usable bytes freed while enabled */
} mc_snapshot_t;

void mc_set_enabled(bool enabled);
bool mc_enabled(void);
mc_snapshot_t mc_snapshot(void);
/* Counting for the calling thread only, whatever the global switch says (frees made by other threads
   are not seen): for heap growth caused by code that runs on one thread, e.g. scheduling timers. */
void mc_thread_begin(void);
mc_snapshot_t mc_thread_end(void);

/* true when this executable's malloc is the counting one (a self-check). */
bool mc_self_test(void);

#endif
