#define _GNU_SOURCE
#include "harness.h"

#include <string.h>
#include <time.h>

static atomic_int failures;

int capi_failures(void) { return atomic_load(&failures); }

void capi_fail(const char *file, int line, const char *what) {
    atomic_fetch_add(&failures, 1);
    fprintf(stderr, "    %s:%d: check failed: %s\n", file, line, what);
}

void capi_fail_eq(const char *file, int line, const char *a, const char *b, long long va, long long vb) {
    atomic_fetch_add(&failures, 1);
    fprintf(stderr, "    %s:%d: check failed: %s == %s (%lld vs %lld)\n", file, line, a, b, va, vb);
}

void capi_fail_ge(const char *file, int line, const char *a, const char *b, uint64_t va, uint64_t vb) {
    atomic_fetch_add(&failures, 1);
    fprintf(stderr, "    %s:%d: check failed: %s >= %s (%" PRIu64 " vs %" PRIu64 ")\n", file, line, a, b, va,
            vb);
}

int capi_env_int(const char *name, int fallback) {
    char key[64];
    snprintf(key, sizeof key, "CAPI_%s", name);
    const char *value = getenv(key);
    return value && *value ? atoi(value) : fallback;
}

double capi_seconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

void latch_init(latch_t *latch, int count) {
    pthread_mutex_init(&latch->mutex, NULL);
    pthread_cond_init(&latch->cond, NULL);
    latch->count = count;
}

void latch_count_down(latch_t *latch) {
    pthread_mutex_lock(&latch->mutex);
    if (latch->count > 0 && --latch->count == 0) pthread_cond_broadcast(&latch->cond);
    pthread_mutex_unlock(&latch->mutex);
}

void latch_wait(latch_t *latch) {
    pthread_mutex_lock(&latch->mutex);
    while (latch->count > 0) pthread_cond_wait(&latch->cond, &latch->mutex);
    pthread_mutex_unlock(&latch->mutex);
}

void latch_destroy(latch_t *latch) {
    pthread_cond_destroy(&latch->cond);
    pthread_mutex_destroy(&latch->mutex);
}

pthread_t thread_start(void *(*body)(void *), void *arg) {
    pthread_t thread;
    int rc = pthread_create(&thread, NULL, body, arg);
    if (rc != 0) {
        fprintf(stderr, "pthread_create: %s\n", strerror(rc));
        exit(1);
    }
    return thread;
}

void thread_join(pthread_t thread) { pthread_join(thread, NULL); }

void fixture_attach(fixture_t *f) {
    REQUIRE_EQ(uv_loop_init(&f->uv), 0);
    f->l = NULL;
    REQUIRE_EQ(uvloop_attach(&f->uv, &f->l), 0);
    CHECK(f->l != NULL);
}

void fixture_close_detached(fixture_t *f) {
    uv_run(&f->uv, UV_RUN_NOWAIT);
    CHECK_EQ(uvloop_release(f->l), 0);
    CHECK_EQ(uv_loop_close(&f->uv), 0);
}

void fixture_teardown(fixture_t *f) {
    CHECK_EQ(uvloop_detach(f->l), 0);
    fixture_close_detached(f);
}

void cb_keep_alive_off(void *l) { CHECK_EQ(uvloop_keep_alive(l, 0), 0); }
void cb_detach(void *l) { CHECK_EQ(uvloop_detach(l), 0); }
void cb_count(void *counter) { ++*(int *)counter; }
