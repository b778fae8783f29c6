/*
 * Timer references (uvloop_timer_set_ref), after libuv's test-ref.c: an unreferenced timer does
 * not keep uv_run(UV_RUN_DEFAULT) running, a referenced one does, and the loop's liveness follows
 * every change (a reference set again, dropped from the timer's own callback or from another
 * thread, the last referenced timer cancelled). Each uv_run here returns only if liveness is
 * right: a wrong answer hangs the test (its child process times out) or runs a callback that
 * must not run.
 */
#define _GNU_SOURCE
#include "harness.h"

#define MS 1000000ull
#define HOUR (3600ull * 1000 * MS)

static void must_not_run(void *ctx) {
    (void)ctx;
    CHECK(!"an unreferenced timer ran after uv_run returned");
}

/* libuv's timer_ref2: a started, repeating, unreferenced timer; uv_run returns without it. */
static void unreferenced_timer_does_not_keep_uv_run_running(void) {
    fixture_t f;
    fixture_attach(&f);
    uvloop_timer_t *t = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 42 * MS, 42 * MS, must_not_run, NULL, &t), 0);
    CHECK_EQ(uvloop_timer_set_ref(t, 0), 1);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(uvloop_timer_is_pending(t), 1); /* unreferenced, not stopped */
    CHECK_EQ(uvloop_timer_cancel(t), 1);
    uvloop_timer_release(t);
    fixture_teardown(&f);
}

/* Referenced again, it keeps uv_run running until it has run. */
static void referenced_again_keeps_uv_run_running(void) {
    fixture_t f;
    fixture_attach(&f);
    int ran = 0;
    uvloop_timer_t *t = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 2 * MS, 0, cb_count, &ran, &t), 0);
    CHECK_EQ(uvloop_timer_set_ref(t, 0), 1);
    CHECK_EQ(uvloop_timer_set_ref(t, 0), 1); /* idempotent */
    CHECK_EQ(uvloop_timer_set_ref(t, 1), 1);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(ran, 1);
    CHECK_EQ(uvloop_timer_set_ref(t, 0), 0); /* ended */
    uvloop_timer_release(t);
    fixture_teardown(&f);
}

/* The libuv guide's ref-timer example: an unreferenced garbage-collection tick runs while a
 * referenced job keeps the loop running, and uv_run returns when the job is done. */
typedef struct {
    uvloop_t *l;
    int gc_runs, job_runs, gc_runs_at_job;
} gc_state;

static void on_gc(void *arg) { ((gc_state *)arg)->gc_runs++; }

static void on_job(void *arg) {
    gc_state *s = arg;
    s->job_runs++;
    s->gc_runs_at_job = s->gc_runs;
}

static void unreferenced_tick_runs_while_a_referenced_job_waits(void) {
    fixture_t f;
    fixture_attach(&f);
    gc_state s = {.l = f.l};
    uvloop_timer_t *gc = NULL, *job = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 0, 2 * MS, on_gc, &s, &gc), 0);
    CHECK_EQ(uvloop_timer_set_ref(gc, 0), 1);
    CHECK_EQ(uvloop_timer_start(f.l, 30 * MS, 0, on_job, &s, &job), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(s.job_runs, 1);
    CHECK(s.gc_runs_at_job >= 1); /* the tick, due at 0, ran before the job */
    CHECK_EQ(uvloop_timer_is_pending(gc), 1);
    CHECK_EQ(uvloop_timer_cancel(gc), 1);
    uvloop_timer_release(gc);
    uvloop_timer_release(job);
    fixture_teardown(&f);
}

/* libuv's unref_in_prepare_cb, for a timer: it drops its own reference from its callback. */
typedef struct {
    uvloop_timer_t *t;
    int runs;
} self_unref;

static void unref_on_third_run(void *arg) {
    self_unref *s = arg;
    if (++s->runs == 3) CHECK_EQ(uvloop_timer_set_ref(s->t, 0), 1);
}

static void timer_unreferences_itself_from_its_callback(void) {
    fixture_t f;
    fixture_attach(&f);
    self_unref s = {0};
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 1 * MS, unref_on_third_run, &s, &s.t), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    /* A run already due when the loop turns once more for its own work may still come (under
     * valgrind, say): what matters is that uv_run returned. */
    CHECK(s.runs >= 3);
    CHECK_EQ(uvloop_timer_cancel(s.t), 1);
    uvloop_timer_release(s.t);
    fixture_teardown(&f);
}

/* The last referenced timer is cancelled while an unreferenced one repeats: uv_run returns. */
typedef struct {
    uvloop_timer_t *referenced;
    int runs;
} cancel_state;

static void cancel_the_referenced_one(void *arg) {
    cancel_state *s = arg;
    if (++s->runs == 3) CHECK_EQ(uvloop_timer_cancel(s->referenced), 1);
}

static void cancelling_the_last_referenced_timer_lets_uv_run_return(void) {
    fixture_t f;
    fixture_attach(&f);
    cancel_state s = {0};
    uvloop_timer_t *tick = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, must_not_run, NULL, &s.referenced), 0);
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 1 * MS, cancel_the_referenced_one, &s, &tick), 0);
    CHECK_EQ(uvloop_timer_set_ref(tick, 0), 1);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK(s.runs >= 3);
    CHECK_EQ(uvloop_timer_cancel(tick), 1);
    uvloop_timer_release(tick);
    uvloop_timer_release(s.referenced);
    fixture_teardown(&f);
}

/* A referenced timer started later than the armed unreferenced one keeps the loop alive too. */
static void later_referenced_timer_keeps_uv_run_running(void) {
    fixture_t f;
    fixture_attach(&f);
    int ticks = 0, ran = 0;
    uvloop_timer_t *tick = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 1 * MS, cb_count, &ticks, &tick), 0);
    CHECK_EQ(uvloop_timer_set_ref(tick, 0), 1);
    CHECK_EQ(uvloop_timer_start(f.l, 20 * MS, 0, cb_count, &ran, NULL), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(ran, 1);
    CHECK(ticks >= 1);
    CHECK_EQ(uvloop_timer_cancel(tick), 1);
    uvloop_timer_release(tick);
    fixture_teardown(&f);
}

/* A repeating unreferenced timer whose callback takes longer than its interval is always due
 * again when its callback returns: that must not keep uv_run running either (libuv's loop does
 * not stay alive for a due unreferenced timer). Without the fix this test hangs. */
typedef struct {
    int ticks, job_ran;
} slow_tick_state;

static void slow_tick(void *arg) {
    ((slow_tick_state *)arg)->ticks++;
    uint64_t start = uv_hrtime();
    while (uv_hrtime() - start < 3 * MS) {
    }
}

static void slow_job(void *arg) { ((slow_tick_state *)arg)->job_ran++; }

static void a_due_unreferenced_timer_does_not_keep_uv_run_running(void) {
    fixture_t f;
    fixture_attach(&f);
    slow_tick_state s = {0};
    uvloop_timer_t *tick = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 1 * MS, slow_tick, &s, &tick), 0);
    CHECK_EQ(uvloop_timer_set_ref(tick, 0), 1);
    CHECK_EQ(uvloop_timer_start(f.l, 10 * MS, 0, slow_job, &s, NULL), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(s.job_ran, 1);
    CHECK(s.ticks >= 1);
    CHECK_EQ(uvloop_timer_cancel(tick), 1);
    uvloop_timer_release(tick);
    fixture_teardown(&f);
}

/* From another thread, the change reaches the loop as a post: uv_run returns once it arrives. */
typedef struct {
    uvloop_timer_t *t;
    int rc;
} set_ref_thread;

static void *unref_from_thread(void *arg) {
    set_ref_thread *s = arg;
    s->rc = uvloop_timer_set_ref(s->t, 0);
    return NULL;
}

static void set_ref_from_another_thread(void) {
    fixture_t f;
    fixture_attach(&f);
    set_ref_thread s = {.rc = -1};
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, must_not_run, NULL, &s.t), 0);
    thread_join(thread_start(unref_from_thread, &s));
    CHECK_EQ(s.rc, 1);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(uvloop_timer_is_pending(s.t), 1);
    CHECK_EQ(uvloop_timer_cancel(s.t), 1);
    uvloop_timer_release(s.t);
    fixture_teardown(&f);
}

static void set_ref_arguments(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_timer_set_ref(NULL, 0), UVLOOP_EINVAL);
    uvloop_timer_t *t = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, must_not_run, NULL, &t), 0);
    CHECK_EQ(uvloop_timer_set_ref(t, 0), 1);
    /* Detached with an unreferenced timer pending: cancelled, and uv_loop_close returns 0. */
    fixture_teardown(&f);
    CHECK_EQ(uvloop_timer_set_ref(t, 1), 0);
    uvloop_timer_release(t);
}

const capi_test capi_ref_tests[] = {
    {"unreferenced_timer_does_not_keep_uv_run_running", unreferenced_timer_does_not_keep_uv_run_running},
    {"referenced_again_keeps_uv_run_running", referenced_again_keeps_uv_run_running},
    {"unreferenced_tick_runs_while_a_referenced_job_waits", unreferenced_tick_runs_while_a_referenced_job_waits},
    {"timer_unreferences_itself_from_its_callback", timer_unreferences_itself_from_its_callback},
    {"cancelling_the_last_referenced_timer_lets_uv_run_return", cancelling_the_last_referenced_timer_lets_uv_run_return},
    {"later_referenced_timer_keeps_uv_run_running", later_referenced_timer_keeps_uv_run_running},
    {"a_due_unreferenced_timer_does_not_keep_uv_run_running", a_due_unreferenced_timer_does_not_keep_uv_run_running},
    {"set_ref_from_another_thread", set_ref_from_another_thread},
    {"set_ref_arguments", set_ref_arguments},
    {NULL, NULL},
};
