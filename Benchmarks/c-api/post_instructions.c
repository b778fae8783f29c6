/* What one uvloop_post costs its caller, from a thread other than the loop's: instructions
 * (callgrind) and the producer's own time, without a loop thread reading the ring meanwhile.
 *
 * A second thread posts N times (below the ring's 16,384, so it never waits for room) to a
 * manual loop; the loop's thread then drains the posts; REPS rounds; prints the fastest round's
 * ns per post. See Benchmarks/README.md, "The fork check on the C posts".
 *
 *   swift build -c release --product uvloop
 *   gcc -O2 -Wall -Wextra -ISources/CUVLoop/include $(pkg-config --cflags libuv) \
 *       Benchmarks/c-api/post_instructions.c -o post_instructions -L.build/release -luvloop -lpthread
 *   LD_LIBRARY_PATH=.build/release ./post_instructions 16000 300
 *   for n in 5000 10000; do LD_LIBRARY_PATH=.build/release valgrind --tool=callgrind \
 *       --toggle-collect=uvloop_post --callgrind-out-file=/dev/null ./post_instructions $n 1; done
 *
 * Instructions per post: the difference of the two "Collected" counts over 5,000.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <uvloop.h>

static uvloop_t *loop;
static long count;
static long ran;
static double fastest = 1e9;

static void work(void *context) {
    (void)context;
    ran++;
}

static double now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void *producer(void *argument) {
    (void)argument;
    double start = now_ns();
    for (long i = 0; i < count; i++) {
        if (uvloop_post(loop, work, NULL) != 0) abort();
    }
    double per_post = (now_ns() - start) / (double)count;
    if (per_post < fastest) fastest = per_post;
    return NULL;
}

int main(int argc, char **argv) {
    count = argc > 1 ? atol(argv[1]) : 16000;
    long rounds = argc > 2 ? atol(argv[2]) : 300;
    if (count < 1 || count > 16000 || rounds < 1) {
        fprintf(stderr, "usage: post_instructions [N (1-16000)] [REPS]\n");
        return 2;
    }
    if (uvloop_new_manual(&loop) != 0) return 1;
    for (long round = 0; round < rounds; round++) {
        pthread_t thread;
        if (pthread_create(&thread, NULL, producer, NULL) != 0) return 1;
        pthread_join(thread, NULL);
        if (uvloop_run_until_idle(loop) != 0) return 1;
    }
    uvloop_release(loop);
    if (ran != count * rounds) return 1;
    printf("%.2f ns per post (fastest of %ld rounds of %ld)\n", fastest, rounds, count);
    return 0;
}
