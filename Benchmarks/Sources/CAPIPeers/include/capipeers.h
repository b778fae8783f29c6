#ifndef UVLOOP_BENCH_CAPIPEERS_H
#define UVLOOP_BENCH_CAPIPEERS_H
/*
 * UVLoop's C API (uvloop.h) driven from C, for the c_* workloads. The loop is passed as an
 * opaque `struct uvloop_s *` so that Swift does not see <uv.h> through this module (as in CPeers).
 */
#include <stdint.h>

struct uvloop_s;

/* c_post_cross_thread: `producers` C pthreads call uvloop_post(l, fn, ctx) n/producers times each;
   fn adds to a counter on the loop thread. Returns the wall time (ns) until the last callback ran. */
double cap_post_cross_thread(struct uvloop_s *l, long n, int producers);

/* c_timer_start_cancel, on the loop thread of `l`: n uvloop_timer_start (timeouts 1-2 hours,
   cp_rand_timeout_ms from seed 12345, as timer_cancel), then uvloop_timer_cancel and
   uvloop_timer_release of each in start order. The handle array is allocated before the clock
   starts. Returns the elapsed ns; -1 if a call failed. */
double cap_timer_start_cancel(struct uvloop_s *l, long n);

/* uvloop_release(l). */
void cap_release(struct uvloop_s *l);

/* A uv_loop_t owned and run by a C thread with UVLoop attached (uvloop_attach, keep-alive on). */
typedef struct cap_attached cap_attached;
cap_attached *cap_attached_start(void);
struct uvloop_s *cap_attached_handle(cap_attached *a);
void cap_attached_stop(cap_attached *a);   /* detach on the loop thread, release, close, join */

#endif
