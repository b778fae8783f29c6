/*
 * Posting without waiting (uvloop_try_post) and attaching with options (uvloop_attach_ex): a full
 * queue returns UVLOOP_EAGAIN at once and loses nothing already accepted; the capacity comes from
 * the options, which are validated before anything is attached.
 */
#define _GNU_SOURCE
#include "harness.h"

#include <string.h>

typedef struct {
    int next, out_of_order;
} order_state;

static order_state order;

static void in_order(void *ctx) {
    int value = (int)(intptr_t)ctx;
    if (value != order.next) order.out_of_order++;
    order.next = value + 1;
}

static void attach_with_capacity(fixture_t *f, uint32_t capacity) {
    uvloop_options_t opts;
    memset(&opts, 0, sizeof opts);
    opts.post_capacity = capacity;
    REQUIRE_EQ(uv_loop_init(&f->uv), 0);
    f->l = NULL;
    REQUIRE_EQ(uvloop_attach_ex(&f->uv, &opts, &f->l), 0);
    /* The tests turn the loop with UV_RUN_NOWAIT, which needs something alive to turn at all. */
    CHECK_EQ(uvloop_keep_alive(f->l, 1), 0);
}

typedef struct {
    uvloop_t *l;
    int accepted, first_refusal, after_refusal;
} filler;

/* Posts until the queue refuses, from a thread that is not the loop's; the loop does not turn
 * meanwhile, so the queue holds exactly its capacity. */
static void *fill(void *arg) {
    filler *s = arg;
    int rc;
    while ((rc = uvloop_try_post(s->l, in_order, (void *)(intptr_t)s->accepted)) == 0) s->accepted++;
    s->first_refusal = rc;
    s->after_refusal = uvloop_try_post(s->l, in_order, (void *)(intptr_t)-1);
    return NULL;
}

static void try_post_returns_eagain_when_the_queue_is_full(void) {
    fixture_t f;
    attach_with_capacity(&f, 8);
    memset(&order, 0, sizeof order);
    filler s = {.l = f.l, .first_refusal = -1, .after_refusal = -1};
    thread_join(thread_start(fill, &s));
    CHECK_EQ(s.accepted, 8);
    CHECK_EQ(s.first_refusal, UVLOOP_EAGAIN);
    CHECK_EQ(s.after_refusal, UVLOOP_EAGAIN);
    CHECK_EQ(UVLOOP_EAGAIN, UV_EAGAIN);
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(order.next, 8); /* every accepted post ran, in order; the refused ones did not */
    CHECK_EQ(order.out_of_order, 0);
    /* Room again. */
    s.accepted = 8;
    s.first_refusal = s.after_refusal = -1;
    thread_join(thread_start(fill, &s));
    CHECK_EQ(s.accepted, 16);
    for (int i = 0; i < 3; i++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(order.next, 16);
    CHECK_EQ(order.out_of_order, 0);
    fixture_teardown(&f);
}

static void try_post_on_the_loop_thread_never_refuses(void) {
    fixture_t f;
    attach_with_capacity(&f, 2);
    int ran = 0;
    for (int i = 0; i < 10; i++) CHECK_EQ(uvloop_try_post(f.l, cb_count, &ran), 0);
    CHECK_EQ(ran, 0); /* never inline */
    uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(ran, 10);
    fixture_teardown(&f);
}

/* uvloop_post through a small queue waits for room, and all of it runs in order. */
typedef struct {
    uvloop_t *l;
    int count, rc;
} poster;

static void *post_many(void *arg) {
    poster *p = arg;
    for (int i = 0; i < p->count && p->rc == 0; i++) p->rc = uvloop_post(p->l, in_order, (void *)(intptr_t)i);
    if (p->rc == 0) p->rc = uvloop_post(p->l, cb_keep_alive_off, p->l);
    return NULL;
}

static void post_waits_for_room_in_a_small_queue(void) {
    fixture_t f;
    attach_with_capacity(&f, 2);
    memset(&order, 0, sizeof order);
    poster p = {.l = f.l, .count = capi_env_int("ORDER_POSTS", 20000) / 10};
    pthread_t thread = thread_start(post_many, &p);
    CHECK_EQ(uv_run(&f.uv, UV_RUN_DEFAULT), 0);
    thread_join(thread);
    CHECK_EQ(p.rc, 0);
    CHECK_EQ(order.next, p.count);
    CHECK_EQ(order.out_of_order, 0);
    fixture_teardown(&f);
}

static void attach_ex_validates_its_options(void) {
    uv_loop_t uv;
    REQUIRE_EQ(uv_loop_init(&uv), 0);
    uvloop_t *l = NULL;
    uvloop_options_t opts;
    const uint32_t bad[] = {1, 3, 100, 16383, UVLOOP_POST_CAPACITY_MAX + 1, UVLOOP_POST_CAPACITY_MAX * 2u, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&opts, 0, sizeof opts);
        opts.post_capacity = bad[i];
        CHECK_EQ(uvloop_attach_ex(&uv, &opts, &l), UVLOOP_EINVAL);
        CHECK(l == NULL);
    }
    memset(&opts, 0, sizeof opts);
    opts.reserved[0] = 1; /* an option this library does not know */
    CHECK_EQ(uvloop_attach_ex(&uv, &opts, &l), UVLOOP_EINVAL);
    memset(&opts, 0, sizeof opts);
    opts.reserved[14] = 1;
    CHECK_EQ(uvloop_attach_ex(&uv, &opts, &l), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_attach_ex(NULL, NULL, &l), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_attach_ex(&uv, NULL, NULL), UVLOOP_EINVAL);
    CHECK(l == NULL);
    /* Nothing was attached by the refusals; NULL options are the defaults. */
    CHECK_EQ(uvloop_attach_ex(&uv, NULL, &l), 0);
    uvloop_t *again = NULL;
    CHECK_EQ(uvloop_attach_ex(&uv, NULL, &again), UVLOOP_EALREADY);
    CHECK(again == NULL);
    CHECK_EQ(uvloop_detach(l), 0);
    uv_run(&uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_release(l), 0);
    CHECK_EQ(uv_loop_close(&uv), 0);
}

static void zeroed_options_are_the_defaults(void) {
    fixture_t f;
    attach_with_capacity(&f, 0);
    memset(&order, 0, sizeof order);
    /* The default holds 16,384 posts from another thread before it refuses. */
    filler s = {.l = f.l, .first_refusal = -1, .after_refusal = -1};
    thread_join(thread_start(fill, &s));
    CHECK_EQ(s.accepted, 16384);
    CHECK_EQ(s.first_refusal, UVLOOP_EAGAIN);
    for (int turn = 0; turn < 10000 && order.next < 16384; turn++) uv_run(&f.uv, UV_RUN_NOWAIT);
    CHECK_EQ(order.out_of_order, 0);
    CHECK_EQ(order.next, 16384);
    fixture_teardown(&f);
}

static void try_post_errors(void) {
    fixture_t f;
    attach_with_capacity(&f, 4);
    int ran = 0;
    CHECK_EQ(uvloop_try_post(NULL, cb_count, &ran), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_try_post(f.l, NULL, &ran), UVLOOP_EINVAL);
    CHECK_EQ(uvloop_detach(f.l), 0);
    CHECK_EQ(uvloop_try_post(f.l, cb_count, &ran), UVLOOP_EDETACHED);
    fixture_close_detached(&f);
    CHECK_EQ(ran, 0);
}

const capi_test capi_try_post_tests[] = {
    {"try_post_returns_eagain_when_the_queue_is_full", try_post_returns_eagain_when_the_queue_is_full},
    {"try_post_on_the_loop_thread_never_refuses", try_post_on_the_loop_thread_never_refuses},
    {"post_waits_for_room_in_a_small_queue", post_waits_for_room_in_a_small_queue},
    {"attach_ex_validates_its_options", attach_ex_validates_its_options},
    {"zeroed_options_are_the_defaults", zeroed_options_are_the_defaults},
    {"try_post_errors", try_post_errors},
    {NULL, NULL},
};
