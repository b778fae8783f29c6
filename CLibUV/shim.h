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
#endif
