#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H
/* UVLoop links the system's libuv (Debian: libuv1-dev); it is never vendored. */
#include <uv.h>
#include <pthread.h>
#include <errno.h>
#include <sys/eventfd.h>
#include <unistd.h>

/* glibc declares pthread_setname_np only under _GNU_SOURCE, which a module map cannot set. */
extern int pthread_setname_np(pthread_t thread, const char *name);

static inline int uvloop_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
}

/* The wake-up counter behind a loop's wake handle: an eventfd, non-blocking (so draining an
 * already drained counter returns at once) and closed on exec. Returns the fd, or -errno. */
static inline int uvloop_eventfd_open(void) {
    int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    return fd < 0 ? -errno : fd;
}

/* Adds one to the counter, which makes the fd readable. Thread-safe (one write system call). */
static inline void uvloop_eventfd_signal(int fd) {
    eventfd_t one = 1;
    while (eventfd_write(fd, one) != 0 && errno == EINTR) {}
}

/* Resets the counter to zero; nothing to read is not an error. */
static inline void uvloop_eventfd_drain(int fd) {
    eventfd_t value;
    while (eventfd_read(fd, &value) != 0 && errno == EINTR) {}
}

static inline void uvloop_eventfd_close(int fd) {
    close(fd);
}

/* ThreadSanitizer's annotation entry points. Weak: they resolve only in a program built with
 * -sanitize=thread, and are null (so the calls below do nothing) everywhere else. */
extern void __tsan_acquire(void *addr) __attribute__((weak));
extern void __tsan_release(void *addr) __attribute__((weak));

static inline void uvloop_tsan_acquire(void *addr) {
    if (__tsan_acquire) __tsan_acquire(addr);
}

static inline void uvloop_tsan_release(void *addr) {
    if (__tsan_release) __tsan_release(addr);
}
#endif
