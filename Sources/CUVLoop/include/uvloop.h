/*
 * uvloop.h: UVLoop's C API.
 *
 * UVLoop runs work on a libuv loop's thread from any thread: posted callbacks, callbacks on the
 * loop's next turn, synchronous invokes and nanosecond timers with cancel handles. A C program
 * that owns a uv_loop_t attaches UVLoop to it and goes on running the loop with uv_run; Swift
 * components on the same loop reach it through the uvloop_t the program hands them.
 *
 * Conventions, as in libuv:
 *   - Functions return 0 (or a documented non-negative value) on success and a negative error
 *     code on failure: one of the UVLOOP_E* codes below, or a libuv code (UV_E*) passed through.
 *     uvloop_strerror() turns any of them into a message.
 *   - Every function says which threads may call it. "Loop thread" is the thread that runs the
 *     uv_loop_t (the one inside uv_run). Misuse that can be detected returns an error code.
 *     Misuse that no call can report (a loop run by another thread than the one that attached
 *     it, a forked child that did not call uvloop_after_fork) stops the program: UVLoop's
 *     message on stderr, then abort() (SIGABRT).
 *   - Callbacks are a function and a context pointer. UVLoop never reads or frees the context; a
 *     callback runs on the loop thread, and runs exactly once unless its call returned an error
 *     (or, for a timer, it was cancelled).
 *   - Order: the calls one thread makes on a loop (posts, next-iteration posts, invokes, timer
 *     starts, moves and fires, through any uvloop_t of that loop) reach the loop in the order
 *     that thread made them. Across threads there is no set order.
 *
 * Teardown of an attached loop, on the loop thread:
 *     uvloop_detach(l);                 runs what was posted, cancels timers, closes UVLoop's handles
 *     uv_run(loop, UV_RUN_NOWAIT);      lets libuv finish closing them
 *     uvloop_release(l);                once no other thread uses l
 *     uv_loop_close(loop);              returns 0
 * uvloop_owns_handle() tells UVLoop's handles apart in a uv_walk.
 */
#ifndef UVLOOP_H
#define UVLOOP_H

#include <stdint.h>
#include <uv.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A UVLoop loop: attached to a uv_loop_t that C owns, or created in Swift. Opaque. */
typedef struct uvloop_s uvloop_t;
/* A handle on one timer; releasing the handle does not cancel the timer. Opaque. */
typedef struct uvloop_timer_s uvloop_timer_t;
/* A callback: runs on the loop thread with the context pointer given with it. */
typedef void (*uvloop_cb)(void *ctx);

/* Error codes. libuv's own codes (UV_E*, all above -30000) are passed through unchanged. */
#define UVLOOP_ESHUTDOWN      (-30001) /* the loop has shut down and accepts no new work */
#define UVLOOP_EDETACHED      (-30002) /* the loop was detached and accepts no new work */
#define UVLOOP_EINVAL         (-30003) /* an argument was NULL or out of range */
#define UVLOOP_ENOTLOOPTHREAD (-30004) /* called from a thread other than the loop thread */
#define UVLOOP_EDEADLOCK      (-30005) /* waiting here would wait for the calling thread itself */
#define UVLOOP_EALREADY       (-30006) /* UVLoop is already attached to this uv_loop_t */
#define UVLOOP_ENOTATTACHED   (-30007) /* the loop was created in Swift: shut it down in Swift */

/*
 * Attaches UVLoop to `loop`, which the caller owns, initialized and not closed. Loop thread only:
 * the thread that calls uv_run(loop, ...) from now on (a loop run by another thread stops the
 * program on its first turn with a message saying so). UVLoop adds its handles to `loop` and
 * never calls uv_run: the owner's turns run UVLoop's work.
 *
 * The handle that wakes the loop for posts is unreferenced: waiting for posts does not keep
 * uv_run(loop, UV_RUN_DEFAULT) running (pending timers and next-iteration work do, as libuv's
 * own timers would). Work runs on the owner's turns, and libuv turns a loop only while
 * something referenced is active (a server, a timer, a signal watcher): with nothing active,
 * uv_run returns at once, even with UV_RUN_NOWAIT, and posts from other threads wait. If work
 * may be posted while nothing of the owner's is active, call uvloop_keep_alive(l, 1).
 *
 * Returns 0 and stores the new loop in *out; UVLOOP_EINVAL for a NULL argument;
 * UVLOOP_EALREADY when UVLoop is already attached to `loop` (from C or from Swift) and not
 * detached; a libuv code when a handle cannot be created.
 */
int uvloop_attach(uv_loop_t *loop, uvloop_t **out);

/* ---- Attaching with options -------------------------------------------------------------------- */

/* The largest post_capacity: 2^25 posts (the rings then take about 1.75 GiB). */
#define UVLOOP_POST_CAPACITY_MAX (1u << 25)

/*
 * Options for uvloop_attach_ex. Zero every byte first (uvloop_options_t opts = {0}; or memset),
 * then set the fields you need: a field left 0 means its default, and a NULL options pointer
 * means every default. The struct keeps its size and layout in later versions of the library:
 * new options take reserved space, which must stay 0 (a library that does not know an option
 * set there refuses it with UVLOOP_EINVAL rather than ignore it).
 */
typedef struct uvloop_options_s {
    /* How many posts from other threads wait in each of the loop's queues (the one of
     * uvloop_post, and the one of uvloop_post_value) before uvloop_post waits and uvloop_try_post
     * returns UVLOOP_EAGAIN. 0: the default, 16384. Otherwise a power of two from 2 to
     * UVLOOP_POST_CAPACITY_MAX. Each queued post takes 24 bytes, each value post 32, allocated
     * and touched at attach. */
    uint32_t post_capacity;
    /* Must be 0: room for later options. */
    uint32_t reserved[15];
} uvloop_options_t;

/*
 * uvloop_attach with options: the same threads, results and error codes, and UVLOOP_EINVAL
 * (before anything is attached) for options it cannot use: a post_capacity that is not 0 or a
 * power of two from 2 to UVLOOP_POST_CAPACITY_MAX, or a reserved field that is not 0. The options
 * apply to this attaching; handles made later on the same loop (Loop.makeCHandle in Swift) share
 * its queues.
 */
int uvloop_attach_ex(uv_loop_t *loop, const uvloop_options_t *opts, uvloop_t **out);

/*
 * Detaches UVLoop from its uv_loop_t. Loop thread only. Runs everything posted so far, cancels
 * pending timers (their callbacks do not run) and closes UVLoop's handles; libuv frees them on
 * the loop's next turn, so turn it once (uv_run(loop, UV_RUN_NOWAIT)) before uv_loop_close.
 * From this call on, posting returns UVLOOP_EDETACHED. `l` stays valid for other threads until
 * uvloop_release. Called from inside a UVLoop callback, the detach completes when that callback
 * returns.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_EDETACHED when already detached;
 * UVLOOP_ENOTATTACHED for a loop created in Swift; UVLOOP_EINVAL for NULL.
 */
int uvloop_detach(uvloop_t *l);

/*
 * Releases `l`: call it once every thread that used `l` is done with it. Releasing an attached
 * loop on its loop thread detaches it first (as uvloop_detach). For a loop created in Swift,
 * releases C's reference only: Swift keeps running the loop.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD when `l` is still attached and the caller is another thread
 * (nothing is released: detach on the loop thread first); UVLOOP_EINVAL for NULL.
 */
int uvloop_release(uvloop_t *l);

/*
 * Whether UVLoop's handles keep the owner's uv_run running: on (1) or off (0, the default for
 * an attached loop). With it on, uv_run(loop, UV_RUN_DEFAULT) returns only after uvloop_detach
 * or after it is turned off again, and work posted from other threads always runs on the next
 * turns. Loop thread only.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_EDETACHED after detach;
 * UVLOOP_ENOTATTACHED for a loop created in Swift (it runs until Swift shuts it down);
 * UVLOOP_EINVAL for NULL.
 */
int uvloop_keep_alive(uvloop_t *l, int on);

/*
 * Runs fn(ctx) on the loop thread, soon: from another thread, once the loop has woken up; from
 * the loop thread, never inline, but after the current callback, and before next-iteration work
 * queued in the same turn. Any thread. Callbacks posted by one thread run in posting order.
 * From another thread this takes no lock and allocates nothing; when 16,384 posts are already
 * waiting it waits (yielding the CPU) until the loop has made room.
 *
 * Returns 0; UVLOOP_ESHUTDOWN or UVLOOP_EDETACHED when the loop no longer accepts work (fn will
 * not run); UVLOOP_EINVAL for a NULL `l` or `fn`.
 */
int uvloop_post(uvloop_t *l, uvloop_cb fn, void *ctx);

/*
 * Runs fn(ctx) on the loop thread after the next poll for I/O (libuv's check phase), never on
 * the current turn. Any thread. Returns as uvloop_post does.
 */
int uvloop_post_next_iteration(uvloop_t *l, uvloop_cb fn, void *ctx);

/* ---- Posting without waiting ------------------------------------------------------------------- */

/* A queue was full: nothing was posted; try again later, or drop the work (libuv's UV_EAGAIN). */
#define UVLOOP_EAGAIN UV_EAGAIN

/*
 * uvloop_post for a thread that must never wait (an audio, packet or trading thread): where
 * uvloop_post would wait for the loop to make room, this returns UVLOOP_EAGAIN at once. Any
 * thread; from another thread it takes no lock and allocates nothing. The queue holds
 * post_capacity posts (uvloop_attach_ex; 16,384 by default).
 *
 * Returns 0 (fn will run, as after uvloop_post); UVLOOP_EAGAIN when the queue is full (fn will
 * not run; the loop has been woken to drain it); UVLOOP_ESHUTDOWN or UVLOOP_EDETACHED when the
 * loop no longer accepts work; UVLOOP_EINVAL for a NULL `l` or `fn`. On the loop thread it posts
 * as uvloop_post does and never returns UVLOOP_EAGAIN.
 */
int uvloop_try_post(uvloop_t *l, uvloop_cb fn, void *ctx);

/* ---- Posts that carry a value ------------------------------------------------------------------ */

/* A callback with a value: runs on the loop thread with the context and value posted with it. */
typedef void (*uvloop_value_cb)(void *ctx, uint64_t value);

/*
 * Runs fn(ctx, value) on the loop thread, soon: a progress count, a small event, an index or a
 * pointer that fits 64 bits, without a malloc'd payload per post. Any thread; from another
 * thread the value is copied into a queue of its own (post_capacity entries): no lock, no
 * allocation; when it is full this waits (yielding the CPU) until the loop has made room, as
 * uvloop_post does. From the loop thread, as uvloop_post.
 *
 * Order: the value posts of one thread run in the order it made them. Relative to the same
 * thread's other calls (uvloop_post, timers, invokes), which travel by another queue, their
 * order is not set: when the order matters, send both kinds as value posts.
 *
 * Returns as uvloop_post does.
 */
int uvloop_post_value(uvloop_t *l, uvloop_value_cb fn, void *ctx, uint64_t value);

/*
 * uvloop_post_value that never waits: UVLOOP_EAGAIN when its queue is full, as uvloop_try_post.
 */
int uvloop_try_post_value(uvloop_t *l, uvloop_value_cb fn, void *ctx, uint64_t value);

/*
 * Runs fn(ctx) on the loop thread and waits until it has returned. Any thread: on the loop
 * thread fn runs at once, inline. The loop must be turning: on an attached loop, the owner's
 * uv_run must get to its next turn (see uvloop_keep_alive).
 *
 * Returns 0 after fn ran; UVLOOP_ESHUTDOWN or UVLOOP_EDETACHED when the loop no longer accepts
 * work; UVLOOP_EDEADLOCK when the caller is the thread of another UVLoop loop whose thread this
 * loop's thread is itself blocked waiting for (loops invoking each other: a cycle); UVLOOP_EINVAL
 * for a NULL `l` or `fn`. Whenever the result is not 0, fn did not run.
 */
int uvloop_invoke(uvloop_t *l, uvloop_cb fn, void *ctx);

/*
 * Whether the calling thread is the loop thread of `l`: 1 or 0 (0 for NULL). Any thread.
 */
int uvloop_is_loop_thread(const uvloop_t *l);

/*
 * The loop's time in nanoseconds on the monotonic clock: what timer deadlines count from. Any
 * thread (for a loop made in Swift with a manual test clock, the loop thread only). 0 for NULL.
 */
uint64_t uvloop_now(const uvloop_t *l);

/* ---- Loop health ------------------------------------------------------------------------------- */

/*
 * A reading of the loop's health, as of its last completed turn (Swift's Loop.metrics()). The
 * struct keeps its size and layout in later versions: new figures take reserved space.
 */
typedef struct uvloop_metrics_s {
    uint64_t iterations;     /* turns completed (libuv iterations that reached the poll phase) */
    uint64_t busy_ns;        /* time spent running callbacks: UVLoop's work, timers, I/O */
    uint64_t idle_ns;        /* time spent waiting in the kernel for I/O, timers or posts */
    /* The work waiting when the loop last polled: */
    uint64_t posted;         /* posted jobs not yet run (Swift posts and loop-thread posts;
                                posts from other C threads are in inbox_messages) */
    uint64_t next_iteration; /* callbacks queued for the next iteration */
    uint64_t timers;         /* timers scheduled, not yet due or fired */
    uint64_t chunked_loops;  /* Swift chunked loops not yet finished */
    uint64_t inbox_messages; /* messages in the loop's inboxes: uvloop_post and uvloop_post_value
                                from other threads, and Swift's Inbox values */
    uint64_t reserved[8];    /* 0: room for later figures */
} uvloop_metrics_t;

/*
 * Stores the loop's figures in *out: a handful of atomic loads, cheap enough for every stats
 * line. Any thread. Busy and idle time count from the loop's first turn (for an attached loop:
 * from its attaching). The busy share of a span is the busy time's growth over the sum of both
 * growths between two readings. A loop stuck in a long callback keeps its last figures until the
 * callback returns (the stall callback reports such turns). After a detach or shutdown it keeps
 * its last figures.
 *
 * Returns 0; UVLOOP_EINVAL for a NULL `l` or `out`.
 */
int uvloop_metrics(const uvloop_t *l, uvloop_metrics_t *out);

/* A turn that was busy longer than the stall threshold (Swift's LoopStall). Valid during the
 * callback only. Counts are of UVLoop's own work; time in other callbacks (I/O, the owner's own
 * libuv handles) is part of duration_ns only. */
typedef struct uvloop_stall_s {
    uint64_t duration_ns;         /* busy time, from the end of one poll to the start of the next */
    uint64_t posted_jobs;         /* posted jobs it ran */
    uint64_t timers_fired;        /* timers it fired */
    uint64_t next_iteration_jobs; /* next-iteration callbacks it ran */
    uint64_t chunks;              /* chunks of Swift chunked loops it ran */
} uvloop_stall_t;

typedef void (*uvloop_stall_cb)(void *ctx, const uvloop_stall_t *stall);

/*
 * Calls fn(ctx, stall) on the loop thread after every turn busy for longer than `threshold_ns`,
 * at the end of that turn, before the loop polls again: keep it short (count, log, post the
 * report elsewhere). A NULL fn removes the callback (the threshold is then ignored). One
 * callback per loop, shared with Swift's setStallHandler(threshold:): the last one set wins. Any
 * thread; from another thread it takes effect when it reaches the loop, in order with the
 * caller's posts.
 *
 * Returns 0; UVLOOP_EINVAL for a NULL `l` or, with fn set, a threshold under 1000 ns;
 * UVLOOP_ESHUTDOWN or UVLOOP_EDETACHED when the loop no longer accepts work.
 */
int uvloop_set_stall_cb(uvloop_t *l, uint64_t threshold_ns, uvloop_stall_cb fn, void *ctx);

/* ---- A loop on a manual clock (tests) ---------------------------------------------------------- */

/*
 * Creates a loop whose clock moves only when uvloop_advance moves it (starting at 0), so that C
 * code that uses UVLoop's timers tests its timeouts without sleeping, as Swift tests do with
 * Loop.manual(). The calling thread becomes its loop thread: it runs the loop with
 * uvloop_run_until_idle and uvloop_advance; UVLoop owns the uv_loop_t (there is no uv_run to
 * call). Every other function works on it as on an attached loop; posts from other threads run
 * on the loop thread's next uvloop_run_until_idle or uvloop_advance. uvloop_release, on the
 * loop thread, ends it: pending timers are cancelled, its uv_loop_t is closed and freed.
 * (uvloop_detach and uvloop_keep_alive return UVLOOP_ENOTATTACHED for it.)
 *
 * Returns 0 and stores the loop in *out; UVLOOP_EINVAL for NULL; a libuv code when the loop
 * cannot be created.
 */
int uvloop_new_manual(uvloop_t **out);

/*
 * Moves a manual loop's clock forward by `ns` nanoseconds and runs what comes due before it
 * returns (Swift's advanceTime(by:)): first what is ready now, then, for each timer deadline up to
 * the new time, the clock stops at that deadline (a callback's uvloop_now is its own deadline)
 * and the loop runs until idle, so work a callback posts or timers it starts that are due by
 * then run too. No sleeping: when it returns, all of it has run. Past the end of time the clock
 * stays at UINT64_MAX. Loop thread only, outside the loop's callbacks.
 *
 * Returns 0; UVLOOP_EINVAL for NULL or a loop that is not a manual one (uvloop_new_manual, or
 * Loop.manual() in Swift); UVLOOP_ENOTLOOPTHREAD from another thread; UV_EBUSY from inside one
 * of the loop's callbacks (it is not re-entrant); UVLOOP_ESHUTDOWN once the loop has ended.
 */
int uvloop_advance(uvloop_t *l, uint64_t ns);

/*
 * Runs the loop until nothing is ready: posted work (from any thread), due timers and
 * next-iteration work, without moving the clock or waiting. Loop thread only, outside the loop's
 * callbacks; for a manual loop, or a loop created in Swift that is not running (an attached loop
 * is run by its owner's uv_run).
 *
 * Returns 0; UVLOOP_EINVAL for NULL or an attached loop; UVLOOP_ENOTLOOPTHREAD from another
 * thread; UV_EBUSY from inside one of the loop's callbacks or while the loop is running;
 * UVLOOP_ESHUTDOWN once the loop has ended.
 */
int uvloop_run_until_idle(uvloop_t *l);

/*
 * Runs fn(ctx) on the loop thread after `delay_ns` nanoseconds and, when `repeat_ns` is not 0,
 * every `repeat_ns` after that (on a fixed grid: a late run does not push later ones back; runs
 * missed entirely are skipped). Any thread. Timers due at the same instant run in the order they
 * were started. Deadlines are kept in nanoseconds; a timer never runs early.
 *
 * When `out` is not NULL, stores a handle there to cancel, fire or move the timer; release it
 * with uvloop_timer_release. With `out` NULL the timer cannot be cancelled.
 *
 * Returns 0; UVLOOP_ESHUTDOWN or UVLOOP_EDETACHED when the loop no longer accepts work;
 * UVLOOP_EINVAL for a NULL `l` or `fn`.
 */
int uvloop_timer_start(uvloop_t *l, uint64_t delay_ns, uint64_t repeat_ns, uvloop_cb fn, void *ctx,
                       uvloop_timer_t **out);

/*
 * Cancels the timer. Any thread. Returns 1 when this call kept the timer from running (again):
 * its callback will not be called any more; 0 when it had already run (one-shot), been fired or
 * cancelled, or its loop shut down; UVLOOP_EINVAL for NULL. From another thread, a repeating
 * timer's callback that was already running when this was called may still be running: free its
 * context on the loop thread (post the free).
 */
int uvloop_timer_cancel(uvloop_timer_t *t);

/*
 * Runs the timer's callback now, on the loop thread, and ends the timer (a repeating one too).
 * Any thread: on the loop thread it runs inline; from another thread this waits, as
 * uvloop_invoke does, until the loop thread has run it (the loop must be turning). One
 * exception: a timer that another thread started, and whose start has not reached the loop yet,
 * is marked fired and runs as soon as its start arrives, just after this returns 1.
 * Returns 1 when this call ran it; 0 when it had already ended; from another thread,
 * UVLOOP_ESHUTDOWN, UVLOOP_EDETACHED or UVLOOP_EDEADLOCK as uvloop_invoke (the timer is still
 * pending then); UVLOOP_EINVAL for NULL.
 */
int uvloop_timer_fire(uvloop_timer_t *t);

/*
 * Moves a pending timer's next run to `delay_ns` nanoseconds from now (libuv's uv_timer_again):
 * the callback, the handle and a repeating timer's interval stay. Any thread; from another
 * thread the move reaches the loop in order with the caller's posts. Returns 1 when the timer
 * was pending; 0 when it had ended; UVLOOP_EINVAL for NULL.
 */
int uvloop_timer_again(uvloop_timer_t *t, uint64_t delay_ns);

/*
 * Whether the timer may still run: 1 or 0. Any thread. 0 for NULL.
 */
int uvloop_timer_is_pending(const uvloop_timer_t *t);

/*
 * Frees the handle. The timer itself is not cancelled. Any thread; NULL is ignored.
 */
void uvloop_timer_release(uvloop_timer_t *t);

/* ---- Timer references (libuv's uv_ref / uv_unref, per timer) ----------------------------------- */

/*
 * Whether the timer keeps the loop alive while it is pending: `ref` 1 (what every timer starts
 * as) or 0, as uv_ref and uv_unref set it for a libuv timer. An unreferenced timer still runs on
 * time while the loop runs for something else, but the owner's uv_run(loop, UV_RUN_DEFAULT)
 * returns once only unreferenced timers are left (with nothing else of the owner's active and
 * uvloop_keep_alive off): a daemon's repeating statistics timer, say. Being due does not keep
 * the loop alive either: an unreferenced timer that is due runs when the loop turns for
 * something else. Any thread; from another thread it reaches the loop in order with the
 * caller's posts.
 *
 * Returns 1 when the timer was pending; 0 when it had ended (ran, was fired or cancelled, or its
 * loop shut down or was detached); UVLOOP_EINVAL for NULL.
 */
int uvloop_timer_set_ref(uvloop_timer_t *t, int ref);

/*
 * Whether `handle` is one of UVLoop's own handles (in a uv_walk over the owner's loop): 1 or 0.
 * Any thread, but the answer is only stable on the loop thread.
 */
int uvloop_owns_handle(const uv_handle_t *handle);

/*
 * A message for any error code a uvloop_* or uv_* function returned. Never NULL; the string is
 * static (a code that is neither gets "unknown error"). Any thread.
 */
const char *uvloop_strerror(int err);

/* ==== fork ===================================================================================
 *
 * A pre-forking daemon attaches, sets up, then forks its workers; each child runs the loop:
 *
 *     uvloop_attach(&loop, &l);               on the thread that runs the loop
 *     ... listeners, timers ...
 *     pid_t pid = fork();                     on that same thread, no other thread using l
 *     if (pid == 0) {
 *         uvloop_after_fork(l);               first, in the child, on the thread that forked
 *         uv_run(&loop, UV_RUN_DEFAULT);
 *     }
 *
 * A child starts with its parent's descriptors, whose kernel objects both processes share:
 * libuv's epoll instance and UVLoop's wake-ups. Until uvloop_after_fork, a wake-up from one
 * process can wake the other and a poll in the child can take the parent's events. In a child
 * that has not called it, the loop's next turn and every uvloop_* call on `l` (and its timers)
 * stop the program with a message saying to call uvloop_after_fork (abort(), SIGABRT).
 *
 * What the fork copied carries over: work posted and timers pending at the fork run in both
 * processes; handles stay open in both, as libuv's own do. Not supported, as for any fork of a
 * process with threads: forking on a thread other than the loop thread (the child has no loop
 * thread: uvloop_after_fork returns UVLOOP_ENOTLOOPTHREAD, and the child must not use `l`); a
 * loop running on a thread of its own in a Swift program (Loop.startThread, LoopGroup); posts
 * other threads were making at the fork; thread-pool work in flight at the fork (it never
 * completes in the child). To fork at any other moment, detach, fork, and attach again in each
 * process.
 */

/*
 * Makes `l` usable in a child process after fork(2): calls uv_loop_fork on the attached
 * uv_loop_t (do not call it again) and gives UVLoop's wake-up descriptors (eventfds and a
 * timerfd) kernel objects of the child's own. In the child, on the thread that called fork,
 * which must be the loop thread, before any other use of `l`. In a process that did not fork
 * since `l` was attached (or last reset), it does nothing and returns 0.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD when the calling thread is not the loop thread (the fork
 * was made on another thread: nothing was reset); UVLOOP_EDETACHED (UVLOOP_ESHUTDOWN for a loop
 * made in Swift) when the loop no longer runs; UVLOOP_EINVAL for NULL; a libuv code when
 * uv_loop_fork fails or a descriptor cannot be made (UV_EMFILE).
 */
int uvloop_after_fork(uvloop_t *l);

/* ==== Sockets across the border ================================================================
 *
 * A socket crosses between C and a Swift component as a descriptor, through the component's
 * own entry points; UVLoop needs no function for it. Whoever lets go of a socket keeps nothing
 * of it, and whoever takes it owns it (closes it):
 *
 *   C to Swift: take a descriptor of your own (uv_fileno, then fcntl(fd, F_DUPFD_CLOEXEC, 3)),
 *     close the C handle once its write_queue_size is 0 (uv_close closes only its descriptor),
 *     and pass yours to the component, which opens it with
 *     Loop.openConnection(descriptor:ownership: .take): the StreamConnection owns it from then on.
 *     When that fails, the descriptor is still the caller's to close (the entry point returns the
 *     error code, LoopError.cErrorCode).
 *   Swift to C: StreamConnection.takeDescriptor() closes the connection and returns a new
 *     descriptor for the socket (close-on-exec, non-blocking), owned by whoever gets it: open it
 *     with uv_tcp_open or uv_pipe_open, or close it. It fails, and the connection stays Swift's,
 *     while writes are still queued.
 *
 * On the loop thread, both ways. Bytes a side has already read are its own: hand them over with
 * the descriptor. The peer sees nothing of the hand-over. Examples/c-daemon's upper.h is a
 * component's interface for it.
 */

/* ==== Version ================================================================================
 *
 * The version of this header, and of the library a program runs with (which may be newer: a
 * library with the same major version runs programs built against an older minor). As libuv's
 * UV_VERSION_* and uv_version(). The shared library's SONAME carries the major version
 * (libuvloop.so.0), and pkg-config's Version is this version:
 *     pkg-config --atleast-version=0.1 uvloop
 */
#define UVLOOP_VERSION_MAJOR 0
#define UVLOOP_VERSION_MINOR 1
#define UVLOOP_VERSION_PATCH 0
/* The version as one number, (major << 16) | (minor << 8) | patch, as uvloop_version() returns. */
#define UVLOOP_VERSION_HEX ((UVLOOP_VERSION_MAJOR << 16) | (UVLOOP_VERSION_MINOR << 8) | UVLOOP_VERSION_PATCH)

/*
 * The version of the library the program runs with, (major << 16) | (minor << 8) | patch:
 * compare it with UVLOOP_VERSION_HEX, the header's. Any thread; never fails.
 */
unsigned uvloop_version(void);

/*
 * The same version as text, "MAJOR.MINOR.PATCH" ("0.1.0"). Never NULL; the string is static.
 * Any thread; never fails.
 */
const char *uvloop_version_string(void);

#ifdef __cplusplus
}
#endif

#endif /* UVLOOP_H */
