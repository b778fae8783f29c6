/*
 * fork(2) with an attached loop: the parent attaches, forks 4 children on the loop thread, and
 * goes on posting and running timers while each child calls uvloop_after_fork and runs posts
 * (from a thread of its own and from the loop thread) and timers of its own. No process runs
 * another's work: every callback checks the process it runs in against the one that posted it.
 * A child reports through its exit status. Also: a fork inside a callback of the loop,
 * uvloop_after_fork without a fork does nothing,
 * a child forked on another thread gets UVLOOP_ENOTLOOPTHREAD, and a child that skips it stops
 * with the message (SIGABRT).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

enum { FORK_CHILDREN = 4, FORK_POSTS = 2000, FORK_REPEATS = 5 };

/* One process's work: posts from a thread, posts from the loop thread, a one-shot timer and a
 * repeating timer, and value posts from the thread. Each callback's context is this struct; `pid` says whose it is. */
typedef struct {
    pid_t pid;
    uvloop_t *l;
    long thread_posts, own_posts, one_shots, repeats;
    long value_posts; /* uvloop_post_value from the thread: its ring has a wake-up of its own */
    long foreign; /* callbacks whose context belongs to another process: cross-talk */
    long out_of_order;
    uvloop_timer_t *repeating;
    int done;
} fork_work;

typedef struct {
    fork_work *work;
    long sequence;
} post_ctx;

static post_ctx post_contexts[FORK_POSTS];

static void check_owner(fork_work *w) {
    if (w->pid != getpid()) w->foreign++;
}

static void maybe_done(fork_work *w) {
    if (w->done || w->thread_posts < FORK_POSTS || w->value_posts < FORK_POSTS || w->own_posts < 1 || w->one_shots < 1 || w->repeats < FORK_REPEATS)
        return;
    w->done = 1;
    CHECK_EQ(uvloop_keep_alive(w->l, 0), 0); /* uv_run returns once nothing else is active */
}

static void on_thread_post(void *ctx) {
    post_ctx *p = ctx;
    fork_work *w = p->work;
    check_owner(w);
    if (p->sequence != w->thread_posts) w->out_of_order++;
    w->thread_posts++;
    maybe_done(w);
}

static void on_value_post(void *ctx, uint64_t value) {
    fork_work *w = ctx;
    check_owner(w);
    if ((long)value != w->value_posts) w->out_of_order++;
    w->value_posts++;
    maybe_done(w);
}

static void on_own_post(void *ctx) {
    fork_work *w = ctx;
    check_owner(w);
    w->own_posts++;
    maybe_done(w);
}

static void on_one_shot(void *ctx) {
    fork_work *w = ctx;
    check_owner(w);
    w->one_shots++;
    maybe_done(w);
}

static void on_repeat(void *ctx) {
    fork_work *w = ctx;
    check_owner(w);
    /* Exactly FORK_REPEATS runs, however long the posts take (under valgrind, seconds). */
    if (++w->repeats == FORK_REPEATS) CHECK_EQ(uvloop_timer_cancel(w->repeating), 1);
    maybe_done(w);
}

static void *post_from_thread(void *arg) {
    fork_work *w = arg;
    for (long i = 0; i < FORK_POSTS; i++) {
        post_contexts[i] = (post_ctx){.work = w, .sequence = i};
        CHECK_EQ(uvloop_post(w->l, on_thread_post, &post_contexts[i]), 0);
        CHECK_EQ(uvloop_post_value(w->l, on_value_post, w, (uint64_t)i), 0);
    }
    return NULL;
}

/* Starts a process's work on `l` (on its loop thread), runs the loop until it is done, and
 * checks the counts. */
static void run_work(fork_work *w, uvloop_t *l, uv_loop_t *uv) {
    memset(w, 0, sizeof *w);
    w->pid = getpid();
    w->l = l;
    CHECK_EQ(uvloop_keep_alive(l, 1), 0);
    pthread_t poster = thread_start(post_from_thread, w);
    CHECK_EQ(uvloop_post(l, on_own_post, w), 0);
    CHECK_EQ(uvloop_timer_start(l, 2000000u, 0, on_one_shot, w, NULL), 0);
    CHECK_EQ(uvloop_timer_start(l, 1000000u, 1000000u, on_repeat, w, &w->repeating), 0);
    uv_run(uv, UV_RUN_DEFAULT);
    thread_join(poster);
    uvloop_timer_release(w->repeating);
    CHECK_EQ(w->thread_posts, FORK_POSTS);
    CHECK_EQ(w->value_posts, FORK_POSTS);
    CHECK_EQ(w->own_posts, 1);
    CHECK_EQ(w->one_shots, 1);
    CHECK_EQ(w->repeats, FORK_REPEATS);
    CHECK_EQ(w->foreign, 0);
    CHECK_EQ(w->out_of_order, 0);
}

static fork_work parent_work, child_work;

static void four_children_and_the_parent_run_their_own_work(void) {
    fixture_t f;
    fixture_attach(&f);
    /* Something posted and a timer pending at the fork: they run in every process. */
    int before = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &before), 0);
    pid_t children[FORK_CHILDREN];
    fflush(stdout);
    fflush(stderr);
    for (int i = 0; i < FORK_CHILDREN; i++) {
        children[i] = fork();
        REQUIRE_EQ(children[i] >= 0, 1);
        if (children[i] == 0) {
            alarm(20);
            CHECK_EQ(uvloop_after_fork(f.l), 0);
            CHECK_EQ(uvloop_after_fork(f.l), 0); /* once reset, again does nothing */
            run_work(&child_work, f.l, &f.uv);
            CHECK_EQ(before, 1);
            fixture_teardown(&f);
            _exit(capi_failures() == 0 ? 0 : 1);
        }
    }
    /* The parent goes on while the children run. */
    run_work(&parent_work, f.l, &f.uv);
    CHECK_EQ(before, 1);
    for (int i = 0; i < FORK_CHILDREN; i++) {
        int status;
        while (waitpid(children[i], &status, 0) < 0) {
        }
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fprintf(stderr, "    child %d: %s %d\n", i, WIFEXITED(status) ? "exit status" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    fixture_teardown(&f);
}

/* A fork inside one of the loop's callbacks (a daemon respawning a worker from a signal or
 * timer callback): the child resets the loop there and goes on turning it when it returns. */
static pid_t callback_child = -1;
static fixture_t callback_fixture;

static void fork_in_a_callback(void *ctx) {
    (void)ctx;
    fflush(stdout);
    fflush(stderr);
    callback_child = fork();
    if (callback_child == 0) {
        alarm(20);
        CHECK_EQ(uvloop_after_fork(callback_fixture.l), 0);
    }
}

static void fork_inside_a_callback(void) {
    fixture_attach(&callback_fixture);
    CHECK_EQ(uvloop_post(callback_fixture.l, fork_in_a_callback, NULL), 0);
    uv_run(&callback_fixture.uv, UV_RUN_NOWAIT); /* the post runs, and forks */
    REQUIRE_EQ(callback_child >= 0, 1);
    if (callback_child == 0) {
        run_work(&child_work, callback_fixture.l, &callback_fixture.uv);
        fixture_teardown(&callback_fixture);
        _exit(capi_failures() == 0 ? 0 : 1);
    }
    run_work(&parent_work, callback_fixture.l, &callback_fixture.uv);
    int status;
    while (waitpid(callback_child, &status, 0) < 0) {
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    fixture_teardown(&callback_fixture);
}

static void after_fork_without_a_fork_does_nothing(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_after_fork(f.l), 0);
    CHECK_EQ(uvloop_after_fork(NULL), UVLOOP_EINVAL);
    int ran = 0;
    CHECK_EQ(uvloop_post(f.l, cb_count, &ran), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 1);
    CHECK_EQ(uvloop_detach(f.l), 0);
    CHECK_EQ(uvloop_after_fork(f.l), 0); /* no fork: nothing to reset, even detached */
    fixture_close_detached(&f);
}

/* A fork made on a thread that is not the loop thread: the child has no loop thread. */
static uvloop_t *off_thread_loop;

static void *fork_off_the_loop_thread(void *arg) {
    (void)arg;
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child == 0) _exit(uvloop_after_fork(off_thread_loop) == UVLOOP_ENOTLOOPTHREAD ? 0 : 1);
    int status = -1;
    while (waitpid(child, &status, 0) < 0) {
    }
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return NULL;
}

static void fork_on_another_thread_is_enotloopthread(void) {
    /* Under valgrind, a child forked on a thread other than the main one reports the main
     * thread's block of thread-local storage, which it has no thread for, as a possible leak. */
    if (capi_env_int("VALGRIND", 0)) return;
    fixture_t f;
    fixture_attach(&f);
    off_thread_loop = f.l;
    thread_join(thread_start(fork_off_the_loop_thread, NULL));
    fixture_teardown(&f);
}

/* A child that uses the loop without uvloop_after_fork stops with the message. The child of
 * expect_misuse_abort is itself a fork of the process that attached. */
static fixture_t stale;

static void post_in_a_child_without_after_fork(void) { uvloop_post(stale.l, cb_count, NULL); }

static void run_in_a_child_without_after_fork(void) { uv_run(&stale.uv, UV_RUN_NOWAIT); }

static void timer_in_a_child_without_after_fork(void) {
    uvloop_timer_start(stale.l, 1000, 0, cb_count, NULL, NULL);
}

static void child_without_after_fork_aborts(void) {
    fixture_attach(&stale);
    int ran = 0;
    CHECK_EQ(uvloop_post(stale.l, cb_count, &ran), 0); /* a turn has work to do */
    expect_misuse_abort(post_in_a_child_without_after_fork,
                        "uvloop_post in a child process of fork(2) whose loop was not reset for the child");
    expect_misuse_abort(timer_in_a_child_without_after_fork,
                        "uvloop_timer_start in a child process of fork(2) whose loop was not reset for the child");
    expect_misuse_abort(run_in_a_child_without_after_fork,
                        "a turn of the loop in a child process of fork(2) whose loop was not reset");
    /* The parent's loop is untouched. */
    uv_run(&stale.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 1);
    fixture_teardown(&stale);
}

const capi_test capi_fork_tests[] = {
    {"fork_four_children_and_the_parent_run_their_own_work", four_children_and_the_parent_run_their_own_work},
    {"fork_inside_a_callback", fork_inside_a_callback},
    {"fork_after_fork_without_a_fork_does_nothing", after_fork_without_a_fork_does_nothing},
    {"fork_on_another_thread_is_enotloopthread", fork_on_another_thread_is_enotloopthread},
    {"fork_child_without_after_fork_aborts", child_without_after_fork_aborts},
    {NULL, NULL},
};
