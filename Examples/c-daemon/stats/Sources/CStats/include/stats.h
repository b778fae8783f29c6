/*
 * stats.h: the statistics component of the example daemon, a Swift component on the daemon's
 * UVLoop loop. Implemented in Swift (Sources/StatsComponent), declared here for C.
 *
 * The daemon attaches UVLoop to its uv_loop_t and hands the uvloop_t to stats_component_start.
 * Its worker threads send events with stats_component_event; the component counts them on the
 * loop thread, checks that each thread's sequence numbers arrive in order, prints a report with
 * a repeating timer, and computes percentiles of the recent values in a background operation on
 * libuv's thread pool.
 *
 * Results are 0 or a negative error code of uvloop.h (uvloop_strerror gives the message).
 */
#ifndef STATS_H
#define STATS_H

#include <stdint.h>
#include <uvloop.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The component's figures. */
typedef struct stats_snapshot_s {
    uint64_t events;        /* events counted */
    uint64_t out_of_order;  /* events whose sequence number was not the previous one plus 1 */
    uint64_t last_sequence; /* the last sequence number counted; 0 before the first event */
    uint64_t value_sum;     /* the sum of the events' values */
    uint64_t reports;       /* reports printed by the repeating timer */
    uint64_t digests;       /* background digests completed */
    uint64_t p50;           /* the median of the values sampled by the last digest */
    uint64_t p99;           /* their 99th percentile */
} stats_snapshot_t;

/*
 * Starts the component on `l`: from now on it accepts events and prints a report every
 * `report_ms` milliseconds (0: no reports). Loop thread only.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_EALREADY when it is already
 * running; UVLOOP_EINVAL for a NULL `l`; UVLOOP_EDETACHED or UVLOOP_ESHUTDOWN for a loop that
 * accepts no work.
 */
int stats_component_start(uvloop_t *l, uint64_t report_ms);

/*
 * Sends one event to the component: it is counted on the loop thread, after the events this
 * thread sent before. Any thread; takes no lock of the loop's and allocates nothing. When many
 * events are waiting, a sender other than the loop thread waits (yielding the CPU) for the loop.
 *
 * Returns 0; UVLOOP_ESHUTDOWN when the component is not running; UVLOOP_EDETACHED after
 * uvloop_detach. Events that were accepted are counted, at the latest by uvloop_detach.
 */
int stats_component_event(uint64_t sequence, uint64_t value);

/*
 * Copies the figures into *out. Loop thread only.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_ESHUTDOWN when the component is
 * not running; UVLOOP_EINVAL for NULL.
 */
int stats_component_snapshot(stats_snapshot_t *out);

/*
 * Stops the component: cancels its report timer and its background operations, refuses further
 * events, and lets go of the loop. When `final` is not NULL, stores the last figures there.
 * Loop thread only. Call it before uvloop_release, before or after uvloop_detach: once the
 * threads that send events have stopped and UVLoop was detached (uvloop_detach delivers every
 * accepted event), the figures are final.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_ESHUTDOWN when it is not running.
 */
int stats_component_stop(stats_snapshot_t *final);

#ifdef __cplusplus
}
#endif

#endif /* STATS_H */
