/*
 * The loop's life from C: attach, detach, release, keep-alive, the thread rules, the error codes
 * and their messages, owned handles in a uv_walk, and attach/detach cycles.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <dirent.h>
#include <string.h>

/* ---- uvloop_strerror ------------------------------------------------------------------------- */

static void strerror_names_every_code(void) {
    const int codes[] = {UVLOOP_ESHUTDOWN, UVLOOP_EDETACHED,  UVLOOP_EINVAL,      UVLOOP_ENOTLOOPTHREAD,
                         UVLOOP_EDEADLOCK, UVLOOP_EALREADY,   UVLOOP_ENOTATTACHED};
    const size_t count = sizeof codes / sizeof codes[0];
    const char *messages[sizeof codes / sizeof codes[0]];
    for (size_t i = 0; i < count; i++) {
        /* Below libuv's range (all of libuv's codes are above -30000). */
        CHECK(codes[i] < -30000);
        messages[i] = uvloop_strerror(codes[i]);
        CHECK(messages[i] != NULL);
        if (!messages[i]) continue;
        CHECK(messages[i][0] != '\0');
        /* Not libuv's fallback for a code it does not know. */
        CHECK(strstr(messages[i], "Unknown") == NULL);
        CHECK(strcmp(messages[i], uv_strerror(UV_EINVAL)) != 0);
        /* Static: the same string each time. */
        CHECK(uvloop_strerror(codes[i]) == messages[i]);
        for (size_t j = 0; j < i; j++) CHECK(messages[j] && strcmp(messages[i], messages[j]) != 0);
    }
    CHECK(uvloop_strerror(0) != NULL);
    /* libuv's own codes are passed through: the same message as uv_strerror. */
    const int libuv_codes[] = {UV_EINVAL, UV_EBUSY, UV_EMFILE, UV_ENOMEM, UV_ETIMEDOUT, UV_EAGAIN};
    for (size_t i = 0; i < sizeof libuv_codes / sizeof libuv_codes[0]; i++) {
        const char *message = uvloop_strerror(libuv_codes[i]);
        CHECK(message != NULL);
        CHECK(message && strcmp(message, uv_strerror(libuv_codes[i])) == 0);
    }
}

/* ---- NULL arguments -------------------------------------------------------------------------- */

static void noop(void *ctx) { (void)ctx; }

static void null_arguments_are_einval(void) {
    uv_loop_t uv;
    REQUIRE_EQ(uv_loop_init(&uv), 0);
    uvloop_t *l = NULL;
    CHECK_EQ(uvloop_attach(NULL, &l), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_attach(&uv, NULL), UVLOOP_EINVAL);
    CHECK(l == NULL);

    CHECK_EQ(uvloop_detach(NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_release(NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_keep_alive(NULL, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_post(NULL, noop, NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_post_next_iteration(NULL, noop, NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_invoke(NULL, noop, NULL), UVLOOP_EINVAL);
    uvloop_timer_t *t = NULL;
    CHECK_EQ(uvloop_timer_start(NULL, 0, 0, noop, NULL, &t), UVLOOP_EINVAL);
    CHECK(t == NULL);
    CHECK_EQ(uvloop_timer_cancel(NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_timer_fire(NULL), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_timer_again(NULL, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_timer_is_pending(NULL), 0);
    uvloop_timer_release(NULL); /* ignored */
    CHECK_EQ(uvloop_is_loop_thread(NULL), 0);
    CHECK(uvloop_now(NULL) == 0);
    CHECK_EQ(uvloop_owns_handle(NULL), 0);

    /* The refused attaches left nothing behind: the loop attaches now. */
    REQUIRE_EQ(uvloop_attach(&uv, &l), 0);
    int ran = 0;
    CHECK_EQ(uvloop_post(l, NULL, &ran), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_post_next_iteration(l, NULL, &ran), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_invoke(l, NULL, &ran), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_timer_start(l, 0, 0, NULL, &ran, &t), UVLOOP_EINVAL);
    CHECK(t == NULL);
    CHECK_EQ(uvloop_timer_start(l, 0, 1000, NULL, &ran, NULL), UVLOOP_EINVAL);
    /* A NULL context is fine: UVLoop never reads it. */
    CHECK_EQ(uvloop_post(l, noop, NULL), 0);
    CHECK_EQ(uvloop_detach(l), 0);
    uv_run(&uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_release(l), 0);
    CHECK_EQ(uv_loop_close(&uv), 0);
    CHECK_EQ(ran, 0);
}

/* ---- attaching ------------------------------------------------------------------------------- */

static void second_attach_is_ealready(void) {
    fixture_t f;
    fixture_attach(&f);
    uvloop_t *second = NULL;
    CHECK_EQ(uvloop_attach(&f.uv, &second), UVLOOP_EALREADY);
    CHECK(second == NULL);
    /* The first attachment is untouched. */
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 1);
    /* Another uv_loop_t attaches independently. */
    fixture_t g;
    fixture_attach(&g);
    fixture_teardown(&g);
    fixture_teardown(&f);
}

static void attach_again_after_detach(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_detach(f.l), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_release(f.l), 0);
    /* The same uv_loop_t, not closed: UVLoop attaches to it again (uvloop_strerror's advice). */
    REQUIRE_EQ(uvloop_attach(&f.uv, &f.l), 0);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 1);
    fixture_teardown(&f);
}

/* ---- threads --------------------------------------------------------------------------------- */

typedef struct {
    uvloop_t *l;
    int is_loop_thread, rc_detach, rc_keep_on, rc_keep_off, rc_release;
    uint64_t now;
} other_thread_calls;

static void *call_loop_thread_functions(void *arg) {
    other_thread_calls *c = arg;
    c->is_loop_thread = uvloop_is_loop_thread(c->l);
    c->rc_detach = uvloop_detach(c->l);
    c->rc_keep_on = uvloop_keep_alive(c->l, 1);
    c->rc_keep_off = uvloop_keep_alive(c->l, 0);
    c->rc_release = uvloop_release(c->l);
    c->now = uvloop_now(c->l);
    return NULL;
}

static void loop_thread_functions_from_another_thread(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_is_loop_thread(f.l), 1);
    uint64_t before = uvloop_now(f.l);
    CHECK(before > 0);
    other_thread_calls c = {.l = f.l, .is_loop_thread = -1};
    thread_join(thread_start(call_loop_thread_functions, &c));
    CHECK_EQ(c.is_loop_thread, 0);
    CHECK_EQ(c.rc_detach, UVLOOP_ENOTLOOPTHREAD);
    CHECK_EQ(c.rc_keep_on, UVLOOP_ENOTLOOPTHREAD);
    CHECK_EQ(c.rc_keep_off, UVLOOP_ENOTLOOPTHREAD);
    CHECK_EQ(c.rc_release, UVLOOP_ENOTLOOPTHREAD);
    /* uvloop_now: any thread, monotonic. */
    CHECK_GE_U64(c.now, before);
    CHECK_GE_U64(uvloop_now(f.l), c.now);
    /* Nothing happened: still attached, keep-alive still off (uv_run returns), posts run. */
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 1);
    CHECK_EQ(uvloop_is_loop_thread(f.l), 1);
    fixture_teardown(&f);
}

/* ---- after detach ---------------------------------------------------------------------------- */

typedef struct {
    uvloop_t *l;
    int *ran;
    int rc_post, rc_next, rc_invoke, rc_timer, rc_release;
} detached_calls;

static void *call_detached_loop(void *arg) {
    detached_calls *c = arg;
    c->rc_post = uvloop_post(c->l, cb_count, c->ran);
    c->rc_next = uvloop_post_next_iteration(c->l, cb_count, c->ran);
    c->rc_invoke = uvloop_invoke(c->l, cb_count, c->ran);
    uvloop_timer_t *t = NULL;
    c->rc_timer = uvloop_timer_start(c->l, 0, 0, cb_count, c->ran, &t);
    if (t) uvloop_timer_release(t);
    /* Detached: the last user may release it from any thread. */
    c->rc_release = uvloop_release(c->l);
    return NULL;
}

/* uvloop_invoke after detach, on the loop thread: "UVLOOP_EDETACHED when the loop no longer
 * accepts work ... Whenever the result is not 0, fn did not run." */
static void invoke_on_the_loop_thread_after_detach_is_edetached(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_detach(f.l), 0);
    int ran = 0;
    CHECK_EQ(uvloop_invoke(f.l, cb_count, &ran), UVLOOP_EDETACHED);
    CHECK_EQ(ran, 0);
    fixture_close_detached(&f);
}

static void detached_loop_refuses_work(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_detach(f.l), 0);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), UVLOOP_EDETACHED);
    CHECK_EQ(uvloop_post_next_iteration(f.l, cb_count, &ran), UVLOOP_EDETACHED);
    uvloop_timer_t *t = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 0, 0, cb_count, &ran, &t), UVLOOP_EDETACHED);
    if (t) uvloop_timer_release(t);
    CHECK_EQ(uvloop_timer_start(f.l, 1000, 1000, cb_count, &ran, NULL), UVLOOP_EDETACHED);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), UVLOOP_EDETACHED);
    CHECK_EQ(uvloop_keep_alive(f.l, 0), UVLOOP_EDETACHED);
    CHECK_EQ(uvloop_detach(f.l), UVLOOP_EDETACHED);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    detached_calls c = {.l = f.l, .ran = &ran};
    thread_join(thread_start(call_detached_loop, &c));
    CHECK_EQ(c.rc_post, UVLOOP_EDETACHED);
    CHECK_EQ(c.rc_next, UVLOOP_EDETACHED);
    CHECK_EQ(c.rc_invoke, UVLOOP_EDETACHED);
    CHECK_EQ(c.rc_timer, UVLOOP_EDETACHED);
    CHECK_EQ(c.rc_release, 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uv_loop_close(&f.uv), 0);
    CHECK_EQ(ran, 0);
}

typedef struct {
    uvloop_t *l;
    int count;
} poster;

static void *post_hundred(void *arg) {
    poster *p = arg;
    for (int i = 0; i < 100; i++) CHECK_EQ(uvloop_post(p->l, cb_count, &p->count), 0);
    CHECK_EQ(uvloop_post_next_iteration(p->l, cb_count, &p->count), 0);
    return NULL;
}

static void detach_runs_posted_work_and_cancels_timers(void) {
    fixture_t f;
    fixture_attach(&f);
    int posted = 0, next = 0, timer_runs = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &posted), 0);
    CHECK_EQ(uvloop_post_next_iteration(f.l, cb_count, &next), 0);
    poster p = {.l = f.l};
    thread_join(thread_start(post_hundred, &p));
    uvloop_timer_t *due = NULL, *later = NULL, *repeating = NULL;
    CHECK_EQ(uvloop_timer_start(f.l, 0, 0, cb_count, &timer_runs, &due), 0);
    CHECK_EQ(uvloop_timer_start(f.l, 3600000000000ull, 0, cb_count, &timer_runs, &later), 0);
    CHECK_EQ(uvloop_timer_start(f.l, 1000000, 1000000, cb_count, &timer_runs, &repeating), 0);
    CHECK_EQ(uvloop_timer_is_pending(later), 1);
    /* The loop never turned: detach runs what was posted and cancels the timers. */
    CHECK_EQ(uvloop_detach(f.l), 0);
    CHECK_EQ(posted, 1);
    CHECK_EQ(next, 1);
    CHECK_EQ(p.count, 101);
    uvloop_timer_t *timers[] = {due, later, repeating};
    for (int i = 0; i < 3; i++) {
        CHECK_EQ(uvloop_timer_is_pending(timers[i]), 0);
        CHECK_EQ(uvloop_timer_cancel(timers[i]), 0);
        CHECK_EQ(uvloop_timer_fire(timers[i]), 0);
        CHECK_EQ(uvloop_timer_again(timers[i], 0), 0);
    }
    fixture_close_detached(&f);
    for (int i = 0; i < 3; i++) uvloop_timer_release(timers[i]);
    CHECK_EQ(timer_runs, 0);
}

typedef struct {
    uvloop_t *l;
    int before, after, refused_rc, rc_detach, is_loop_thread, late;
} inside;

static void detach_inside(void *arg) {
    inside *c = arg;
    c->rc_detach = uvloop_detach(c->l);
    /* From this call on, posting returns UVLOOP_EDETACHED. */
    c->refused_rc = uvloop_post(c->l, cb_count, &c->late);
    c->is_loop_thread = uvloop_is_loop_thread(c->l);
}

static void detach_from_inside_a_callback(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    inside c = {.l = f.l, .refused_rc = 1};
    uvloop_timer_t *t = NULL;
    int timer_runs = 0;
    CHECK_EQ(uvloop_timer_start(f.l, 3600000000000ull, 0, cb_count, &timer_runs, &t), 0);
    CHECK_EQ(uvloop_post(f.l, cb_count, &c.before), 0);
    CHECK_EQ(uvloop_post(f.l, detach_inside, &c), 0);
    CHECK_EQ(uvloop_post(f.l, cb_count, &c.after), 0); /* posted before the detach: runs */
    /* Keep-alive was on: uv_run returns because the detach closed UVLoop's handles. */
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(c.rc_detach, 0);
    CHECK_EQ(c.refused_rc, UVLOOP_EDETACHED);
    CHECK_EQ(c.is_loop_thread, 1);
    CHECK_EQ(c.before, 1);
    CHECK_EQ(c.after, 1);
    CHECK_EQ(c.late, 0);
    CHECK_EQ(uvloop_timer_is_pending(t), 0);
    CHECK_EQ(uvloop_detach(f.l), UVLOOP_EDETACHED);
    fixture_close_detached(&f);
    uvloop_timer_release(t);
    CHECK_EQ(timer_runs, 0);
}

static void release_while_attached_detaches(void) {
    fixture_t f;
    fixture_attach(&f);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    CHECK_EQ(uvloop_release(f.l), 0); /* on the loop thread: detaches first */
    CHECK_EQ(ran, 1);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uv_loop_close(&f.uv), 0);
}

/* ---- keep-alive ------------------------------------------------------------------------------ */

static void keep_alive_off_lets_uv_run_return(void) {
    fixture_t f;
    fixture_attach(&f);
    /* Off by default: nothing of the owner's is active, so uv_run returns at once. */
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    /* On twice, off once: off (a switch, not a count). */
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 0), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 0), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    fixture_teardown(&f);
}

/* With keep-alive off, UVLoop's pending timers and next-iteration work still keep the owner's
 * uv_run(UV_RUN_DEFAULT) running until they have run, as libuv's own timers would (the user's
 * guide, Embedding.md: "Pending timers and next-iteration work do keep the loop alive"). */
static void pending_work_keeps_uv_run_running(void) {
    fixture_t f;
    fixture_attach(&f);
    int timer_ran = 0, next_ran = 0;
    CHECK_EQ(uvloop_timer_start(f.l, 2000000, 0, cb_count, &timer_ran, NULL), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(timer_ran, 1);
    CHECK_EQ(uvloop_post_next_iteration(f.l, cb_count, &next_ran), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(next_ran, 1);
    fixture_teardown(&f);
}

static int keep_alive_posts;

typedef struct {
    uvloop_t *l;
    latch_t running;
    int count, by_detach, stop_rc, on_loop_thread;
} keep_alive_run;

static void opens_latch(void *arg) { latch_count_down(arg); }

static void count_then_stop(void *arg) {
    keep_alive_run *r = arg;
    if (!uvloop_is_loop_thread(r->l)) r->on_loop_thread = 0;
    if (++r->count == keep_alive_posts) r->stop_rc = r->by_detach ? uvloop_detach(r->l) : uvloop_keep_alive(r->l, 0);
}

static void *post_while_owner_runs(void *arg) {
    keep_alive_run *r = arg;
    latch_wait(&r->running); /* the owner is inside uv_run(UV_RUN_DEFAULT) */
    for (int i = 0; i < keep_alive_posts; i++) CHECK_EQ(uvloop_post(r->l, count_then_stop, r), 0);
    return NULL;
}

static void keep_alive_run_once(int by_detach) {
    keep_alive_posts = capi_env_int("KEEP_ALIVE_POSTS", 10000);
    fixture_t f;
    fixture_attach(&f);
    keep_alive_run r = {.l = f.l, .by_detach = by_detach, .stop_rc = 1, .on_loop_thread = 1};
    latch_init(&r.running, 1);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    CHECK_EQ(uvloop_post(f.l, opens_latch, &r.running), 0);
    pthread_t producer = thread_start(post_while_owner_runs, &r);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(producer);
    CHECK_EQ(r.count, keep_alive_posts);
    CHECK_EQ(r.stop_rc, 0);
    CHECK_EQ(r.on_loop_thread, 1);
    if (by_detach)
        fixture_close_detached(&f);
    else
        fixture_teardown(&f);
    latch_destroy(&r.running);
}

static void keep_alive_runs_posts_until_turned_off(void) { keep_alive_run_once(0); }
static void keep_alive_runs_posts_until_detached(void) { keep_alive_run_once(1); }

/* ---- owned handles --------------------------------------------------------------------------- */

typedef struct {
    int owned, others;
    const uv_handle_t *mine;
    int mine_owned;
} walk_counts;

static void count_handle(uv_handle_t *handle, void *arg) {
    walk_counts *w = arg;
    int owned = uvloop_owns_handle(handle);
    CHECK(owned == 0 || owned == 1);
    if (owned)
        w->owned++;
    else
        w->others++;
    if (handle == w->mine) w->mine_owned = owned;
}

static walk_counts walk(uv_loop_t *uv, const void *mine) {
    walk_counts w = {.mine = mine, .mine_owned = -1};
    uv_walk(uv, count_handle, &w);
    return w;
}

static void on_owner_timer(uv_timer_t *timer) { (void)timer; }

static void owns_handle_in_a_walk(void) {
    fixture_t f;
    fixture_attach(&f);
    uv_timer_t mine;
    CHECK_EQ(uv_timer_init(&f.uv, &mine), 0);
    CHECK_EQ(uv_timer_start(&mine, on_owner_timer, 3600 * 1000, 0), 0);
    CHECK_EQ(uvloop_owns_handle((uv_handle_t *)&mine), 0);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    walk_counts w = walk(&f.uv, &mine);
    CHECK(w.owned > 0);
    CHECK_EQ(w.others, 1);
    CHECK_EQ(w.mine_owned, 0);

    CHECK_EQ(uvloop_detach(f.l), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    w = walk(&f.uv, &mine);
    CHECK_EQ(w.owned, 0); /* nothing of UVLoop's is left */
    CHECK_EQ(w.others, 1);
    uv_close((uv_handle_t *)&mine, NULL);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    CHECK_EQ(uvloop_release(f.l), 0);
    CHECK_EQ(uv_loop_close(&f.uv), 0);
    CHECK_EQ(ran, 1);
}

static void forgotten_detach_is_ebusy(void) {
    fixture_t f;
    fixture_attach(&f);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uv_loop_close(&f.uv), UV_EBUSY);
    walk_counts w = walk(&f.uv, NULL);
    CHECK(w.owned > 0);
    CHECK_EQ(w.others, 0); /* everything the owner's walk finds is UVLoop's: "detach first" */
    /* Cleaning up: the loop is intact after the refused close. */
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    fixture_teardown(&f);
    CHECK_EQ(ran, 2);
}

/* ---- cycles ---------------------------------------------------------------------------------- */

static int open_descriptors(void) {
    DIR *dir = opendir("/proc/self/fd");
    if (!dir) return -1;
    int count = 0;
    while (readdir(dir)) count++;
    closedir(dir);
    return count;
}

static void attach_detach_close_cycles(void) {
    const int CYCLES = capi_env_int("CYCLES", 100);
    int fds_before = -1;
    int ran = 0, timer_runs = 0;
    uv_loop_t uv; /* the same storage each time: a detached address may be attached again */
    for (int i = 0; i < CYCLES; i++) {
        /* Counted after the first cycle: libuv opens its signal pipe once per process. */
        if (i == 1) fds_before = open_descriptors();
        REQUIRE_EQ(uv_loop_init(&uv), 0);
        uvloop_t *l = NULL;
        REQUIRE_EQ(uvloop_attach(&uv, &l), 0);
        CHECK_EQ(uvloop_post(l, cb_count, &ran), 0);
        CHECK_EQ(uvloop_post_next_iteration(l, cb_count, &ran), 0);
        uvloop_timer_t *t = NULL;
        CHECK_EQ(uvloop_timer_start(l, 3600000000000ull, 0, cb_count, &timer_runs, &t), 0);
        if (i % 3 == 0) CHECK_EQ(uvloop_keep_alive(l, 1), 0);
        uv_run(&uv, UV_RUN_NOWAIT);
        if (i % 2 == 0) {
            CHECK_EQ(uvloop_detach(l), 0);
            uv_run(&uv, UV_RUN_NOWAIT);
            CHECK_EQ(uvloop_release(l), 0);
        } else {
            CHECK_EQ(uvloop_release(l), 0); /* releasing on the loop thread detaches */
            uv_run(&uv, UV_RUN_NOWAIT);
        }
        CHECK_EQ(uvloop_timer_is_pending(t), 0);
        uvloop_timer_release(t);
        REQUIRE_EQ(uv_loop_close(&uv), 0);
    }
    CHECK_EQ(ran, 2 * CYCLES);
    CHECK_EQ(timer_runs, 0);
    /* No descriptor (eventfd, timerfd) outlives its loop. */
    CHECK_EQ(open_descriptors(), fds_before);
}

const capi_test capi_loop_tests[] = {
    {"strerror_names_every_code", strerror_names_every_code},
    {"null_arguments_are_einval", null_arguments_are_einval},
    {"second_attach_is_ealready", second_attach_is_ealready},
    {"attach_again_after_detach", attach_again_after_detach},
    {"loop_thread_functions_from_another_thread", loop_thread_functions_from_another_thread},
    {"detached_loop_refuses_work", detached_loop_refuses_work},
    {"invoke_on_the_loop_thread_after_detach_is_edetached", invoke_on_the_loop_thread_after_detach_is_edetached},
    {"detach_runs_posted_work_and_cancels_timers", detach_runs_posted_work_and_cancels_timers},
    {"detach_from_inside_a_callback", detach_from_inside_a_callback},
    {"release_while_attached_detaches", release_while_attached_detaches},
    {"keep_alive_off_lets_uv_run_return", keep_alive_off_lets_uv_run_return},
    {"pending_work_keeps_uv_run_running", pending_work_keeps_uv_run_running},
    {"keep_alive_runs_posts_until_turned_off", keep_alive_runs_posts_until_turned_off},
    {"keep_alive_runs_posts_until_detached", keep_alive_runs_posts_until_detached},
    {"owns_handle_in_a_walk", owns_handle_in_a_walk},
    {"forgotten_detach_is_ebusy", forgotten_detach_is_ebusy},
    {"attach_detach_close_cycles", attach_detach_close_cycles},
    {NULL, NULL},
};
