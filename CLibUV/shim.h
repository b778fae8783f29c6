#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H
/* UVLoop links the system's libuv (Debian: libuv1-dev); it is never vendored. */
#include <uv.h>
#include <pthread.h>
#include <errno.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

/* glibc declares pthread_setname_np only under _GNU_SOURCE, which a module map cannot set. */
extern int pthread_setname_np(pthread_t thread, const char *name);

static inline int shim_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/* The wake-up counter behind a loop's wake handle: an eventfd, non-blocking (so draining an
 * already drained counter returns at once) and closed on exec. Returns the fd, or -errno. */
static inline int shim_eventfd_open(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

/* Adds one to the counter, which makes the fd readable. Thread-safe (one write system call). */
static inline void shim_eventfd_signal(int fd) {
    eventfd_t one = 1;
    while (eventfd_write(fd, one) != 0 && errno == EINTR) {}
}

/* Resets the counter to zero; nothing to read is not an error. */
static inline void shim_eventfd_drain(int fd) {
    eventfd_t value;
    while (eventfd_read(fd, &value) != 0 && errno == EINTR) {}
}

/* uv_loop_configure is variadic, which Swift cannot call: the one option UVLoop sets. With it,
 * libuv measures the time the loop waits in the kernel (uv_metrics_idle_time), for Loop.metrics. */
static inline int shim_loop_measure_idle_time(uv_loop_t *loop) {
    return uv_loop_configure(loop, UV_METRICS_IDLE_TIME);
}

/* Closes a descriptor UVLoop opened (a wake eventfd or timerfd). */
static inline void shim_close_fd(int fd) {
    close(fd);
}

/* The timer behind a loop's wake timer: a timerfd on CLOCK_MONOTONIC (the clock of the loop's
 * timers), non-blocking and closed on exec. Returns the fd, or -errno. */
static inline int shim_timerfd_open(void) {
    int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

/* Arms the timer to expire at `deadline` nanoseconds of CLOCK_MONOTONIC (at once if that has
 * passed), replacing any earlier setting and clearing expirations not yet read. Returns 0 or
 * -errno. An all-zero setting would disarm the timer, so the earliest deadline is 1 ns. */
static inline int shim_timerfd_arm(int fd, uint64_t deadline) {
    struct itimerspec setting = {0};
    if (deadline == 0) deadline = 1;
    setting.it_value.tv_sec = (time_t)(deadline / 1000000000u);
    setting.it_value.tv_nsec = (long)(deadline % 1000000000u);
    return timerfd_settime(fd, TFD_TIMER_ABSTIME, &setting, NULL) < 0 ? -errno : 0;
}

/* The time left until the timer expires, in nanoseconds (0 when disarmed), or -errno; for tests. */
static inline int64_t shim_timerfd_remaining(int fd) {
    struct itimerspec setting;
    if (timerfd_gettime(fd, &setting) < 0) return -errno;
    return (int64_t)setting.it_value.tv_sec * 1000000000 + setting.it_value.tv_nsec;
}

/* Reads the expiration count, which makes the fd unreadable again; nothing to read is not an error. */
static inline void shim_timerfd_drain(int fd) {
    uint64_t expirations;
    while (read(fd, &expirations, sizeof expirations) < 0 && errno == EINTR) {}
}

/* The calling thread's thread pointer, which glibc's pthread_self() returns: one instruction, and
 * different for every live thread (a thread started after another has exited may get its value). */
static inline uintptr_t shim_thread_pointer(void) {
    return (uintptr_t)__builtin_thread_pointer();
}

/* ThreadSanitizer's annotation entry points. Weak: they resolve only in a program built with
 * -sanitize=thread, and are null (so the calls below do nothing) everywhere else. */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

static inline void shim_tsan_acquire(void *addr) {
    if (__tsan_acquire) __tsan_acquire(addr);
}

static inline void shim_tsan_release(void *addr) {
    if (__tsan_release) __tsan_release(addr);
}
/* ---- fork: a child's own wake-up descriptors ------------------------------------------------
 * After fork(2) the child shares every descriptor's kernel object with its parent: an eventfd
 * that either process signals wakes both. These replace the object behind a descriptor number
 * with a new one of the child's own (eventfd(2) or timerfd_create(2), then dup3(2) onto the same
 * number, close-on-exec), so that the handles polling the number need not change. */
extern int dup3(int oldfd, int newfd, int flags);

/* The kind of anonymous descriptor `fd` is, from /proc/self/fd: 1 for an eventfd, 2 for a
 * timerfd, 0 for anything else. */
static inline int shim_fd_anon_kind(int fd) {
    char path[64], target[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n <= 0) return 0;
    target[n] = '\0';
    if (strcmp(target, "anon_inode:[eventfd]") == 0) return 1;
    if (strcmp(target, "anon_inode:[timerfd]") == 0) return 2;
    return 0;
}

/* Puts a new eventfd (kind 1) or timerfd (kind 2), non-blocking, behind descriptor `fd`.
 * Returns 0 or -errno. */
static inline int shim_fd_renew_anon(int fd, int kind) {
    int fresh = kind == 1 ? eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)
                          : timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
    if (fresh < 0) return -errno;
    int rc = 0;
    while (dup3(fresh, fd, O_CLOEXEC) < 0) {
        if (errno != EINTR) {
            rc = -errno;
            break;
        }
    }
    close(fresh);
    return rc;
}

#endif
