/*
 * The C API's key concurrency rule: while other threads post, the loop thread detaches, and
 * every post either ran exactly once or returned an error. Nothing accepted is lost, nothing
 * runs twice, and the loop closes cleanly. Repeated for many rounds (CAPI_RACE_ROUNDS, 200 by
 * default), alternating a detach outside UVLoop's callbacks with one from inside a callback.
 * Threads meet through atomics and joins, never through sleeps.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>

enum { RACE_PRODUCERS = 4 };

/* A callback's context: kind (post or next iteration) << 48 | producer << 40 | sequence. */
#define KIND_POST 0ull
#define KIND_NEXT 1ull

typedef struct {
    int id;
    /* The producer's own counts. */
    long accepted_posts, accepted_next, refused;
    int bad_rc;
} producer_t;

typedef struct {
    uvloop_t *l;
    atomic_int started; /* producers with at least one accepted post */
    atomic_int invoker_started;
    /* The loop thread's counts (written only by callbacks, on the loop thread). */
    long ran_posts[RACE_PRODUCERS], ran_next[RACE_PRODUCERS], next_seq[RACE_PRODUCERS];
    long out_of_order, off_thread;
    long invokes_accepted, invoke_runs;
    int invoke_bad_rc;
    int detach_rc;
} race_state;

static race_state race;

static void on_race_post(void *ctx) {
    uint64_t value = (uint64_t)(uintptr_t)ctx;
    int kind = (int)(value >> 48), who = (int)((value >> 40) & 0xff);
    long seq = (long)(value & 0xffffffffffull);
    if (!uvloop_is_loop_thread(race.l)) race.off_thread++;
    if (kind == (int)KIND_POST) {
        /* Per-thread order: a lost post or one run twice breaks the sequence. */
        if (seq != race.next_seq[who]) race.out_of_order++;
        race.next_seq[who] = seq + 1;
        race.ran_posts[who]++;
    } else {
        race.ran_next[who]++;
    }
}

static void *produce(void *arg) {
    producer_t *p = arg;
    uint64_t post_seq = 0, next_seq = 0;
    for (uint64_t i = 0;; i++) {
        int rc;
        if (i % 8 == 7) {
            uint64_t ctx = (KIND_NEXT << 48) | ((uint64_t)p->id << 40) | next_seq;
            rc = uvloop_post_next_iteration(race.l, on_race_post, (void *)(uintptr_t)ctx);
            if (rc == 0) next_seq++, p->accepted_next++;
        } else {
            uint64_t ctx = (KIND_POST << 48) | ((uint64_t)p->id << 40) | post_seq;
            rc = uvloop_post(race.l, on_race_post, (void *)(uintptr_t)ctx);
            if (rc == 0) {
                if (post_seq++ == 0) atomic_fetch_add(&race.started, 1);
                p->accepted_posts++;
            }
        }
        if (rc != 0) {
            if (rc != UVLOOP_EDETACHED) p->bad_rc = rc;
            p->refused++;
            break;
        }
    }
    return NULL;
}

static void on_invoke(void *ctx) {
    (void)ctx;
    race.invoke_runs++;
}

static void *invoke_until_refused(void *arg) {
    (void)arg;
    for (int first = 1;; first = 0) {
        int rc = uvloop_invoke(race.l, on_invoke, NULL);
        if (rc != 0) {
            if (rc != UVLOOP_EDETACHED) race.invoke_bad_rc = rc;
            if (first) atomic_fetch_add(&race.invoker_started, 1);
            break;
        }
        race.invokes_accepted++; /* this thread's count; read after the join */
        if (first) atomic_fetch_add(&race.invoker_started, 1);
    }
    return NULL;
}

static void detach_in_callback(void *l) { race.detach_rc = uvloop_detach(l); }

static int race_round(int round) {
    int failures_before = capi_failures();
    fixture_t f;
    fixture_attach(&f);
    memset(&race, 0, sizeof race);
    race.l = f.l;
    race.detach_rc = 1;
    /* Nothing of the owner's is active: without keep-alive, uv_run would not turn at all. */
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    producer_t producers[RACE_PRODUCERS];
    pthread_t threads[RACE_PRODUCERS + 1];
    for (int i = 0; i < RACE_PRODUCERS; i++) {
        producers[i] = (producer_t){.id = i};
        threads[i] = thread_start(produce, &producers[i]);
    }
    threads[RACE_PRODUCERS] = thread_start(invoke_until_refused, NULL);
    /* Turn the loop until every producer has had a post accepted and the invoker is waiting or
     * done: the detach then lands in the middle of continuous posting. */
    while (atomic_load(&race.started) < RACE_PRODUCERS || atomic_load(&race.invoker_started) < 1)
        uv_run(&f.uv, UV_RUN_NOWAIT);
    if (round % 2 == 0) {
        race.detach_rc = uvloop_detach(f.l);
    } else {
        CHECK_EQ(uvloop_post(f.l, detach_in_callback, f.l), 0);
        while (race.detach_rc == 1) uv_run(&f.uv, UV_RUN_NOWAIT);
    }
    CHECK_EQ(race.detach_rc, 0);
    for (int i = 0; i <= RACE_PRODUCERS; i++) thread_join(threads[i]);

    /* Everything accepted ran by the time detach returned, exactly once. */
    for (int i = 0; i < RACE_PRODUCERS; i++) {
        producer_t *p = &producers[i];
        CHECK_EQ(p->bad_rc, 0);
        CHECK_EQ(p->refused, 1);
        CHECK(p->accepted_posts > 0);
        CHECK_EQ(race.ran_posts[i], p->accepted_posts);
        CHECK_EQ(race.next_seq[i], p->accepted_posts);
        CHECK_EQ(race.ran_next[i], p->accepted_next);
    }
    CHECK_EQ(race.out_of_order, 0);
    CHECK_EQ(race.off_thread, 0);
    CHECK_EQ(race.invoke_bad_rc, 0);
    CHECK_EQ(race.invoke_runs, race.invokes_accepted);

    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_release(f.l), 0);
    CHECK_EQ(uv_loop_close(&f.uv), 0);
    if (capi_failures() != failures_before) {
        fprintf(stderr, "    in round %d (detach %s)\n", round, round % 2 == 0 ? "outside callbacks" : "from a callback");
        return 0;
    }
    return 1;
}

/* Up to CAPI_RACE_ROUNDS rounds (200), each a detach landing in the middle of continuous posting.
 * On a loaded machine a round takes many times as long as on an idle one (five threads post and
 * invoke, sharing the CPUs with everything else), so after CAPI_RACE_SECONDS (15) the test stops
 * with the rounds it has, at least 20, well inside the runner's time limit: fewer rounds under
 * load rather than a timeout that says nothing about the library. */
static void detach_while_threads_post(void) {
    int rounds = capi_env_int("RACE_ROUNDS", 200);
    int budget = capi_env_int("RACE_SECONDS", 15);
    double start = capi_seconds();
    for (int round = 0; round < rounds; round++) {
        if (!race_round(round)) return; /* the first failing round tells enough */
        if (round + 1 >= 20 && round + 1 < rounds && capi_seconds() - start > budget) {
            fprintf(stderr, "    stopped after %d of %d rounds: %.1f s\n", round + 1, rounds, capi_seconds() - start);
            return;
        }
    }
}

const capi_test capi_race_tests[] = {
    {"detach_while_threads_post", detach_while_threads_post},
    {NULL, NULL},
};
