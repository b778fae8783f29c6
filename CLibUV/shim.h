#ifndef CLIBUV_SHIM_H
#define CLIBUV_SHIM_H
/* UVLoop links the system's libuv (Debian: libuv1-dev); it is never vendored. */
#include <uv.h>
#include <pthread.h>

/* glibc declares pthread_setname_np only under _GNU_SOURCE, which a module map cannot set. */
extern int pthread_setname_np(pthread_t thread, const char *name);

static inline int uvloop_set_thread_name(const char *name) {
    return pthread_setname_np(pthread_self(), name);
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
