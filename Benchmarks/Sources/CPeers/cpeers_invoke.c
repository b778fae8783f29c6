#define _GNU_SOURCE
#include "cpeers_invoke.h"
#include <uv.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <linux/futex.h>

#define CHECK(expr) do { int _r = (expr); if (_r != 0) { fprintf(stderr, "cpeers_invoke: %s failed: %d\n", #expr, _r); abort(); } } while (0)

typedef struct inv_node {
    struct inv_node *next;
    uintptr_t arg, result;
    _Atomic uint32_t state; /* 0 waiting, 1 done, 2 the caller sleeps on it */
} inv_node;

struct cp_inv {
    uv_loop_t loop;
    uv_poll_t poll;
    uv_prepare_t prepare;
    int efd;
    pthread_t thread;
    pthread_mutex_t mu;
    inv_node *head, *tail;
    int wake_pending;
    int stopping;
};

static uint64_t inv_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void inv_closed(uv_handle_t *h) { (void)h; }

/* Runs what was posted; returns whether anything was. */
static int inv_drain(cp_inv *l) {
    pthread_mutex_lock(&l->mu);
    inv_node *n = l->head;
    l->head = l->tail = NULL;
    int stopping = l->stopping;
    pthread_mutex_unlock(&l->mu);
    int ran = n != NULL;
    while (n) {
        inv_node *next = n->next; /* read before the caller may reuse its node */
        n->result = n->arg + 1;
        if (atomic_exchange_explicit(&n->state, 1, memory_order_release) == 2)
            syscall(SYS_futex, &n->state, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        n = next;
    }
    if (stopping) {
        uv_close((uv_handle_t *)&l->poll, inv_closed);
        uv_close((uv_handle_t *)&l->prepare, inv_closed);
    }
    return ran;
}

static void inv_poll_cb(uv_poll_t *p, int status, int events) {
    (void)status; (void)events;
    cp_inv *l = p->data;
    uint64_t v;
    (void)!read(l->efd, &v, sizeof v);
    inv_drain(l);
}

/* Before a poll that may block: posts that arrived while the loop was awake sent no wake-up. */
static void inv_prepare_cb(uv_prepare_t *p) {
    cp_inv *l = p->data;
    for (;;) {
        pthread_mutex_lock(&l->mu);
        int empty = l->head == NULL;
        if (empty) l->wake_pending = 0;
        pthread_mutex_unlock(&l->mu);
        if (empty || !inv_drain(l)) return;
        if (l->stopping) return;
    }
}

static void *inv_thread(void *arg) {
    cp_inv *l = arg;
    CHECK(uv_run(&l->loop, UV_RUN_DEFAULT));
    return NULL;
}

cp_inv *cp_inv_start(void) {
    cp_inv *l = calloc(1, sizeof *l);
    CHECK(uv_loop_init(&l->loop));
    l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (l->efd < 0) abort();
    CHECK(uv_poll_init(&l->loop, &l->poll, l->efd));
    l->poll.data = l;
    CHECK(uv_poll_start(&l->poll, UV_READABLE, inv_poll_cb));
    CHECK(uv_prepare_init(&l->loop, &l->prepare));
    l->prepare.data = l;
    CHECK(uv_prepare_start(&l->prepare, inv_prepare_cb));
    uv_unref((uv_handle_t *)&l->prepare);
    CHECK(pthread_mutex_init(&l->mu, NULL));
    CHECK(pthread_create(&l->thread, NULL, inv_thread, l));
    return l;
}

static void inv_post(cp_inv *l, inv_node *n) {
    n->next = NULL;
    pthread_mutex_lock(&l->mu);
    if (l->tail) l->tail->next = n; else l->head = n;
    l->tail = n;
    int wake = !l->wake_pending;
    l->wake_pending = 1;
    pthread_mutex_unlock(&l->mu);
    if (wake) {
        uint64_t one = 1;
        (void)!write(l->efd, &one, sizeof one);
    }
}

void cp_inv_stop(cp_inv *l) {
    inv_node n = { .arg = 0 };
    pthread_mutex_lock(&l->mu);
    l->stopping = 1;
    l->wake_pending = 0; /* the stop always writes */
    pthread_mutex_unlock(&l->mu);
    inv_post(l, &n);
    CHECK(pthread_join(l->thread, NULL));
    CHECK(uv_loop_close(&l->loop));
    close(l->efd);
    pthread_mutex_destroy(&l->mu);
    free(l);
}

double cp_inv_roundtrip(cp_inv *l, long n, long spin_ns) {
    uintptr_t acc = 0;
    uint64_t t0 = inv_now();
    for (long i = 0; i < n; i++) {
        inv_node node = { .arg = (uintptr_t)i };
        atomic_store_explicit(&node.state, 0, memory_order_relaxed);
        inv_post(l, &node);
        if (spin_ns > 0) {
            uint64_t until = inv_now() + (uint64_t)spin_ns;
            while (atomic_load_explicit(&node.state, memory_order_acquire) != 1 && inv_now() < until)
                __builtin_ia32_pause();
        }
        uint32_t state = atomic_load_explicit(&node.state, memory_order_acquire);
        while (state != 1) {
            if (state == 0 && !atomic_compare_exchange_strong_explicit(&node.state, &state, 2, memory_order_acquire, memory_order_acquire))
                continue;
            syscall(SYS_futex, &node.state, FUTEX_WAIT_PRIVATE, 2, NULL, NULL, 0);
            state = atomic_load_explicit(&node.state, memory_order_acquire);
        }
        acc += node.result;
    }
    uint64_t t1 = inv_now();
    if (acc == 42) fprintf(stderr, " ");
    return (double)(t1 - t0);
}
