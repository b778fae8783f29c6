/*
 * Misuse that stops the program, from C: each case runs in a child process of its own, which
 * must print UVLoop's message on stderr and end with SIGABRT (abort()), never SIGILL (a trap
 * instruction, "Illegal instruction", which operators misread as a corrupt binary).
 */
#define _GNU_SOURCE
#include "harness.h"

#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs `misuse` in a child whose stderr is captured; checks that the child died of SIGABRT and
 * that its stderr contains `expected`. */
void expect_misuse_abort(void (*misuse)(void), const char *expected) {
    /* Under valgrind (CAPI_VALGRIND=1) a process that aborts on purpose tells nothing about
     * memory: its live threads are reported as leaks. The normal run checked these cases. */
    if (capi_env_int("VALGRIND", 0)) return;
    int out[2];
    REQUIRE_EQ(pipe(out), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t child = fork();
    REQUIRE_EQ(child >= 0, 1);
    if (child == 0) {
        close(out[0]);
        dup2(out[1], 2);
        misuse();
        fprintf(stderr, "the misuse did not stop the program\n");
        _exit(0);
    }
    close(out[1]);
    char text[8192];
    size_t length = 0;
    ssize_t n;
    while ((n = read(out[0], text + length, sizeof text - 1 - length)) > 0) length += (size_t)n;
    text[length] = '\0';
    close(out[0]);
    int status;
    while (waitpid(child, &status, 0) < 0) {
    }
    CHECK(WIFSIGNALED(status));
    if (WIFSIGNALED(status)) {
        if (WTERMSIG(status) != SIGABRT)
            fprintf(stderr, "    the child died of signal %d (%s), not SIGABRT\n", WTERMSIG(status),
                    strsignal(WTERMSIG(status)));
        CHECK_EQ(WTERMSIG(status), SIGABRT);
    }
    if (strstr(text, expected) == NULL) {
        fprintf(stderr, "    expected a message containing: %s\n    the child printed: %s\n", expected, text);
        CHECK(strstr(text, expected) != NULL);
    }
}

/* ---- a loop attached on one thread and run by another ------------------------------------------ */

static uv_loop_t other_loop;

static void *run_other_loop(void *arg) {
    (void)arg;
    uv_run(&other_loop, UV_RUN_NOWAIT); /* UVLoop's first callback stops the program */
    return NULL;
}

static void attach_here_run_elsewhere(void) {
    uvloop_t *l;
    uv_loop_init(&other_loop);
    uvloop_attach(&other_loop, &l);
    uvloop_post(l, cb_count, NULL); /* something for the turn to do */
    thread_join(thread_start(run_other_loop, NULL));
}

static void run_by_another_thread_aborts(void) {
    expect_misuse_abort(attach_here_run_elsewhere,
                        "was attached (Loop.attach or uvloop_attach) on one thread and is run by another");
}

const capi_test capi_misuse_tests[] = {
    {"misuse_run_by_another_thread_aborts", run_by_another_thread_aborts},
    {NULL, NULL},
};
