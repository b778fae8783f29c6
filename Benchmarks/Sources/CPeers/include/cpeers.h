#ifndef UVLOOP_BENCH_CPEERS_H
#define UVLOOP_BENCH_CPEERS_H
/*
 * Raw C libuv peers: the floor UVLoop is measured against. Each function does the whole workload in C
 * and returns the elapsed wall time in nanoseconds (CLOCK_MONOTONIC), unless stated otherwise.
 * libuv types stay opaque here so that Swift never sees <uv.h> through this module.
 */
#include <stdint.h>
#include <stddef.h>

/* The chunked-loop body: FNV-1a over a 64-byte buffer derived from i (about 100 ns), shared by C and
   Swift (static inline, so both inline the same code). */
static inline uint64_t cp_body(uint64_t i) {
    uint64_t h = 1469598103934665603ULL;
    uint64_t x = i * 0x9E3779B97F4A7C15ULL + 1;
    for (int k = 0; k < 64; k++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        h = (h ^ (x & 0xff)) * 1099511628211ULL;
    }
    return h;
}

/* Deterministic pseudo-random timeouts for the timer workloads (same sequence in every impl). */
static inline uint64_t cp_rand_timeout_ms(uint64_t *state) {
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return 3600000ULL + ((*state >> 33) % 3600000ULL); /* between one and two hours */
}

/* An opaque sink: keeps a computed value (and the work behind it) from being optimised away. */
void cp_sink(uint64_t value);

uint64_t cp_now_ns(void);              /* CLOCK_MONOTONIC */
uint64_t cp_process_cpu_ns(void);      /* CLOCK_PROCESS_CPUTIME_ID */

/* (a) A libuv loop on its own thread, fed by a mutex-protected queue: one malloc per post, one
   uv_async_send per burst (wake-pending flag). Also carries a next-iteration queue (uv_check + uv_idle
   while non-empty) for post_next_iteration. */
typedef struct cp_mq cp_mq;
cp_mq *cp_mq_start(void);
void cp_mq_stop(cp_mq *q);             /* runs what was posted, closes the handles, joins */
double cp_mq_post_cross_thread(cp_mq *q, long n, int producers);
double cp_mq_post_on_loop(cp_mq *q, long n, int batch);
double cp_mq_post_next_iteration(cp_mq *q, long n, int batch);
double cp_mq_invoke_roundtrip(cp_mq *q, long n);

/* (b) A lock-free handoff: a bounded MPSC ring of machine words (Vyukov), delivered to a long-lived
   receiver on the loop thread; uv_async_send only when the wake-pending flag was clear. */
typedef struct cp_lf cp_lf;
cp_lf *cp_lf_start(void);
void cp_lf_stop(cp_lf *q);
double cp_lf_post_cross_thread(cp_lf *q, long n, int producers);

/* (c) libuv timers on a loop owned by the calling thread (not running: uv_timer_start/stop only). */
typedef struct cp_timers cp_timers;
cp_timers *cp_timers_new(long capacity);        /* loop + handle pointer array, no timer yet */
void cp_timers_fill(cp_timers *t, long count);  /* mallocs and starts `count` timers, 1-2 hours out */
void cp_timers_destroy(cp_timers *t);
/* timer_cancel: n timers started (timeouts 1-2 hours, cp_rand_timeout_ms from seed 12345), then all n
   stopped in start order. The uv_timer_t array is allocated before the clock starts (the floor: no
   allocation per timer). */
double cp_timer_cancel(long n);
/* timer_reschedule: n timers started (timeouts 1-2 hours, cp_rand_timeout_ms from seed 12345, handles
   preallocated), kept across runs; each run moves every timer `rounds` times in start order, each move
   to the sequence's next timeout (uv_timer_start on the started timer), and returns the elapsed ns. */
typedef struct cp_moves cp_moves;
cp_moves *cp_moves_new(long n);
double cp_moves_run(cp_moves *m, long rounds);
void cp_moves_destroy(cp_moves *m);
/* n timers started with timeouts spread over spread_ms, then uv_run until all fired. */
double cp_timer_fire(long n, long spread_ms);

/* libuv thread pool: n uv_queue_work (one malloc'd request each), trivial work, after-work counts. */
double cp_queue_work(long n);

/* A chunked loop on an idle handle: n calls of cp_body, chunks bounded by budget_ns (clock checked
   every 64 items). With timer_period_ns > 0, a one-shot timer re-armed on each fire measures its
   lateness; the p99 lateness is stored in *p99_ns. Returns elapsed ns. */
double cp_chunked(long n, uint64_t budget_ns, uint64_t timer_period_ns, double *p99_ns, uint64_t *sink);

#endif
