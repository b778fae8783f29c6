/*
 * Posts that carry a value (uvloop_post_value, uvloop_try_post_value): the value arrives with its
 * context, a thread's value posts run in its order, nothing is allocated per post, and a full
 * queue refuses a try at once.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <malloc.h>
#include <string.h>

typedef struct {
    uvloop_t *l;
    uint64_t next, sum;
    int out_of_order, off_thread;
} values_state;

static void on_value(void *ctx, uint64_t value) {
    values_state *s = ctx;
    if (!uvloop_is_loop_thread(s->l)) s->off_thread++;
    if (value != s->next) s->out_of_order++;
    s->next = value + 1;
    s->sum += value;
}

typedef struct {
    values_state *s;
    uint64_t count;
    int rc;
    size_t grown;
} value_sender;

static void stop_keep_alive(void *l, uint64_t value) {
    (void)value;
    CHECK_EQ(uvloop_keep_alive(l, 0), 0);
}

static void *send_values(void *arg) {
    value_sender *v = arg;
    for (uint64_t i = 0; i < v->count && v->rc == 0; i++) v->rc = uvloop_post_value(v->s->l, on_value, v->s, i);
    if (v->rc == 0) v->rc = uvloop_post_value(v->s->l, stop_keep_alive, v->s->l, 0);
    return NULL;
}

static void values_arrive_in_order_on_the_loop_thread(void) {
    fixture_t f;
    fixture_attach(&f);
    values_state s = {.l = f.l};
    value_sender v = {.s = &s, .count = (uint64_t)capi_env_int("ORDER_POSTS", 20000) * 5};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0);
    pthread_t thread = thread_start(send_values, &v);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(v.rc, 0);
    CHECK_EQ(s.next, v.count);
    CHECK_EQ(s.out_of_order, 0);
    CHECK_EQ(s.off_thread, 0);
    CHECK(s.sum == v.count * (v.count - 1) / 2);
    fixture_teardown(&f);
}

/* The whole 64 bits arrive, with the context beside them. */
static void on_wide(void *ctx, uint64_t value) { *(uint64_t *)ctx = value; }

static void *send_wide(void *arg) {
    CHECK_EQ(uvloop_post_value(((void **)arg)[0], on_wide, ((void **)arg)[1], UINT64_MAX - 1), 0);
    return NULL;
}

static void a_value_is_64_bits(void) {
    fixture_t f;
    fixture_attach(&f);
    uint64_t seen = 0, seen_here = 0;
    void *args[2] = {f.l, &seen};
    thread_join(thread_start(send_wide, args));
    CHECK_EQ(uvloop_post_value(f.l, on_wide, &seen_here, UINT64_MAX), 0);
    CHECK(seen_here == 0); /* from the loop thread: never inline */
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK(seen == UINT64_MAX - 1);
    CHECK(seen_here == UINT64_MAX);
    fixture_teardown(&f);
}

/* No allocation per post: posting a few thousand values from a thread does not grow the heap by
 * anything near a payload per post (the loop does not run meanwhile, so nothing is freed). */
static void *send_measured(void *arg) {
    value_sender *v = arg;
    struct mallinfo2 before = mallinfo2();
    for (uint64_t i = 0; i < v->count && v->rc == 0; i++) v->rc = uvloop_post_value(v->s->l, on_value, v->s, i);
    struct mallinfo2 after = mallinfo2();
    v->grown = after.uordblks > before.uordblks ? after.uordblks - before.uordblks : 0;
    return NULL;
}

static void value_posts_allocate_nothing(void) {
    fixture_t f;
    fixture_attach(&f);
    values_state s = {.l = f.l};
    value_sender v = {.s = &s, .count = 4000};
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0); /* so that UV_RUN_NOWAIT turns */
    thread_join(thread_start(send_measured, &v));
    CHECK_EQ(v.rc, 0);
    if (v.grown >= v.count * 8) fprintf(stderr, "    the heap grew by %zu bytes for %" PRIu64 " posts\n", v.grown, v.count);
    CHECK(v.grown < v.count * 8);
    for (int turn = 0; turn < 1000 && s.next < v.count; turn++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(s.next, v.count);
    CHECK_EQ(s.out_of_order, 0);
    fixture_teardown(&f);
}

typedef struct {
    values_state *s;
    int accepted, refusal;
} value_filler;

static void *fill_values(void *arg) {
    value_filler *vf = arg;
    int rc;
    while ((rc = uvloop_try_post_value(vf->s->l, on_value, vf->s, (uint64_t)vf->accepted)) == 0) vf->accepted++;
    vf->refusal = rc;
    return NULL;
}

static void try_post_value_returns_eagain_when_full(void) {
    fixture_t f;
    uvloop_options_t opts = {.post_capacity = 4};
    REQUIRE_EQ(uv_loop_init(&f.uv), 0);
    REQUIRE_EQ(uvloop_attach_ex(&f.uv, &opts, &f.l), 0);
    CHECK_EQ(uvloop_keep_alive(f.l, 1), 0); /* so that UV_RUN_NOWAIT turns */
    values_state s = {.l = f.l};
    value_filler vf = {.s = &s, .refusal = -1};
    thread_join(thread_start(fill_values, &vf));
    CHECK_EQ(vf.accepted, 4);
    CHECK_EQ(vf.refusal, UVLOOP_EAGAIN);
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(s.next, 4);
    CHECK_EQ(s.out_of_order, 0);
    /* On the loop thread it posts as uvloop_post: never refused. */
    for (int i = 4; i < 12; i++) CHECK_EQ(uvloop_try_post_value(f.l, on_value, &s, (uint64_t)i), 0);
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(s.next, 12);
    fixture_teardown(&f);
}

static void value_post_errors(void) {
    fixture_t f;
    fixture_attach(&f);
    values_state s = {.l = f.l};
    CHECK_EQ(uvloop_post_value(NULL, on_value, &s, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_post_value(f.l, NULL, &s, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_try_post_value(NULL, on_value, &s, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_try_post_value(f.l, NULL, &s, 1), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_detach(f.l), 0);
    CHECK_EQ(uvloop_post_value(f.l, on_value, &s, 1), UVLOOP_EDETACHED);
    CHECK_EQ(uvloop_try_post_value(f.l, on_value, &s, 1), UVLOOP_EDETACHED);
    fixture_close_detached(&f);
    CHECK_EQ(s.next, 0);
}

/* Posted from another thread just before the detach: the detach delivers it. */
static void *post_one_value(void *arg) {
    values_state *s = arg;
    CHECK_EQ(uvloop_post_value(s->l, on_value, s, 0), 0);
    return NULL;
}

static void detach_delivers_accepted_values(void) {
    fixture_t f;
    fixture_attach(&f);
    values_state s = {.l = f.l};
    thread_join(thread_start(post_one_value, &s));
    CHECK_EQ(uvloop_detach(f.l), 0);
    CHECK_EQ(s.next, 1);
    fixture_close_detached(&f);
}

const capi_test capi_value_post_tests[] = {
    {"values_arrive_in_order_on_the_loop_thread", values_arrive_in_order_on_the_loop_thread},
    {"a_value_is_64_bits", a_value_is_64_bits},
    {"value_posts_allocate_nothing", value_posts_allocate_nothing},
    {"try_post_value_returns_eagain_when_full", try_post_value_returns_eagain_when_full},
    {"value_post_errors", value_post_errors},
    {"detach_delivers_accepted_values", detach_delivers_accepted_values},
    {NULL, NULL},
};
