/*
 * A tiny test harness for the C API tests: checks that count failures (from any thread), latches,
 * threads and a loop fixture. No external framework.
 *
 * Each test runs in a child process of its own (see main.c), under a time limit, so that a hang
 * (a lost post, a missed wake-up) fails that test instead of the whole run.
 */
#ifndef CAPI_HARNESS_H
#define CAPI_HARNESS_H

#include <uvloop.h>

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- checks ---------------------------------------------------------------------------------- */

void capi_fail(const char *file, int line, const char *what);
void capi_fail_eq(const char *file, int line, const char *a, const char *b, long long va, long long vb);
void capi_fail_ge(const char *file, int line, const char *a, const char *b, uint64_t va, uint64_t vb);
/* Failures so far in this process (all threads). */
int capi_failures(void);

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) capi_fail(__FILE__, __LINE__, #cond);                                         \
    } while (0)
#define CHECK_EQ(a, b)                                                                             \
    do {                                                                                           \
        long long capi_a_ = (long long)(a), capi_b_ = (long long)(b);                              \
        if (capi_a_ != capi_b_) capi_fail_eq(__FILE__, __LINE__, #a, #b, capi_a_, capi_b_);        \
    } while (0)
/* a >= b, both uint64_t (clock readings). */
#define CHECK_GE_U64(a, b)                                                                         \
    do {                                                                                           \
        uint64_t capi_a_ = (uint64_t)(a), capi_b_ = (uint64_t)(b);                                 \
        if (!(capi_a_ >= capi_b_)) capi_fail_ge(__FILE__, __LINE__, #a, #b, capi_a_, capi_b_);     \
    } while (0)
/* A check the rest of the test cannot do without: stops the test (its process) at once. */
#define REQUIRE_EQ(a, b)                                                                           \
    do {                                                                                           \
        long long capi_a_ = (long long)(a), capi_b_ = (long long)(b);                              \
        if (capi_a_ != capi_b_) {                                                                  \
            capi_fail_eq(__FILE__, __LINE__, #a, #b, capi_a_, capi_b_);                            \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* ---- tests ----------------------------------------------------------------------------------- */

typedef struct {
    const char *name;
    void (*run)(void);
} capi_test;

/* Each test file's table, ended by {NULL, NULL}. */
extern const capi_test capi_loop_tests[];
extern const capi_test capi_post_tests[];
extern const capi_test capi_timer_tests[];
extern const capi_test capi_race_tests[];
/* Misuse that aborts, fork, version (test_misuse.c, test_fork.c, test_version.c). */
extern const capi_test capi_misuse_tests[];
extern const capi_test capi_fork_tests[];
extern const capi_test capi_version_tests[];
extern const capi_test capi_ref_tests[];
extern const capi_test capi_try_post_tests[];
extern const capi_test capi_value_post_tests[];
extern const capi_test capi_metrics_tests[];
extern const capi_test capi_manual_tests[];

/* A count from the environment (CAPI_<name>), for lighter runs under valgrind. */
int capi_env_int(const char *name, int fallback);

/* The monotonic clock in seconds: how long a test or a part of it took. */
double capi_seconds(void);

/* Runs `misuse` in a child process: it must print `expected` on stderr and die of SIGABRT. */
void expect_misuse_abort(void (*misuse)(void), const char *expected);

/* ---- latches and threads --------------------------------------------------------------------- */

/* Opens when counted down `count` times; wait blocks until then. */
typedef struct {
    pthread_mutex_t mutex;
    pthread_cond_t cond;
    int count;
} latch_t;

void latch_init(latch_t *latch, int count);
void latch_count_down(latch_t *latch);
void latch_wait(latch_t *latch);
void latch_destroy(latch_t *latch);

pthread_t thread_start(void *(*body)(void *), void *arg);
void thread_join(pthread_t thread);

/* ---- a loop owned by the test, with UVLoop attached ------------------------------------------ */

typedef struct {
    uv_loop_t uv;
    uvloop_t *l;
} fixture_t;

/* uv_loop_init + uvloop_attach on the calling thread (which becomes the loop thread). */
void fixture_attach(fixture_t *f);
/* The teardown of uvloop.h: detach, one NOWAIT turn, release, uv_loop_close == 0. */
void fixture_teardown(fixture_t *f);
/* After a detach already done: one NOWAIT turn, release, uv_loop_close == 0. */
void fixture_close_detached(fixture_t *f);

/* Callbacks that test bodies use often. ctx is the uvloop_t. */
void cb_keep_alive_off(void *l);
void cb_detach(void *l);
/* ctx is an int *: ++*ctx (on the loop thread). */
void cb_count(void *counter);

#endif
