/*
 * Runs the C API tests, each in a child process of its own under a time limit (CAPI_TIMEOUT
 * seconds, 30 by default), and prints one line per test and a last line
 * "c-api tests: N passed, M failed". Arguments: substrings of the tests to run (all by default).
 * CAPI_NOFORK=1 runs the tests in this process instead (for a debugger).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int selected(const char *name, int argc, char **argv) {
    if (argc < 2) return 1;
    for (int i = 1; i < argc; i++)
        if (strstr(name, argv[i])) return 1;
    return 0;
}

/* Runs one test in a child; returns whether it passed. */
static int run_forked(const capi_test *test, int timeout) {
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        return 0;
    }
    if (child == 0) {
        alarm((unsigned)timeout);
        test->run();
        exit(capi_failures() == 0 ? 0 : 1);
    }
    int status;
    while (waitpid(child, &status, 0) < 0) {
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 1;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        fprintf(stderr, "    timed out after %d s (a hang: something waited for work that never ran)\n", timeout);
    else if (WIFSIGNALED(status))
        fprintf(stderr, "    killed by signal %d (%s)\n", WTERMSIG(status), strsignal(WTERMSIG(status)));
    return 0;
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const capi_test *tables[] = {
        capi_loop_tests, capi_post_tests, capi_timer_tests, capi_race_tests,
        capi_misuse_tests, capi_fork_tests, capi_version_tests,
        capi_ref_tests, capi_try_post_tests, capi_value_post_tests, capi_metrics_tests, capi_manual_tests,
    };
    int timeout = capi_env_int("TIMEOUT", 30);
    int nofork = capi_env_int("NOFORK", 0);
    int passed = 0, failed = 0;
    for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++) {
        for (const capi_test *test = tables[t]; test->name; test++) {
            if (!selected(test->name, argc, argv)) continue;
            int before = capi_failures();
            double start = capi_seconds();
            int ok;
            if (nofork) {
                test->run();
                ok = capi_failures() == before;
            } else {
                ok = run_forked(test, timeout);
            }
            /* The time is for reading, not checked: nothing here asserts on speed. */
            printf("%s %s (%.0f ms)\n", ok ? "ok  " : "FAIL", test->name, (capi_seconds() - start) * 1000);
            if (ok)
                passed++;
            else
                failed++;
        }
    }
    printf("c-api tests: %d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
