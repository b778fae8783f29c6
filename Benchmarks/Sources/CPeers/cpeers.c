#define _GNU_SOURCE
#include "cpeers.h"
#include <uv.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <time.h>
#include <sched.h>

#define CHECK(expr) do { int _r = (expr); if (_r != 0) { fprintf(stderr, "cpeers: %s failed: %d (%s)\n", #expr, _r, _r < 0 ? uv_strerror(_r) : ""); abort(); } } while (0)

volatile uint64_t cp_sink_value;
void cp_sink(uint64_t value) { cp_sink_value = value; }

uint64_t cp_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

uint64_t cp_process_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void sem_wait_all(sem_t *s) {
    while (sem_wait(s) != 0) { /* EINTR */ }
}

/* ------------------------------------------------------------------------------------------------ */
/* (a) mutex-protected queue                                                                        */

typedef void (*cp_fn)(void *arg, uintptr_t value);
typedef struct cp_node { struct cp_node *next; cp_fn fn; void *arg; uintptr_t value; } cp_node;

struct cp_mq {
    uv_loop_t loop;
    uv_async_t async;
    uv_check_t check;
    uv_idle_t idle;
    pthread_t thread;
    pthread_mutex_t mu;
    cp_node *head, *tail;
    int wake_pending;
    int stopping;
    /* next-iteration queue: loop thread only */
    cp_node *ni_head, *ni_tail;
};

static void cp_mq_post(cp_mq *q, cp_fn fn, void *arg, uintptr_t value) {
    cp_node *n = malloc(sizeof *n);
    n->next = NULL; n->fn = fn; n->arg = arg; n->value = value;
    pthread_mutex_lock(&q->mu);
    if (q->tail) q->tail->next = n; else q->head = n;
    q->tail = n;
    int wake = !q->wake_pending;
    q->wake_pending = 1;
    pthread_mutex_unlock(&q->mu);
    if (wake) uv_async_send(&q->async);
}

static void mq_closed(uv_handle_t *h) { (void)h; }

static void mq_async_cb(uv_async_t *a) {
    cp_mq *q = a->data;
    pthread_mutex_lock(&q->mu);
    cp_node *n = q->head;
    q->head = q->tail = NULL;
    q->wake_pending = 0;
    int stopping = q->stopping;
    pthread_mutex_unlock(&q->mu);
    while (n) {
        cp_node *next = n->next;
        n->fn(n->arg, n->value);
        free(n);
        n = next;
    }
    if (stopping) {
        pthread_mutex_lock(&q->mu);
        int empty = q->head == NULL;
        pthread_mutex_unlock(&q->mu);
        if (empty && q->ni_head == NULL) {
            uv_close((uv_handle_t *)&q->async, mq_closed);
            uv_close((uv_handle_t *)&q->check, mq_closed);
            uv_close((uv_handle_t *)&q->idle, mq_closed);
        } else {
            uv_async_send(&q->async);
        }
    }
}

static void mq_idle_cb(uv_idle_t *h) { (void)h; }

static void mq_check_cb(uv_check_t *c) {
    cp_mq *q = c->data;
    cp_node *n = q->ni_head; /* snapshot: work queued while running waits for the next turn */
    q->ni_head = q->ni_tail = NULL;
    while (n) {
        cp_node *next = n->next;
        n->fn(n->arg, n->value);
        free(n);
        n = next;
    }
    if (q->ni_head == NULL) uv_idle_stop(&q->idle);
}

static void cp_mq_post_next(cp_mq *q, cp_fn fn, void *arg, uintptr_t value) {
    cp_node *n = malloc(sizeof *n);
    n->next = NULL; n->fn = fn; n->arg = arg; n->value = value;
    if (q->ni_tail) q->ni_tail->next = n; else q->ni_head = n;
    q->ni_tail = n;
    if (!uv_is_active((uv_handle_t *)&q->idle)) uv_idle_start(&q->idle, mq_idle_cb);
}

static void *mq_thread(void *arg) {
    cp_mq *q = arg;
    CHECK(uv_run(&q->loop, UV_RUN_DEFAULT));
    return NULL;
}

cp_mq *cp_mq_start(void) {
    cp_mq *q = calloc(1, sizeof *q);
    CHECK(uv_loop_init(&q->loop));
    CHECK(uv_async_init(&q->loop, &q->async, mq_async_cb));
    q->async.data = q;
    CHECK(uv_check_init(&q->loop, &q->check));
    q->check.data = q;
    CHECK(uv_check_start(&q->check, mq_check_cb));
    uv_unref((uv_handle_t *)&q->check);
    CHECK(uv_idle_init(&q->loop, &q->idle));
    CHECK(pthread_mutex_init(&q->mu, NULL));
    CHECK(pthread_create(&q->thread, NULL, mq_thread, q));
    return q;
}

void cp_mq_stop(cp_mq *q) {
    pthread_mutex_lock(&q->mu);
    q->stopping = 1;
    pthread_mutex_unlock(&q->mu);
    uv_async_send(&q->async);
    CHECK(pthread_join(q->thread, NULL));
    CHECK(uv_loop_close(&q->loop));
    pthread_mutex_destroy(&q->mu);
    free(q);
}

typedef struct {
    cp_mq *q;
    long total, per_producer, received, issued;
    int batch;
    uint64_t sum;
    sem_t done;
} mq_ctx;

static void mq_item(void *arg, uintptr_t value) {
    mq_ctx *c = arg;
    c->sum += value;
    if (++c->received == c->total) sem_post(&c->done);
}

static void *mq_producer(void *arg) {
    mq_ctx *c = arg;
    for (long i = 0; i < c->per_producer; i++) cp_mq_post(c->q, mq_item, c, (uintptr_t)i);
    return NULL;
}

double cp_mq_post_cross_thread(cp_mq *q, long n, int producers) {
    mq_ctx c = { .q = q, .total = (n / producers) * producers, .per_producer = n / producers };
    sem_init(&c.done, 0, 0);
    pthread_t th[64];
    uint64_t t0 = cp_now_ns();
    for (int p = 0; p < producers; p++) CHECK(pthread_create(&th[p], NULL, mq_producer, &c));
    sem_wait_all(&c.done);
    uint64_t t1 = cp_now_ns();
    for (int p = 0; p < producers; p++) pthread_join(th[p], NULL);
    sem_destroy(&c.done);
    return (double)(t1 - t0);
}

/* post_on_loop: a driver on the loop thread posts a batch of items, then re-posts itself. */
static void mq_on_loop_driver(void *arg, uintptr_t value) {
    (void)value;
    mq_ctx *c = arg;
    long k = c->total - c->issued;
    if (k > c->batch) k = c->batch;
    for (long i = 0; i < k; i++) cp_mq_post(c->q, mq_item, c, (uintptr_t)(c->issued + i));
    c->issued += k;
    if (c->issued < c->total) cp_mq_post(c->q, mq_on_loop_driver, c, 0);
}

double cp_mq_post_on_loop(cp_mq *q, long n, int batch) {
    mq_ctx c = { .q = q, .total = n, .batch = batch };
    sem_init(&c.done, 0, 0);
    uint64_t t0 = cp_now_ns();
    cp_mq_post(q, mq_on_loop_driver, &c, 0);
    sem_wait_all(&c.done);
    uint64_t t1 = cp_now_ns();
    sem_destroy(&c.done);
    return (double)(t1 - t0);
}

/* post_next_iteration: the driver queues a batch for the next iteration, and itself after it. */
static void mq_next_driver(void *arg, uintptr_t value) {
    (void)value;
    mq_ctx *c = arg;
    long k = c->total - c->issued;
    if (k > c->batch) k = c->batch;
    for (long i = 0; i < k; i++) cp_mq_post_next(c->q, mq_item, c, (uintptr_t)(c->issued + i));
    c->issued += k;
    if (c->issued < c->total) cp_mq_post_next(c->q, mq_next_driver, c, 0);
}

double cp_mq_post_next_iteration(cp_mq *q, long n, int batch) {
    mq_ctx c = { .q = q, .total = n, .batch = batch };
    sem_init(&c.done, 0, 0);
    uint64_t t0 = cp_now_ns();
    cp_mq_post(q, mq_next_driver, &c, 0);
    sem_wait_all(&c.done);
    uint64_t t1 = cp_now_ns();
    sem_destroy(&c.done);
    return (double)(t1 - t0);
}

typedef struct { uintptr_t result; sem_t done; } mq_invoke;

static void mq_invoke_fn(void *arg, uintptr_t value) {
    mq_invoke *r = arg;
    r->result = value + 1;
    sem_post(&r->done);
}

double cp_mq_invoke_roundtrip(cp_mq *q, long n) {
    mq_invoke r;
    sem_init(&r.done, 0, 0);
    uintptr_t acc = 0;
    uint64_t t0 = cp_now_ns();
    for (long i = 0; i < n; i++) {
        cp_mq_post(q, mq_invoke_fn, &r, (uintptr_t)i);
        sem_wait_all(&r.done);
        acc += r.result;
    }
    uint64_t t1 = cp_now_ns();
    sem_destroy(&r.done);
    if (acc == 42) fprintf(stderr, " ");
    return (double)(t1 - t0);
}

/* ------------------------------------------------------------------------------------------------ */
/* (b) lock-free MPSC ring (Dmitry Vyukov's bounded queue) + uv_async_send with a wake-pending flag  */

#define LF_CAP (1u << 16)

typedef struct { _Atomic size_t seq; uintptr_t value; } lf_cell;

typedef struct {
    long total, per_producer, received;
    uint64_t sum;
    sem_t done;
} lf_ctx;

struct cp_lf {
    _Alignas(64) _Atomic size_t enqueue_pos;
    _Alignas(64) size_t dequeue_pos;
    _Alignas(64) _Atomic int wake_pending;
    _Alignas(64) lf_cell *cells;
    uv_loop_t loop;
    uv_async_t async;
    pthread_t thread;
    _Atomic int stopping;
    lf_ctx *receiver; /* the long-lived receiver (set before each run, read on the loop thread) */
};

static int lf_push(cp_lf *q, uintptr_t v) {
    size_t pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
    for (;;) {
        lf_cell *cell = &q->cells[pos & (LF_CAP - 1)];
        size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
        intptr_t dif = (intptr_t)seq - (intptr_t)pos;
        if (dif == 0) {
            if (atomic_compare_exchange_weak_explicit(&q->enqueue_pos, &pos, pos + 1,
                                                      memory_order_relaxed, memory_order_relaxed)) {
                cell->value = v;
                atomic_store_explicit(&cell->seq, pos + 1, memory_order_release);
                return 1;
            }
        } else if (dif < 0) {
            return 0; /* full */
        } else {
            pos = atomic_load_explicit(&q->enqueue_pos, memory_order_relaxed);
        }
    }
}

static int lf_pop(cp_lf *q, uintptr_t *v) {
    size_t pos = q->dequeue_pos;
    lf_cell *cell = &q->cells[pos & (LF_CAP - 1)];
    size_t seq = atomic_load_explicit(&cell->seq, memory_order_acquire);
    if ((intptr_t)seq - (intptr_t)(pos + 1) != 0) return 0;
    *v = cell->value;
    q->dequeue_pos = pos + 1;
    atomic_store_explicit(&cell->seq, pos + LF_CAP, memory_order_release);
    return 1;
}

static void lf_wake(cp_lf *q) {
    atomic_thread_fence(memory_order_seq_cst); /* the push must be visible before we read the flag */
    if (!atomic_load_explicit(&q->wake_pending, memory_order_relaxed) &&
        !atomic_exchange_explicit(&q->wake_pending, 1, memory_order_seq_cst))
        uv_async_send(&q->async);
}

static void lf_send(cp_lf *q, uintptr_t v) {
    while (!lf_push(q, v)) { lf_wake(q); sched_yield(); }
    lf_wake(q);
}

static void lf_async_cb(uv_async_t *a) {
    cp_lf *q = a->data;
    atomic_store_explicit(&q->wake_pending, 0, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    uintptr_t v;
    lf_ctx *c = q->receiver;
    while (lf_pop(q, &v)) {
        c->sum += v;
        if (++c->received == c->total) sem_post(&c->done);
    }
    if (atomic_load(&q->stopping)) uv_close((uv_handle_t *)&q->async, mq_closed);
}

static void *lf_thread(void *arg) {
    cp_lf *q = arg;
    CHECK(uv_run(&q->loop, UV_RUN_DEFAULT));
    return NULL;
}

cp_lf *cp_lf_start(void) {
    cp_lf *q = aligned_alloc(64, (sizeof(cp_lf) + 63) & ~(size_t)63);
    memset(q, 0, sizeof *q);
    q->cells = aligned_alloc(64, sizeof(lf_cell) * LF_CAP);
    for (size_t i = 0; i < LF_CAP; i++) atomic_init(&q->cells[i].seq, i);
    CHECK(uv_loop_init(&q->loop));
    CHECK(uv_async_init(&q->loop, &q->async, lf_async_cb));
    q->async.data = q;
    CHECK(pthread_create(&q->thread, NULL, lf_thread, q));
    return q;
}

void cp_lf_stop(cp_lf *q) {
    atomic_store(&q->stopping, 1);
    uv_async_send(&q->async);
    CHECK(pthread_join(q->thread, NULL));
    CHECK(uv_loop_close(&q->loop));
    free(q->cells);
    free(q);
}

typedef struct { cp_lf *q; long per_producer; } lf_producer_arg;

static void *lf_producer(void *arg) {
    lf_producer_arg *a = arg;
    for (long i = 0; i < a->per_producer; i++) lf_send(a->q, (uintptr_t)i);
    return NULL;
}

double cp_lf_post_cross_thread(cp_lf *q, long n, int producers) {
    lf_ctx c = { .total = (n / producers) * producers, .per_producer = n / producers };
    sem_init(&c.done, 0, 0);
    q->receiver = &c;
    lf_producer_arg a = { q, n / producers };
    pthread_t th[64];
    /* the receiver pointer is published to the loop thread by the first push (release/acquire) */
    atomic_thread_fence(memory_order_seq_cst);
    uint64_t t0 = cp_now_ns();
    for (int p = 0; p < producers; p++) CHECK(pthread_create(&th[p], NULL, lf_producer, &a));
    sem_wait_all(&c.done);
    uint64_t t1 = cp_now_ns();
    for (int p = 0; p < producers; p++) pthread_join(th[p], NULL);
    sem_destroy(&c.done);
    return (double)(t1 - t0);
}

/* ------------------------------------------------------------------------------------------------ */
/* (c) libuv timers                                                                                  */

struct cp_timers {
    uv_loop_t loop;
    uv_timer_t extra;
    uv_timer_t **timers;
    long count, capacity;
};

static void timer_noop(uv_timer_t *t) { (void)t; }
static void timer_free_cb(uv_handle_t *h) { free(h); }

cp_timers *cp_timers_new(long capacity) {
    cp_timers *t = calloc(1, sizeof *t);
    CHECK(uv_loop_init(&t->loop));
    CHECK(uv_timer_init(&t->loop, &t->extra));
    t->timers = calloc((size_t)(capacity ? capacity : 1), sizeof(uv_timer_t *));
    t->capacity = capacity;
    return t;
}

void cp_timers_fill(cp_timers *t, long count) {
    uint64_t rng = 12345;
    for (long i = 0; i < count && t->count < t->capacity; i++) {
        uv_timer_t *h = malloc(sizeof *h);
        CHECK(uv_timer_init(&t->loop, h));
        CHECK(uv_timer_start(h, timer_noop, cp_rand_timeout_ms(&rng), 0));
        t->timers[t->count++] = h;
    }
}

double cp_timer_cancel(long n) {
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop));
    uv_timer_t *timers = calloc((size_t)n, sizeof(uv_timer_t));
    uint64_t rng = 12345;
    uint64_t t0 = cp_now_ns();
    for (long i = 0; i < n; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], timer_noop, cp_rand_timeout_ms(&rng), 0);
    }
    for (long i = 0; i < n; i++) uv_timer_stop(&timers[i]);
    uint64_t t1 = cp_now_ns();
    for (long i = 0; i < n; i++) uv_close((uv_handle_t *)&timers[i], NULL);
    CHECK(uv_run(&loop, UV_RUN_DEFAULT));
    CHECK(uv_loop_close(&loop));
    free(timers);
    return (double)(t1 - t0);
}

void cp_timers_destroy(cp_timers *t) {
    for (long i = 0; i < t->count; i++) uv_close((uv_handle_t *)t->timers[i], timer_free_cb);
    uv_close((uv_handle_t *)&t->extra, NULL);
    CHECK(uv_run(&t->loop, UV_RUN_DEFAULT));
    CHECK(uv_loop_close(&t->loop));
    free(t->timers);
    free(t);
}

/* timer_reschedule: n started timers, contiguous like cp_timer_cancel's, moved in place. */
struct cp_moves {
    uv_loop_t loop;
    uv_timer_t *timers;
    long n;
    uint64_t rng;
};

cp_moves *cp_moves_new(long n) {
    cp_moves *m = calloc(1, sizeof *m);
    CHECK(uv_loop_init(&m->loop));
    m->timers = calloc((size_t)(n ? n : 1), sizeof(uv_timer_t));
    m->n = n;
    m->rng = 12345;
    for (long i = 0; i < n; i++) {
        CHECK(uv_timer_init(&m->loop, &m->timers[i]));
        CHECK(uv_timer_start(&m->timers[i], timer_noop, cp_rand_timeout_ms(&m->rng), 0));
    }
    return m;
}

/* libuv's move: uv_timer_start on a started timer stops it (heap removal) and starts it again
   (heap insertion), which is also all uv_timer_again does, with the timer's repeat as timeout. */
double cp_moves_run(cp_moves *m, long rounds) {
    uint64_t t0 = cp_now_ns();
    for (long r = 0; r < rounds; r++)
        for (long i = 0; i < m->n; i++) uv_timer_start(&m->timers[i], timer_noop, cp_rand_timeout_ms(&m->rng), 0);
    return (double)(cp_now_ns() - t0);
}

void cp_moves_destroy(cp_moves *m) {
    for (long i = 0; i < m->n; i++) uv_close((uv_handle_t *)&m->timers[i], NULL);
    CHECK(uv_run(&m->loop, UV_RUN_DEFAULT));
    CHECK(uv_loop_close(&m->loop));
    free(m->timers);
    free(m);
}

typedef struct { long fired; } fire_ctx;

static void timer_fire_cb(uv_timer_t *h) {
    fire_ctx *c = h->loop->data;
    c->fired++;
}

double cp_timer_fire(long n, long spread_ms) {
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop));
    fire_ctx c = { 0 };
    loop.data = &c;
    uv_timer_t *timers = calloc((size_t)n, sizeof(uv_timer_t));
    uint64_t t0 = cp_now_ns();
    uv_update_time(&loop);
    for (long i = 0; i < n; i++) {
        uv_timer_init(&loop, &timers[i]);
        uv_timer_start(&timers[i], timer_fire_cb, (uint64_t)((i * spread_ms) / n), 0);
    }
    CHECK(uv_run(&loop, UV_RUN_DEFAULT));
    uint64_t t1 = cp_now_ns();
    if (c.fired != n) { fprintf(stderr, "cpeers: %ld of %ld timers fired\n", c.fired, n); abort(); }
    for (long i = 0; i < n; i++) uv_close((uv_handle_t *)&timers[i], NULL);
    CHECK(uv_run(&loop, UV_RUN_DEFAULT));
    CHECK(uv_loop_close(&loop));
    free(timers);
    return (double)(t1 - t0);
}

/* ------------------------------------------------------------------------------------------------ */
/* thread pool                                                                                       */

typedef struct { long done; uint64_t sum; } qw_ctx;
typedef struct { uv_work_t req; uint64_t value; } qw_req;

static void qw_work(uv_work_t *r) { qw_req *q = (qw_req *)r; q->value = q->value * 2 + 1; }
static void qw_after(uv_work_t *r, int status) {
    qw_req *q = (qw_req *)r;
    qw_ctx *c = r->loop->data;
    if (status == 0) c->sum += q->value;
    c->done++;
    free(q);
}

double cp_queue_work(long n) {
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop));
    qw_ctx c = { 0 };
    loop.data = &c;
    uint64_t t0 = cp_now_ns();
    for (long i = 0; i < n; i++) {
        qw_req *q = malloc(sizeof *q);
        q->value = (uint64_t)i;
        CHECK(uv_queue_work(&loop, &q->req, qw_work, qw_after));
    }
    CHECK(uv_run(&loop, UV_RUN_DEFAULT));
    uint64_t t1 = cp_now_ns();
    if (c.done != n) abort();
    CHECK(uv_loop_close(&loop));
    return (double)(t1 - t0);
}

/* ------------------------------------------------------------------------------------------------ */
/* chunked loop on an idle handle                                                                   */

typedef struct {
    uv_idle_t idle;
    uv_timer_t timer;
    long next, n;
    uint64_t budget_ns, period_ns, deadline_ns, sink;
    double *lateness;
    long lateness_count, lateness_cap;
} chunk_ctx;

static void chunk_timer_cb(uv_timer_t *t) {
    chunk_ctx *c = t->data;
    uint64_t now = cp_now_ns();
    if (c->lateness_count < c->lateness_cap) c->lateness[c->lateness_count++] = (double)((int64_t)(now - c->deadline_ns));
    c->deadline_ns = now + c->period_ns;
    uv_timer_start(&c->timer, chunk_timer_cb, c->period_ns / 1000000, 0);
}

static void chunk_idle_cb(uv_idle_t *h) {
    chunk_ctx *c = h->data;
    uint64_t end = cp_now_ns() + c->budget_ns;
    uint64_t sink = c->sink;
    long i = c->next;
    for (;;) {
        long stop = i + 64 < c->n ? i + 64 : c->n;
        for (; i < stop; i++) sink += cp_body((uint64_t)i);
        if (i == c->n || cp_now_ns() >= end) break;
    }
    c->next = i;
    c->sink = sink;
    if (i == c->n) {
        uv_idle_stop(&c->idle);
        if (c->period_ns) uv_timer_stop(&c->timer);
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double cp_chunked(long n, uint64_t budget_ns, uint64_t timer_period_ns, double *p99_ns, uint64_t *sink) {
    uv_loop_t loop;
    CHECK(uv_loop_init(&loop));
    chunk_ctx c = { .n = n, .budget_ns = budget_ns, .period_ns = timer_period_ns };
    c.lateness_cap = 1 << 20;
    c.lateness = timer_period_ns ? malloc(sizeof(double) * (size_t)c.lateness_cap) : NULL;
    CHECK(uv_idle_init(&loop, &c.idle));
    c.idle.data = &c;
    CHECK(uv_timer_init(&loop, &c.timer));
    c.timer.data = &c;
    uint64_t t0 = cp_now_ns();
    CHECK(uv_idle_start(&c.idle, chunk_idle_cb));
    if (timer_period_ns) {
        c.deadline_ns = cp_now_ns() + timer_period_ns;
        uv_update_time(&loop);
        CHECK(uv_timer_start(&c.timer, chunk_timer_cb, timer_period_ns / 1000000, 0));
    }
    CHECK(uv_run(&loop, UV_RUN_DEFAULT));
    uint64_t t1 = cp_now_ns();
    if (p99_ns) {
        *p99_ns = 0;
        if (c.lateness_count > 0) {
            qsort(c.lateness, (size_t)c.lateness_count, sizeof(double), cmp_double);
            long idx = (long)((double)(c.lateness_count - 1) * 0.99 + 0.5);
            *p99_ns = c.lateness[idx];
        }
    }
    free(c.lateness);
    uv_close((uv_handle_t *)&c.idle, NULL);
    uv_close((uv_handle_t *)&c.timer, NULL);
    CHECK(uv_run(&loop, UV_RUN_DEFAULT));
    CHECK(uv_loop_close(&loop));
    if (sink) *sink = c.sink;
    return (double)(t1 - t0);
}
