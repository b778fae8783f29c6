/* The C floor of process_spawn_wait: posix_spawn a program, waitpid for it, n times in a row. */
#include "cpeers_spawn.h"

#include <spawn.h>
#include <sys/wait.h>
#include <time.h>

extern char **environ;

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

double cp_spawn_wait(const char *path, long n) {
    char *argv[] = {(char *)path, NULL};
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++) {
        pid_t pid;
        if (posix_spawn(&pid, path, NULL, NULL, argv, environ) != 0) return -1;
        int status;
        while (waitpid(pid, &status, 0) < 0) {}
        if (!WIFEXITED(status)) return -1;
    }
    return (double)(now_ns() - t0) / (double)n;
}
