/*
 * Posting from C: order per thread, next-iteration work, invoke (inline on the loop thread,
 * waiting from another thread, a cycle of invokes between two loops).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>

/* ---- order ----------------------------------------------------------------------------------- */

enum { PRODUCERS = 3, OWN = PRODUCERS /* the loop thread's own index */ };

typedef struct {
    uvloop_t *l;
    int per_thread;  /* posts by each producer and by the loop thread */
    int next[PRODUCERS + 1];
    int total, out_of_order, off_thread;
} order_state;

static order_state order;

/* ctx: (thread index << 24) | sequence number. */
static void record_in_order(void *ctx) {
    uintptr_t value = (uintptr_t)ctx;
    int who = (int)(value >> 24), seq = (int)(value & 0xffffff);
    if (seq != order.next[who]) order.out_of_order++;
    order.next[who] = seq + 1;
    if (!uvloop_is_loop_thread(order.l)) order.off_thread++;
    if (++order.total == (PRODUCERS + 1) * order.per_thread) CHECK_EQ(uvloop_keep_alive(order.l, 0), 0);
}

static void *post_in_sequence(void *arg) {
    uintptr_t who = (uintptr_t)arg;
    for (int i = 0; i < order.per_thread; i++)
        CHECK_EQ(uvloop_post(order.l, record_in_order, (void *)((who << 24) | (uintptr_t)i)), 0);
    return NULL;
}

static void posts_from_one_thread_run_in_order(void) {
    fixture_t f;
    fixture_attach(&f);
    /* More than the 16,384 the ring holds, so producers also wait for room. */
    order = (order_state){.l = f.l, .per_thread = capi_env_int("ORDER_POSTS", 20000)};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    for (int i = 0; i < order.per_thread; i++)
        CHECK_EQ(uvloop_post(f.l, record_in_order, (void *)(((uintptr_t)OWN << 24) | (uintptr_t)i)), 0);
    pthread_t producers[PRODUCERS];
    for (uintptr_t p = 0; p < PRODUCERS; p++) producers[p] = thread_start(post_in_sequence, (void *)p);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    for (int p = 0; p < PRODUCERS; p++) thread_join(producers[p]);
    CHECK_EQ(order.total, (PRODUCERS + 1) * order.per_thread);
    CHECK_EQ(order.out_of_order, 0);
    CHECK_EQ(order.off_thread, 0);
    for (int p = 0; p <= PRODUCERS; p++) CHECK_EQ(order.next[p], order.per_thread);
    fixture_teardown(&f);
}

/* ---- turns: posts from a callback and next-iteration work -------------------------------------- */

/* The test turns the loop itself, one uv_run(UV_RUN_NOWAIT) per turn (keep-alive on, so that each
 * call is a turn), and the owner's prepare handle counts polls: it runs once per turn, just
 * before the poll. Each step records both. */
typedef struct {
    uvloop_t *l;
    uv_prepare_t prepare;
    int turn, polls, done;
    char log[16];
    int logged;
    int turn_of[128], polls_of[128];
} turns_state;

static turns_state ts;

static void on_prepare(uv_prepare_t *handle) {
    (void)handle;
    ts.polls++;
}

static void log_step(char step) {
    CHECK_EQ(uvloop_is_loop_thread(ts.l), 1);
    if (ts.logged < (int)sizeof ts.log - 1) ts.log[ts.logged++] = step;
    ts.turn_of[(unsigned char)step] = ts.turn;
    ts.polls_of[(unsigned char)step] = ts.polls;
}

static void step(void *ctx) { log_step((char)(uintptr_t)ctx); }

static void step_last(void *ctx) {
    log_step((char)(uintptr_t)ctx);
    ts.done = 1;
}

/* Runs in a next-iteration callback (the check phase): its own next-iteration work waits a turn. */
static void step_n(void *ctx) {
    log_step((char)(uintptr_t)ctx);
    CHECK_EQ(uvloop_post_next_iteration(ts.l, step_last, (void *)'Z'), 0);
}

/* A posted callback: queues next-iteration work first, then two posts. */
static void step_a(void *ctx) {
    log_step((char)(uintptr_t)ctx);
    CHECK_EQ(uvloop_post_next_iteration(ts.l, step_n, (void *)'N'), 0);
    CHECK_EQ(uvloop_post(ts.l, step, (void *)'B'), 0);
    CHECK_EQ(uvloop_post(ts.l, step, (void *)'C'), 0);
}

static void turns_fixture(fixture_t *f) {
    fixture_attach(f);
    memset(&ts, 0, sizeof ts);
    ts.l = f->l;
    CHECK_EQ(uv_prepare_init(&f->uv, &ts.prepare), 0);
    CHECK_EQ(uv_prepare_start(&ts.prepare, on_prepare), 0);
    uv_unref((uv_handle_t *)&ts.prepare);
    CHECK_EQ(uvloop_keep_alive(f->l, 1), 0);
    /* Before the first turn, from the loop thread: next-iteration work, then a post. */
    CHECK_EQ(uvloop_post_next_iteration(f->l, step, (void *)'M'), 0);
    CHECK_EQ(uvloop_post(f->l, step_a, (void *)'A'), 0);
    for (ts.turn = 1; !ts.done && ts.turn < 100; ts.turn++) uv_run(&f->uv, UV_RUN_NOWAIT);
    CHECK_EQ(ts.done, 1);
}

static void turns_teardown(fixture_t *f) {
    uv_close((uv_handle_t *)&ts.prepare, NULL);
    fixture_teardown(f);
}

/* uvloop_post: "on the current turn when posted from a callback". */
static void post_from_a_callback_runs_on_the_current_turn(void) {
    fixture_t f;
    turns_fixture(&f);
    CHECK_EQ(ts.turn_of['A'], 1);
    CHECK_EQ(ts.turn_of['B'], ts.turn_of['A']);
    CHECK_EQ(ts.turn_of['C'], ts.turn_of['A']);
    turns_teardown(&f);
}

/* uvloop_post_next_iteration: after the next poll, so after what the same turn posted, whatever
 * order they were queued in; from a next-iteration callback, never on the current turn. */
static void next_iteration_runs_after_the_turns_posts(void) {
    fixture_t f;
    turns_fixture(&f);
    CHECK(strcmp(ts.log, "ABCMNZ") == 0);
    if (strcmp(ts.log, "ABCMNZ") != 0)
        fprintf(stderr, "    ran in the order %s (A queued next-iteration N, then posted B and C)\n", ts.log);
    CHECK(ts.polls_of['M'] > ts.polls_of['A']); /* after a poll */
    CHECK(ts.polls_of['N'] > ts.polls_of['A']);
    CHECK(ts.turn_of['Z'] > ts.turn_of['N']); /* never on the current turn */
    CHECK(ts.polls_of['Z'] > ts.polls_of['N']);
    turns_teardown(&f);
}

typedef struct {
    uvloop_t *l;
    int ran, on_loop_thread;
} from_thread;

static void next_from_thread(void *arg) {
    from_thread *c = arg;
    c->ran++;
    c->on_loop_thread = uvloop_is_loop_thread(c->l);
    CHECK_EQ(uvloop_keep_alive(c->l, 0), 0);
}

static void *post_next_from_thread(void *arg) {
    from_thread *c = arg;
    CHECK_EQ(uvloop_post_next_iteration(c->l, next_from_thread, c), 0);
    return NULL;
}

static void next_iteration_from_another_thread(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    from_thread c = {.l = f.l};
    pthread_t thread = thread_start(post_next_from_thread, &c);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(c.ran, 1);
    CHECK_EQ(c.on_loop_thread, 1);
    fixture_teardown(&f);
}

/* ---- invoke ---------------------------------------------------------------------------------- */

typedef struct {
    uvloop_t *l;
    int value, on_loop_thread, nested_rc, nested_value;
} invoked;

static void set_value(void *arg) {
    invoked *c = arg;
    c->on_loop_thread = uvloop_is_loop_thread(c->l);
    c->value = 42;
}

static void set_nested(void *arg) { ((invoked *)arg)->nested_value = 7; }

/* A posted callback that invokes: runs inline. */
static void invoke_inside(void *arg) {
    invoked *c = arg;
    c->nested_rc = uvloop_invoke(c->l, set_nested, c);
    CHECK_EQ(c->nested_value, 7); /* already ran when invoke returned */
}

static void invoke_on_the_loop_thread_runs_inline(void) {
    fixture_t f;
    fixture_attach(&f);
    invoked c = {.l = f.l, .nested_rc = 1};
    CHECK_EQ(uvloop_invoke(f.l, set_value, &c), 0);
    CHECK_EQ(c.value, 42); /* no uv_run yet: it ran inline */
    CHECK_EQ(c.on_loop_thread, 1);
    CHECK_EQ(uvloop_post(f.l, invoke_inside, &c), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(c.nested_rc, 0);
    CHECK_EQ(c.nested_value, 7);
    fixture_teardown(&f);
}

typedef struct {
    invoked c;
    int rc, seen;
} invoker;

static void *invoke_from_thread(void *arg) {
    invoker *i = arg;
    i->rc = uvloop_invoke(i->c.l, set_value, &i->c);
    i->seen = i->c.value; /* written by the loop thread: invoke returned after it ran */
    CHECK_EQ(uvloop_post(i->c.l, cb_keep_alive_off, i->c.l), 0);
    return NULL;
}

static void invoke_from_another_thread_waits(void) {
    fixture_t f;
    fixture_attach(&f);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    invoker i = {.c = {.l = f.l}, .rc = 1};
    pthread_t thread = thread_start(invoke_from_thread, &i);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(i.rc, 0);
    CHECK_EQ(i.seen, 42);
    CHECK_EQ(i.c.on_loop_thread, 1);
    fixture_teardown(&f);
}

/* Loop A on the main thread, loop B on thread T. A's callback invokes on B (main blocks); B's
 * callback invokes on A: A's thread is waiting for T, so that invoke would wait for itself. */
typedef struct {
    uvloop_t *a, *b;
    latch_t b_ready;
    int rc_a_to_b, rc_b_to_a, rc_b_to_b, b_ran, cycle_ran, b_inline;
} cycle;

static void must_not_run(void *arg) { ((cycle *)arg)->cycle_ran++; }
static void b_inline(void *arg) { ((cycle *)arg)->b_inline++; }

static void on_b(void *arg) {
    cycle *c = arg;
    c->b_ran++;
    CHECK_EQ(uvloop_is_loop_thread(c->b), 1);
    c->rc_b_to_a = uvloop_invoke(c->a, must_not_run, c);
    c->rc_b_to_b = uvloop_invoke(c->b, b_inline, c); /* its own loop: inline, fine */
}

static void on_a(void *arg) {
    cycle *c = arg;
    c->rc_a_to_b = uvloop_invoke(c->b, on_b, c);
    CHECK_EQ(uvloop_post(c->b, cb_keep_alive_off, c->b), 0);
    CHECK_EQ(uvloop_keep_alive(c->a, 0), 0);
}

static void *run_loop_b(void *arg) {
    cycle *c = arg;
    fixture_t g;
    fixture_attach(&g);
    c->b = g.l;
    CHECK_EQ(uvloop_keep_alive(g.l, 1), 0);
    latch_count_down(&c->b_ready);
    CHECK_EQ(uv_run(&g.uv, UV_RUN_DEFAULT), 0);
    fixture_teardown(&g);
    return NULL;
}

static void invoke_cycle_is_edeadlock(void) {
    fixture_t f;
    fixture_attach(&f);
    cycle c = {.a = f.l, .rc_a_to_b = 1, .rc_b_to_a = 1, .rc_b_to_b = 1};
    latch_init(&c.b_ready, 1);
    pthread_t thread = thread_start(run_loop_b, &c);
    latch_wait(&c.b_ready);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    CHECK_EQ(uvloop_post(f.l, on_a, &c), 0);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(c.rc_a_to_b, 0);
    CHECK_EQ(c.b_ran, 1);
    CHECK_EQ(c.rc_b_to_a, UVLOOP_EDEADLOCK);
    CHECK_EQ(c.cycle_ran, 0); /* not 0: fn did not run */
    CHECK_EQ(c.rc_b_to_b, 0);
    CHECK_EQ(c.b_inline, 1);
    latch_destroy(&c.b_ready);
    fixture_teardown(&f);
}

const capi_test capi_post_tests[] = {
    {"posts_from_one_thread_run_in_order", posts_from_one_thread_run_in_order},
    {"post_from_a_callback_runs_on_the_current_turn", post_from_a_callback_runs_on_the_current_turn},
    {"next_iteration_runs_after_the_turns_posts", next_iteration_runs_after_the_turns_posts},
    {"next_iteration_from_another_thread", next_iteration_from_another_thread},
    {"invoke_on_the_loop_thread_runs_inline", invoke_on_the_loop_thread_runs_inline},
    {"invoke_from_another_thread_waits", invoke_from_another_thread_waits},
    {"invoke_cycle_is_edeadlock", invoke_cycle_is_edeadlock},
    {NULL, NULL},
};
