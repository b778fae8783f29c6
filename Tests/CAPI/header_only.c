/*
 * Header hygiene: a translation unit that includes only <uvloop.h>, so the header must bring
 * everything it uses (<stdint.h>, <uv.h>) itself. scripts/test-c-api compiles it as C (gnu99,
 * gnu11, gnu17, -pedantic) and as C++ (-x c++), where the extern "C" block must hold.
 */
#include <uvloop.h>

int header_only_use(uv_loop_t *loop, uvloop_cb fn, void *ctx);

/* Uses each type the header declares, so that an incomplete or misspelled one fails to compile. */
int header_only_use(uv_loop_t *loop, uvloop_cb fn, void *ctx) {
    uvloop_t *l = 0;
    uvloop_timer_t *t = 0;
    int rc = uvloop_attach(loop, &l);
    if (rc != 0) return rc;
    rc = uvloop_timer_start(l, (uint64_t)1000, (uint64_t)0, fn, ctx, &t);
    uvloop_timer_release(t);
    if (rc == UVLOOP_EINVAL || rc == UVLOOP_ENOTATTACHED) return rc;
    return uvloop_release(l);
}
