/*
 * Timers from C: one-shot and repeating, cancel, fire, again, is_pending, release, and deadlines
 * that are never early by uvloop_now. Tests bound their runs by events (a callback turns
 * keep-alive off), never by sleeping; where a test needs "this did not run", a later timer ends
 * the run, and nothing is asserted about how late anything ran.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>

#define MS 1000000ull
#define HOUR (3600ull * 1000 * MS)

/* ---- one-shot timers ------------------------------------------------------------------------- */

enum { SHOTS = 8 };

typedef struct {
    uvloop_t *l;
    uint64_t deadline[SHOTS];
    int ran[SHOTS];
    int order[SHOTS];
    int fired;
} shots_state;

static shots_state shots;

static void on_shot(void *ctx) {
    int index = (int)(uintptr_t)ctx;
    CHECK_EQ(uvloop_is_loop_thread(shots.l), 1);
    CHECK_GE_U64(uvloop_now(shots.l), shots.deadline[index]); /* never early */
    shots.ran[index]++;
    shots.order[shots.fired] = index;
    if (++shots.fired == SHOTS) CHECK_EQ(uvloop_keep_alive(shots.l, 0), 0);
}

static void one_shot_timers_never_run_early(void) {
    fixture_t f;
    fixture_attach(&f);
    memset(&shots, 0, sizeof shots);
    shots.l = f.l;
    const uint64_t delays[SHOTS] = {0, 1, 999999, 1 * MS, 30 * MS, 20 * MS, 50 * MS, 15 * MS};
    uvloop_timer_t *timers[SHOTS];
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    for (int i = 0; i < SHOTS; i++) {
        shots.deadline[i] = uvloop_now(f.l) + delays[i];
        CHECK_EQ(uvloop_timer_start(f.l, delays[i], 0, on_shot, (void *)(uintptr_t)i, &timers[i]), 0);
        CHECK_EQ(uvloop_timer_is_pending(timers[i]), 1);
    }
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    for (int i = 0; i < SHOTS; i++) {
        CHECK_EQ(shots.ran[i], 1);
        /* Ended: not pending, nothing left to cancel, fire or move. */
        CHECK_EQ(uvloop_timer_is_pending(timers[i]), 0);
        CHECK_EQ(uvloop_timer_cancel(timers[i]), 0);
        CHECK_EQ(uvloop_timer_fire(timers[i]), 0);
        CHECK_EQ(uvloop_timer_again(timers[i], 0), 0);
        uvloop_timer_release(timers[i]);
    }
    /* Deadlines in order: 0, 1 ns, 999,999 ns, 1 ms, 15 ms, 20 ms, 30 ms, 50 ms (the gaps leave room
     * for slow starts under valgrind: each start reads the clock a little later). */
    const int expected[SHOTS] = {0, 1, 2, 3, 7, 5, 4, 6};
    for (int i = 0; i < SHOTS; i++) CHECK_EQ(shots.order[i], expected[i]);
    fixture_teardown(&f);
}

static void same_deadline_runs_in_start_order(void) {
    fixture_t f;
    fixture_attach(&f);
    memset(&shots, 0, sizeof shots);
    shots.l = f.l;
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    /* Started back to back on the loop thread, outside uv_run: the loop's time does not move. */
    for (int i = 0; i < SHOTS; i++) {
        uint64_t delay = i < SHOTS / 2 ? 0 : 2 * MS;
        shots.deadline[i] = uvloop_now(f.l) + delay;
        CHECK_EQ(uvloop_timer_start(f.l, delay, 0, on_shot, (void *)(uintptr_t)i, NULL), 0);
    }
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    for (int i = 0; i < SHOTS; i++) CHECK_EQ(shots.order[i], i);
    fixture_teardown(&f);
}

/* ---- repeating timers ------------------------------------------------------------------------ */

typedef struct {
    uvloop_t *l;
    uvloop_timer_t *t;
    uint64_t first_deadline, interval;
    int runs, cancel_rc, cancel_again_rc, pending_after, stopped;
} repeating_state;

static void stop_run(void *arg) {
    repeating_state *r = arg;
    r->stopped = 1;
    CHECK_EQ(uvloop_keep_alive(r->l, 0), 0);
}

static void on_repeat(void *arg) {
    repeating_state *r = arg;
    /* The k-th run is never before first deadline + k intervals (a fixed grid; skips only delay). */
    CHECK_GE_U64(uvloop_now(r->l), r->first_deadline + (uint64_t)r->runs * r->interval);
    if (++r->runs == 5) {
        r->cancel_rc = uvloop_timer_cancel(r->t);
        r->cancel_again_rc = uvloop_timer_cancel(r->t);
        r->pending_after = uvloop_timer_is_pending(r->t);
        /* Ends the run well after the cancelled timer would have run again, had it. */
        CHECK_EQ(uvloop_timer_start(r->l, 20 * MS, 0, stop_run, r, NULL), 0);
    }
}

static void repeating_timer_cancelled_from_its_callback(void) {
    fixture_t f;
    fixture_attach(&f);
    repeating_state r = {.l = f.l, .interval = 1 * MS, .cancel_rc = -1, .cancel_again_rc = -1, .pending_after = -1};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    r.first_deadline = uvloop_now(f.l) + 2 * MS;
    CHECK_EQ(uvloop_timer_start(f.l, 2 * MS, r.interval, on_repeat, &r, &r.t), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(r.runs, 5);
    CHECK_EQ(r.cancel_rc, 1);
    CHECK_EQ(r.cancel_again_rc, 0);
    CHECK_EQ(r.pending_after, 0);
    CHECK_EQ(r.stopped, 1);
    CHECK_EQ(uvloop_timer_cancel(r.t), 0);
    uvloop_timer_release(r.t);
    fixture_teardown(&f);
}

/* ---- cancel, fire -------------------------------------------------------------------------- */

static void cancel_returns_1_then_0(void) {
    fixture_t f;
    fixture_attach(&f);
    int ran = 0;
    uvloop_timer_t *later = NULL, *due = NULL, *repeating = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, cb_count, &ran, &later), 0);
    CHECK_EQ(uvloop_timer_start(f.l, 0, 0, cb_count, &ran, &due), 0);
    CHECK_EQ(uvloop_timer_start(f.l, 0, 1 * MS, cb_count, &ran, &repeating), 0);
    uvloop_timer_t *timers[] = {later, due, repeating};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(uvloop_timer_is_pending(timers[i]), 1);
        CHECK_EQ(uvloop_timer_cancel(timers[i]), 1);
        CHECK_EQ(uvloop_timer_cancel(timers[i]), 0);
        CHECK_EQ(uvloop_timer_is_pending(timers[i]), 0);
        CHECK_EQ(uvloop_timer_fire(timers[i]), 0);
        CHECK_EQ(uvloop_timer_again(timers[i], 0), 0);
    }
    for (int i = 0; i < 5; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 0);
    fixture_teardown(&f);
    for (int i = 0; i < 3; i++) uvloop_timer_release(timers[i]);
    CHECK_EQ(ran, 0);
}

typedef struct {
    uvloop_t *l;
    uvloop_timer_t *t;
    int ran, fire_rc, ran_at_return;
} fire_state;

static void fired(void *arg) {
    fire_state *s = arg;
    CHECK_EQ(uvloop_is_loop_thread(s->l), 1);
    s->ran++;
}

static void fire_inside(void *arg) {
    fire_state *s = arg;
    s->fire_rc = uvloop_timer_fire(s->t);
    s->ran_at_return = s->ran;
}

static void fire_on_the_loop_thread_runs_inline(void) {
    fixture_t f;
    fixture_attach(&f);
    fire_state one = {.l = f.l}, rep = {.l = f.l}, in_cb = {.l = f.l, .fire_rc = -1};
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, fired, &one, &one.t), 0);
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, HOUR, fired, &rep, &rep.t), 0);
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, fired, &in_cb, &in_cb.t), 0);
    CHECK_EQ(uvloop_timer_fire(one.t), 1);
    CHECK_EQ(one.ran, 1); /* inline, no uv_run */
    CHECK_EQ(uvloop_timer_fire(one.t), 0);
    CHECK_EQ(uvloop_timer_is_pending(one.t), 0);
    CHECK_EQ(uvloop_timer_cancel(one.t), 0);
    /* A repeating timer that is fired ends. */
    CHECK_EQ(uvloop_timer_fire(rep.t), 1);
    CHECK_EQ(rep.ran, 1);
    CHECK_EQ(uvloop_timer_is_pending(rep.t), 0);
    CHECK_EQ(uvloop_timer_cancel(rep.t), 0);
    /* From inside a callback too. */
    CHECK_EQ(uvloop_post(f.l, fire_inside, &in_cb), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(in_cb.fire_rc, 1);
    CHECK_EQ(in_cb.ran_at_return, 1);
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(one.ran, 1);
    CHECK_EQ(rep.ran, 1);
    CHECK_EQ(in_cb.ran, 1);
    fixture_teardown(&f);
    uvloop_timer_release(one.t);
    uvloop_timer_release(rep.t);
    uvloop_timer_release(in_cb.t);
}

typedef struct {
    fire_state s;
    int rc1, seen, rc2, pending;
} fire_thread;

static void *fire_from_thread(void *arg) {
    fire_thread *ft = arg;
    ft->rc1 = uvloop_timer_fire(ft->s.t);
    ft->seen = ft->s.ran; /* written on the loop thread before fire returned */
    ft->rc2 = uvloop_timer_fire(ft->s.t);
    ft->pending = uvloop_timer_is_pending(ft->s.t);
    uvloop_timer_release(ft->s.t); /* any thread */
    CHECK_EQ(uvloop_post(ft->s.l, cb_keep_alive_off, ft->s.l), 0);
    return NULL;
}

static void fire_from_another_thread_waits(void) {
    fixture_t f;
    fixture_attach(&f);
    fire_thread ft = {.s = {.l = f.l}, .rc1 = -1, .rc2 = -1, .pending = -1};
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, fired, &ft.s, &ft.s.t), 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    pthread_t thread = thread_start(fire_from_thread, &ft);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(ft.rc1, 1);
    CHECK_EQ(ft.seen, 1);
    CHECK_EQ(ft.rc2, 0);
    CHECK_EQ(ft.pending, 0);
    CHECK_EQ(ft.s.ran, 1);
    fixture_teardown(&f);
}

/* ---- again ----------------------------------------------------------------------------------- */

typedef struct {
    uvloop_t *l;
    uvloop_timer_t *t;
    uint64_t not_before, interval;
    int runs, max_runs;
    int *done;
} moved;

static void on_moved(void *arg) {
    moved *m = arg;
    CHECK_GE_U64(uvloop_now(m->l), m->not_before + (uint64_t)m->runs * m->interval);
    if (++m->runs == m->max_runs) {
        if (m->interval) CHECK_EQ(uvloop_timer_cancel(m->t), 1);
        if (++*m->done == 3) CHECK_EQ(uvloop_keep_alive(m->l, 0), 0);
    }
}

static void again_moves_a_pending_timer(void) {
    fixture_t f;
    fixture_attach(&f);
    int done = 0;
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    /* Pushed back: from 1 ms to 30 ms. */
    moved back = {.l = f.l, .max_runs = 1, .done = &done};
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 0, on_moved, &back, &back.t), 0);
    back.not_before = uvloop_now(f.l) + 30 * MS;
    CHECK_EQ(uvloop_timer_again(back.t, 30 * MS), 1);
    /* Brought forward: from an hour to 1 ms. */
    moved forward = {.l = f.l, .max_runs = 1, .done = &done};
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, on_moved, &forward, &forward.t), 0);
    forward.not_before = uvloop_now(f.l) + 1 * MS;
    CHECK_EQ(uvloop_timer_again(forward.t, 1 * MS), 1);
    /* A repeating timer keeps its interval after the move. */
    moved rep = {.l = f.l, .interval = 2 * MS, .max_runs = 3, .done = &done};
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, rep.interval, on_moved, &rep, &rep.t), 0);
    rep.not_before = uvloop_now(f.l) + 1 * MS;
    CHECK_EQ(uvloop_timer_again(rep.t, 1 * MS), 1);
    CHECK_EQ(uvloop_timer_is_pending(back.t), 1);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(back.runs, 1);
    CHECK_EQ(forward.runs, 1);
    CHECK_EQ(rep.runs, 3);
    CHECK_EQ(uvloop_timer_again(back.t, 1 * MS), 0); /* ended */
    CHECK_EQ(uvloop_timer_again(rep.t, 1 * MS), 0);  /* cancelled */
    uvloop_timer_release(back.t);
    uvloop_timer_release(forward.t);
    uvloop_timer_release(rep.t);
    fixture_teardown(&f);
}

/* From another thread, "the move reaches the loop in order with the caller's posts": a thread
 * posts a callback that moves the timer an hour away, then moves it to now itself. In posting
 * order, the thread's own move comes last, and the timer runs. */
typedef struct {
    uvloop_t *l;
    uvloop_timer_t *t;
    uvloop_timer_t *guard;
    int ran, again_rc, inside_rc, stopped;
} again_order;

static void move_an_hour_away(void *arg) {
    again_order *a = arg;
    a->inside_rc = uvloop_timer_again(a->t, HOUR);
}

static void on_moved_timer(void *arg) {
    again_order *a = arg;
    a->ran++;
    CHECK_EQ(uvloop_timer_cancel(a->guard), 1); /* a pending timer keeps uv_run running */
    CHECK_EQ(uvloop_keep_alive(a->l, 0), 0);
}

static void give_up(void *arg) {
    again_order *a = arg;
    a->stopped = 1;
    uvloop_timer_cancel(a->t); /* a pending timer keeps uv_run running */
    CHECK_EQ(uvloop_keep_alive(a->l, 0), 0);
}

static void *post_then_again(void *arg) {
    again_order *a = arg;
    CHECK_EQ(uvloop_post(a->l, move_an_hour_away, a), 0);
    a->again_rc = uvloop_timer_again(a->t, 0);
    return NULL;
}

static void again_from_another_thread_is_ordered_with_its_posts(void) {
    fixture_t f;
    fixture_attach(&f);
    again_order a = {.l = f.l, .again_rc = -1, .inside_rc = -1};
    CHECK_EQ(uvloop_timer_start(f.l, HOUR, 0, on_moved_timer, &a, &a.t), 0);
    /* The thread's calls both arrive before the loop's next turn. */
    thread_join(thread_start(post_then_again, &a));
    CHECK_EQ(a.again_rc, 1);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    /* Ends the run if the timer is left an hour away (the failure). */
    CHECK_EQ(uvloop_timer_start(f.l, 1000 * MS, 0, give_up, &a, &a.guard), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(a.inside_rc, 1);
    CHECK_EQ(a.ran, 1);
    CHECK_EQ(a.stopped, 0);
    if (a.ran == 0) fprintf(stderr, "    the thread's uvloop_timer_again(t, 0) overtook its earlier uvloop_post\n");
    uvloop_timer_cancel(a.guard);
    uvloop_timer_release(a.guard);
    uvloop_timer_release(a.t);
    fixture_teardown(&f);
}

/* ---- starting and releasing ------------------------------------------------------------------ */

typedef struct {
    uvloop_t *l;
    int runs;
} counted;

static void count_to_three_then_detach(void *arg) {
    counted *c = arg;
    if (++c->runs == 3) CHECK_EQ(uvloop_detach(c->l), 0); /* cancels the timer */
}

static void stop_after_one(void *arg) {
    counted *c = arg;
    c->runs++;
    CHECK_EQ(uvloop_keep_alive(c->l, 0), 0);
}

static void start_with_null_out(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    counted one = {.l = f.l};
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 0, stop_after_one, &one, NULL), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(one.runs, 1);
    /* A repeating timer without a handle: only the detach (from its callback) ends it. */
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    counted rep = {.l = f.l};
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 1 * MS, count_to_three_then_detach, &rep, NULL), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(rep.runs, 3);
    fixture_close_detached(&f);
    CHECK_EQ(rep.runs, 3);
}

static void released_handle_does_not_cancel(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    counted c = {.l = f.l};
    uvloop_timer_t *t = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 1 * MS, 0, stop_after_one, &c, &t), 0);
    uvloop_timer_release(t);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(c.runs, 1);
    fixture_teardown(&f);
}

typedef struct {
    uvloop_t *l;
    latch_t ran;
    int runs, on_loop_thread, start_rc, pending_after, cancel_after;
    int cancel_rc, cancel_again_rc, pending_cancelled, cancelled_runs;
} thread_timers;

static void on_thread_timer(void *arg) {
    thread_timers *s = arg;
    s->runs++;
    s->on_loop_thread = uvloop_is_loop_thread(s->l);
    latch_count_down(&s->ran);
}

static void on_cancelled(void *arg) { ((thread_timers *)arg)->cancelled_runs++; }

static void *timers_from_thread(void *arg) {
    thread_timers *s = arg;
    uvloop_timer_t *t = NULL, *later = NULL;
    s->start_rc = uvloop_timer_start(s->l, 1 * MS, 0, on_thread_timer, s, &t);
    CHECK_EQ(uvloop_timer_start(s->l, HOUR, 0, on_cancelled, s, &later), 0);
    s->cancel_rc = uvloop_timer_cancel(later);
    s->cancel_again_rc = uvloop_timer_cancel(later);
    s->pending_cancelled = uvloop_timer_is_pending(later);
    uvloop_timer_release(later);
    latch_wait(&s->ran);
    s->pending_after = uvloop_timer_is_pending(t);
    s->cancel_after = uvloop_timer_cancel(t);
    uvloop_timer_release(t);
    CHECK_EQ(uvloop_post(s->l, cb_keep_alive_off, s->l), 0);
    return NULL;
}

static void timers_from_another_thread(void) {
    fixture_t f;
    fixture_attach(&f);
    thread_timers s = {.l = f.l, .start_rc = -1, .pending_after = -1, .cancel_after = -1, .cancel_rc = -1,
                       .cancel_again_rc = -1, .pending_cancelled = -1};
    latch_init(&s.ran, 1);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    pthread_t thread = thread_start(timers_from_thread, &s);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(s.start_rc, 0);
    CHECK_EQ(s.runs, 1);
    CHECK_EQ(s.on_loop_thread, 1);
    CHECK_EQ(s.pending_after, 0);
    CHECK_EQ(s.cancel_after, 0);
    CHECK_EQ(s.cancel_rc, 1);
    CHECK_EQ(s.cancel_again_rc, 0);
    CHECK_EQ(s.pending_cancelled, 0);
    fixture_teardown(&f);
    CHECK_EQ(s.cancelled_runs, 0);
    latch_destroy(&s.ran);
}

static void end_of_time_delays(void) {
    fixture_t f;
    fixture_attach(&f);
    int ran = 0;
    uvloop_timer_t *t = NULL, *rep = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, UINT64_MAX, 0, cb_count, &ran, &t), 0);
    CHECK_EQ(uvloop_timer_start(f.l, UINT64_MAX, UINT64_MAX, cb_count, &ran, &rep), 0);
    CHECK_EQ(uvloop_timer_again(t, UINT64_MAX), 1);
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_timer_is_pending(t), 1);
    CHECK_EQ(uvloop_timer_is_pending(rep), 1);
    CHECK_EQ(uvloop_timer_cancel(t), 1);
    CHECK_EQ(uvloop_timer_cancel(rep), 1);
    CHECK_EQ(ran, 0);
    uvloop_timer_release(t);
    uvloop_timer_release(rep);
    fixture_teardown(&f);
}

const capi_test capi_timer_tests[] = {
    {"one_shot_timers_never_run_early", one_shot_timers_never_run_early},
    {"same_deadline_runs_in_start_order", same_deadline_runs_in_start_order},
    {"repeating_timer_cancelled_from_its_callback", repeating_timer_cancelled_from_its_callback},
    {"cancel_returns_1_then_0", cancel_returns_1_then_0},
    {"fire_on_the_loop_thread_runs_inline", fire_on_the_loop_thread_runs_inline},
    {"fire_from_another_thread_waits", fire_from_another_thread_waits},
    {"again_moves_a_pending_timer", again_moves_a_pending_timer},
    {"again_from_another_thread_is_ordered_with_its_posts", again_from_another_thread_is_ordered_with_its_posts},
    {"start_with_null_out", start_with_null_out},
    {"released_handle_does_not_cancel", released_handle_does_not_cancel},
    {"timers_from_another_thread", timers_from_another_thread},
    {"end_of_time_delays", end_of_time_delays},
    {NULL, NULL},
};
