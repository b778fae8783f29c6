/*
 * A loop on a manual clock from C (uvloop_new_manual, uvloop_advance, uvloop_run_until_idle): C
 * code that uses UVLoop's timers tests its timeouts without sleeping. Every check here is on the
 * manual clock's readings, which are exact.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>

#define MS 1000000ull
#define SECOND (1000 * MS)

/* ---- the code under test: a session with an idle timeout, as a C program would write it ---- */

typedef struct {
    uvloop_t *l;
    uvloop_timer_t *idle;
    uint64_t timeout_ns, closed_at;
    int closed;
} session_t;

static void session_idle(void *ctx) {
    session_t *s = ctx;
    s->closed = 1;
    s->closed_at = uvloop_now(s->l);
}

static int session_open(session_t *s, uvloop_t *l, uint64_t timeout_ns) {
    memset(s, 0, sizeof *s);
    s->l = l;
    s->timeout_ns = timeout_ns;
    return uvloop_timer_start(l, timeout_ns, 0, session_idle, s, &s->idle);
}

static void session_activity(session_t *s) { uvloop_timer_again(s->idle, s->timeout_ns); }

static void session_close(session_t *s) {
    uvloop_timer_cancel(s->idle);
    uvloop_timer_release(s->idle);
}

/* ---- tests ---------------------------------------------------------------------------------- */

static void idle_timeout_without_sleeping(void) {
    uvloop_t *l = NULL;
    REQUIRE_EQ(uvloop_new_manual(&l), 0);
    CHECK(uvloop_now(l) == 0);
    session_t s;
    CHECK_EQ(session_open(&s, l, 30 * SECOND), 0);
    CHECK_EQ(uvloop_advance(l, 29 * SECOND), 0);
    CHECK_EQ(s.closed, 0);
    session_activity(&s); /* at 29 s: now due at 59 s */
    CHECK_EQ(uvloop_advance(l, 29 * SECOND), 0);
    CHECK_EQ(s.closed, 0);
    CHECK(uvloop_now(l) == 58 * SECOND);
    CHECK_EQ(uvloop_advance(l, 5 * SECOND), 0);
    CHECK_EQ(s.closed, 1);
    CHECK(s.closed_at == 59 * SECOND); /* exactly its deadline, not the end of the advance */
    CHECK(uvloop_now(l) == 63 * SECOND);
    session_close(&s);
    CHECK_EQ(uvloop_release(l), 0);
}

typedef struct {
    uvloop_t *l;
    uint64_t seen[16];
    int runs;
} ticks_t;

static void on_tick(void *ctx) {
    ticks_t *t = ctx;
    if (t->runs < 16) t->seen[t->runs] = uvloop_now(t->l);
    t->runs++;
}

static void repeating_timer_runs_at_each_deadline(void) {
    uvloop_t *l = NULL;
    REQUIRE_EQ(uvloop_new_manual(&l), 0);
    ticks_t t = {.l = l};
    uvloop_timer_t *timer = NULL;
    CHECK_EQ(uvloop_timer_start(l, 1 * SECOND, 1 * SECOND, on_tick, &t, &timer), 0);
    CHECK_EQ(uvloop_advance(l, 10 * SECOND), 0);
    CHECK_EQ(t.runs, 10);
    for (int i = 0; i < 10; i++) CHECK(t.seen[i] == (uint64_t)(i + 1) * SECOND);
    CHECK_EQ(uvloop_advance(l, 999 * MS), 0);
    CHECK_EQ(t.runs, 10);
    CHECK_EQ(uvloop_advance(l, 1 * MS), 0);
    CHECK_EQ(t.runs, 11);
    CHECK_EQ(uvloop_timer_cancel(timer), 1);
    uvloop_timer_release(timer);
    CHECK_EQ(uvloop_release(l), 0);
}

/* Work a callback posts, and timers it starts that fall due within the advance, run before it
 * returns; later ones wait. */
typedef struct {
    uvloop_t *l;
    int posted_ran, inner_ran, late_ran;
    uint64_t inner_at;
} chain_t;

static void chain_posted(void *ctx) { ((chain_t *)ctx)->posted_ran++; }

static void chain_inner(void *ctx) {
    chain_t *c = ctx;
    c->inner_ran++;
    c->inner_at = uvloop_now(c->l);
}

static void chain_late(void *ctx) { ((chain_t *)ctx)->late_ran++; }

static void chain_first(void *ctx) {
    chain_t *c = ctx;
    CHECK_EQ(uvloop_post(c->l, chain_posted, c), 0);
    CHECK_EQ(uvloop_timer_start(c->l, 2 * SECOND, 0, chain_inner, c, NULL), 0);
    CHECK_EQ(uvloop_timer_start(c->l, 20 * SECOND, 0, chain_late, c, NULL), 0);
    /* From a callback, advancing would re-enter the loop. */
    CHECK_EQ(uvloop_advance(c->l, 1), UV_EBUSY);
    CHECK_EQ(uvloop_run_until_idle(c->l), UV_EBUSY);
    CHECK_EQ(uvloop_release(c->l), UV_EBUSY);
}

static void work_started_by_callbacks_runs_within_the_advance(void) {
    uvloop_t *l = NULL;
    REQUIRE_EQ(uvloop_new_manual(&l), 0);
    chain_t c = {.l = l};
    CHECK_EQ(uvloop_timer_start(l, 1 * SECOND, 0, chain_first, &c, NULL), 0);
    CHECK_EQ(uvloop_advance(l, 5 * SECOND), 0);
    CHECK_EQ(c.posted_ran, 1);
    CHECK_EQ(c.inner_ran, 1);
    CHECK(c.inner_at == 3 * SECOND);
    CHECK_EQ(c.late_ran, 0);
    /* Released with a timer pending: it is cancelled, its callback never runs. */
    CHECK_EQ(uvloop_release(l), 0);
    CHECK_EQ(c.late_ran, 0);
}

typedef struct {
    uvloop_t *l;
    int post_rc, advance_rc, run_rc, release_rc, value_rc;
} other_thread_t;

static void count_value(void *ctx, uint64_t value) { *(int *)ctx += (int)value; }

static int from_thread_ran;

static void *from_other_thread(void *arg) {
    other_thread_t *o = arg;
    o->post_rc = uvloop_post(o->l, cb_count, &from_thread_ran);
    o->value_rc = uvloop_post_value(o->l, count_value, &from_thread_ran, 10);
    o->advance_rc = uvloop_advance(o->l, SECOND);
    o->run_rc = uvloop_run_until_idle(o->l);
    o->release_rc = uvloop_release(o->l);
    return NULL;
}

static void posts_from_other_threads_run_on_the_next_step(void) {
    uvloop_t *l = NULL;
    REQUIRE_EQ(uvloop_new_manual(&l), 0);
    other_thread_t o = {.l = l, .post_rc = -1, .advance_rc = -1, .run_rc = -1, .release_rc = -1, .value_rc = -1};
    from_thread_ran = 0;
    thread_join(thread_start(from_other_thread, &o));
    CHECK_EQ(o.post_rc, 0);
    CHECK_EQ(o.value_rc, 0);
    CHECK_EQ(o.advance_rc, UVLOOP_ENOTLOOPTHREAD);
    CHECK_EQ(o.run_rc, UVLOOP_ENOTLOOPTHREAD);
    CHECK_EQ(o.release_rc, UVLOOP_ENOTLOOPTHREAD);
    CHECK(uvloop_now(l) == 0);
    CHECK_EQ(from_thread_ran, 0);
    CHECK_EQ(uvloop_run_until_idle(l), 0);
    CHECK_EQ(from_thread_ran, 11);
    CHECK(uvloop_now(l) == 0); /* running until idle does not move the clock */
    CHECK_EQ(uvloop_release(l), 0);
}

static void manual_loop_errors(void) {
    CHECK_EQ(uvloop_new_manual(NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_advance(NULL, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_run_until_idle(NULL), UVLOOP_EINVAL);
    uvloop_t *l = NULL;
    REQUIRE_EQ(uvloop_new_manual(&l), 0);
    CHECK_EQ(uvloop_detach(l), UVLOOP_ENOTATTACHED);
    CHECK_EQ(uvloop_keep_alive(l, 1), UVLOOP_ENOTATTACHED);
    CHECK_EQ(uvloop_advance(l, UINT64_MAX), 0); /* to the end of time, and no further */
    CHECK(uvloop_now(l) == UINT64_MAX);
    CHECK_EQ(uvloop_advance(l, 1), 0);
    CHECK(uvloop_now(l) == UINT64_MAX);
    CHECK_EQ(uvloop_release(l), 0);
    /* An attached loop runs on its owner's uv_run and its system clock. */
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_advance(f.l, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_run_until_idle(f.l), UVLOOP_EINVAL);
    fixture_teardown(&f);
}

const capi_test capi_manual_tests[] = {
    {"idle_timeout_without_sleeping", idle_timeout_without_sleeping},
    {"repeating_timer_runs_at_each_deadline", repeating_timer_runs_at_each_deadline},
    {"work_started_by_callbacks_runs_within_the_advance", work_started_by_callbacks_runs_within_the_advance},
    {"posts_from_other_threads_run_on_the_next_step", posts_from_other_threads_run_on_the_next_step},
    {"manual_loop_errors", manual_loop_errors},
    {NULL, NULL},
};
