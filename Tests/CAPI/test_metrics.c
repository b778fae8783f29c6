/*
 * Loop health from C: uvloop_metrics (Swift's Loop.metrics()) and the stall callback
 * (setStallHandler). A stall is made by a callback that spins on the clock for 60
 * milliseconds: nothing here waits for time to pass.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>

#define MS 1000000ull
#define HOUR (3600ull * 1000 * MS)

static void metrics_count_turns_time_and_waiting_work(void) {
    fixture_t f;
    fixture_attach(&f);
    uvloop_metrics_t m;
    memset(&m, 0xff, sizeof m);
    CHECK_EQ(uvloop_metrics(f.l, &m), 0);
    CHECK(m.iterations == 0); /* before the first turn */
    for (int i = 0; i < 8; i++) CHECK(m.reserved[i] == 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0); /* so that UV_RUN_NOWAIT turns */
    uvloop_timer_t *timers[3];
    for (int i = 0; i < 3; i++) CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, cb_count, NULL, &timers[i]), 0);
    for (int i = 0; i < 5; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_metrics(f.l, &m), 0);
    CHECK(m.iterations >= 5);
    CHECK(m.busy_ns + m.idle_ns > 0);
    CHECK(m.timers == 3);
    CHECK(m.posted == 0);
    CHECK(m.next_iteration == 0);
    CHECK(m.chunked_loops == 0);
    CHECK(m.inbox_messages == 0);
    uvloop_metrics_t later;
    for (int i = 0; i < 3; i++) {
        uvloop_timer_cancel(timers[i]);
        uvloop_timer_release(timers[i]);
    }
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_metrics(f.l, &later), 0);
    CHECK(later.iterations > m.iterations);
    CHECK(later.busy_ns >= m.busy_ns);
    CHECK(later.idle_ns >= m.idle_ns);
    CHECK(later.timers == 0);
    CHECK_EQ(uvloop_metrics(NULL, &m), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_metrics(f.l, NULL), UVLOOP_EINVAL);
    fixture_teardown(&f);
}

/* From another thread, any time: the figures only grow. */
typedef struct {
    uvloop_t *l;
    atomic_int stop;
    int readings, went_back;
} reader_state;

static void *read_metrics(void *arg) {
    reader_state *r = arg;
    uvloop_metrics_t previous = {0}, m;
    do {
        CHECK_EQ(uvloop_metrics(r->l, &m), 0);
        if (m.iterations < previous.iterations || m.busy_ns < previous.busy_ns) r->went_back++;
        previous = m;
        r->readings++;
    } while (!atomic_load(&r->stop));
    return NULL;
}

static void metrics_from_another_thread(void) {
    fixture_t f;
    fixture_attach(&f);
    reader_state r = {.l = f.l};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    pthread_t thread = thread_start(read_metrics, &r);
    for (int i = 0; i < 200; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    atomic_store(&r.stop, 1);
    thread_join(thread);
    CHECK(r.readings > 0);
    CHECK_EQ(r.went_back, 0);
    fixture_teardown(&f);
}

/* ---- stalls --------------------------------------------------------------------------------- */

typedef struct {
    uvloop_t *l;
    int stalls, on_loop_thread;
    uvloop_stall_t last;
} stall_state;

static void on_stall(void *ctx, const uvloop_stall_t *stall) {
    stall_state *s = ctx;
    s->stalls++;
    s->on_loop_thread = uvloop_is_loop_thread(s->l);
    s->last = *stall;
}

static void spin_60ms(void *ctx) {
    (void)ctx;
    uint64_t start = uv_hrtime();
    while (uv_hrtime() - start < 60 * MS) {
    }
}

static void stall_callback_reports_a_long_turn(void) {
    fixture_t f;
    fixture_attach(&f);
    stall_state s = {.l = f.l};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    CHECK_EQ(uvloop_set_stall_cb(f.l, 50 * MS, on_stall, &s), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT); /* a short turn: not reported */
    CHECK_EQ(s.stalls, 0);
    CHECK_EQ(uvloop_post(f.l, spin_60ms, NULL), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(s.stalls, 1);
    CHECK_EQ(s.on_loop_thread, 1);
    CHECK_GE_U64(s.last.duration_ns, 60 * MS);
    CHECK(s.last.posted_jobs >= 1);
    /* Removed: a long turn is no longer reported. */
    CHECK_EQ(uvloop_set_stall_cb(f.l, 0, NULL, NULL), 0);
    CHECK_EQ(uvloop_post(f.l, spin_60ms, NULL), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(s.stalls, 1);
    fixture_teardown(&f);
}

typedef struct {
    stall_state *s;
    int rc_set, rc_post;
} stall_setter;

static void *set_then_stall(void *arg) {
    stall_setter *t = arg;
    t->rc_set = uvloop_set_stall_cb(t->s->l, 50 * MS, on_stall, t->s);
    /* In order with this thread's posts: the callback is in place when the spin runs. */
    t->rc_post = uvloop_post(t->s->l, spin_60ms, NULL);
    return NULL;
}

static void stall_callback_set_from_another_thread_is_ordered_with_its_posts(void) {
    fixture_t f;
    fixture_attach(&f);
    stall_state s = {.l = f.l};
    stall_setter t = {.s = &s, .rc_set = -1, .rc_post = -1};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    thread_join(thread_start(set_then_stall, &t));
    CHECK_EQ(t.rc_set, 0);
    CHECK_EQ(t.rc_post, 0);
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(s.stalls, 1);
    fixture_teardown(&f);
}

static void stall_callback_errors(void) {
    fixture_t f;
    fixture_attach(&f);
    stall_state s = {.l = f.l};
    CHECK_EQ(uvloop_set_stall_cb(NULL, 1 * MS, on_stall, &s), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_set_stall_cb(f.l, 999, on_stall, &s), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_set_stall_cb(f.l, 1000, on_stall, &s), 0);
    CHECK_EQ(uvloop_detach(f.l), 0);
    CHECK_EQ(uvloop_set_stall_cb(f.l, 1 * MS, on_stall, &s), UVLOOP_EDETACHED);
    uvloop_metrics_t m;
    CHECK_EQ(uvloop_metrics(f.l, &m), 0); /* the last figures stay readable */
    fixture_close_detached(&f);
}

const capi_test capi_metrics_tests[] = {
    {"metrics_count_turns_time_and_waiting_work", metrics_count_turns_time_and_waiting_work},
    {"metrics_from_another_thread", metrics_from_another_thread},
    {"stall_callback_reports_a_long_turn", stall_callback_reports_a_long_turn},
    {"stall_callback_set_from_another_thread_is_ordered_with_its_posts", stall_callback_set_from_another_thread_is_ordered_with_its_posts},
    {"stall_callback_errors", stall_callback_errors},
    {NULL, NULL},
};
