#define _GNU_SOURCE
#include "capipeers.h"
#include "cpeers.h"
#include <uvloop.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(expr) do { int _r = (expr); if (_r != 0) { fprintf(stderr, "capipeers: %s failed: %d (%s)\n", #expr, _r, uvloop_strerror(_r)); abort(); } } while (0)

static void sem_wait_all(sem_t *s) {
    while (sem_wait(s) != 0) { /* EINTR */ }
}

/* ------------------------------------------------------------------------------------------------ */
/* c_post_cross_thread                                                                              */

typedef struct {
    uvloop_t *l;
    long total, per_producer, received;
    uint64_t sum;
    sem_t done;
} post_ctx;

/* The callback: one counter add per post, as the C peers' receivers do. */
static void post_item(void *ctx) {
    post_ctx *c = ctx;
    c->sum += 1;
    if (++c->received == c->total) sem_post(&c->done);
}

static void *post_producer(void *arg) {
    post_ctx *c = arg;
    /* Locals: the loop thread writes the counters next to these fields; reading them on every
       post would share that cache line (the lock-free peer's producer reads its own struct). */
    uvloop_t *l = c->l;
    long n = c->per_producer;
    for (long i = 0; i < n; i++) CHECK(uvloop_post(l, post_item, c));
    return NULL;
}

double cap_post_cross_thread(struct uvloop_s *l, long n, int producers) {
    post_ctx c = { .l = l, .total = (n / producers) * producers, .per_producer = n / producers };
    sem_init(&c.done, 0, 0);
    pthread_t th[64];
    uint64_t t0 = cp_now_ns();
    for (int p = 0; p < producers; p++) CHECK(pthread_create(&th[p], NULL, post_producer, &c));
    sem_wait_all(&c.done);
    uint64_t t1 = cp_now_ns();
    for (int p = 0; p < producers; p++) pthread_join(th[p], NULL);
    sem_destroy(&c.done);
    return (double)(t1 - t0);
}

/* ------------------------------------------------------------------------------------------------ */
/* c_timer_start_cancel                                                                             */

static void timer_noop(void *ctx) { (void)ctx; }

double cap_timer_start_cancel(struct uvloop_s *l, long n) {
    uvloop_timer_t **h = malloc((size_t)(n ? n : 1) * sizeof *h);
    uint64_t rng = 12345;
    int failed = 0;
    uint64_t t0 = cp_now_ns();
    for (long i = 0; i < n; i++) {
        if (uvloop_timer_start(l, cp_rand_timeout_ms(&rng) * 1000000ULL, 0, timer_noop, NULL, &h[i]) != 0) {
            failed = 1;
            h[i] = NULL;
        }
    }
    for (long i = 0; i < n; i++) {
        if (uvloop_timer_cancel(h[i]) != 1) failed = 1;
        uvloop_timer_release(h[i]);
    }
    uint64_t t1 = cp_now_ns();
    free(h);
    return failed ? -1.0 : (double)(t1 - t0);
}

void cap_release(struct uvloop_s *l) { CHECK(uvloop_release(l)); }

/* ------------------------------------------------------------------------------------------------ */
/* A C-owned uv_loop_t with UVLoop attached                                                         */

struct cap_attached {
    uv_loop_t loop;
    uvloop_t *l;
    pthread_t thread;
    sem_t ready;
};

static void *attached_thread(void *arg) {
    cap_attached *a = arg;
    CHECK(uv_loop_init(&a->loop));
    CHECK(uvloop_attach(&a->loop, &a->l));
    CHECK(uvloop_keep_alive(a->l, 1));
    sem_post(&a->ready);
    uv_run(&a->loop, UV_RUN_DEFAULT);      /* returns after the detach */
    uv_run(&a->loop, UV_RUN_NOWAIT);
    CHECK(uvloop_release(a->l));
    CHECK(uv_loop_close(&a->loop));
    return NULL;
}

cap_attached *cap_attached_start(void) {
    cap_attached *a = calloc(1, sizeof *a);
    sem_init(&a->ready, 0, 0);
    CHECK(pthread_create(&a->thread, NULL, attached_thread, a));
    sem_wait_all(&a->ready);
    return a;
}

struct uvloop_s *cap_attached_handle(cap_attached *a) { return a->l; }

static void detach_cb(void *ctx) {
    cap_attached *a = ctx;
    CHECK(uvloop_detach(a->l));
}

void cap_attached_stop(cap_attached *a) {
    CHECK(uvloop_post(a->l, detach_cb, a));
    CHECK(pthread_join(a->thread, NULL));
    sem_destroy(&a->ready);
    free(a);
}
