/* The C peers of file_read_sequential and file_stat_small. */
#include "cpeers_fs.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- file_read_sequential on libuv: open, a chain of reads, close, each from a callback. */

typedef struct {
    uv_fs_t req;
    uv_loop_t *loop;
    uv_file fd;
    char *buffer;
    long chunk;
    int64_t offset;
    long long chunks;
    int failed;
} read_chain;

static void read_closed(uv_fs_t *req) { uv_fs_req_cleanup(req); }

static void read_next(read_chain *chain);

static void read_done(uv_fs_t *req) {
    read_chain *chain = req->data;
    ssize_t result = req->result;
    uv_fs_req_cleanup(req);
    if (result <= 0) {
        if (result < 0) chain->failed = 1;
        uv_fs_close(chain->loop, &chain->req, chain->fd, read_closed);
        return;
    }
    chain->offset += result;
    chain->chunks += 1;
    read_next(chain);
}

static void read_next(read_chain *chain) {
    uv_buf_t buf = uv_buf_init(chain->buffer, (unsigned int)chain->chunk);
    chain->req.data = chain;
    if (uv_fs_read(chain->loop, &chain->req, chain->fd, &buf, 1, chain->offset, read_done) != 0) chain->failed = 1;
}

static void read_opened(uv_fs_t *req) {
    read_chain *chain = req->data;
    ssize_t result = req->result;
    uv_fs_req_cleanup(req);
    if (result < 0) {
        chain->failed = 1;
        return;
    }
    chain->fd = (uv_file)result;
    read_next(chain);
}

double cp_uv_read_sequential(const char *path, long chunk, long long *bytes) {
    uv_loop_t loop;
    if (uv_loop_init(&loop) != 0) return -1;
    read_chain chain = {.loop = &loop, .chunk = chunk, .buffer = malloc((size_t)chunk)};
    chain.req.data = &chain;
    uint64_t t0 = now_ns();
    if (uv_fs_open(&loop, &chain.req, path, O_RDONLY, 0, read_opened) != 0) chain.failed = 1;
    uv_run(&loop, UV_RUN_DEFAULT);
    uint64_t elapsed = now_ns() - t0;
    free(chain.buffer);
    uv_loop_close(&loop);
    if (chain.failed || chain.chunks == 0) return -1;
    *bytes = chain.offset;
    return (double)elapsed / (double)chain.chunks;
}

double cp_pread_sequential(const char *path, long chunk, long long *bytes) {
    char *buffer = malloc((size_t)chunk);
    uint64_t t0 = now_ns();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(buffer);
        return -1;
    }
    long long offset = 0, chunks = 0;
    for (;;) {
        ssize_t n = pread(fd, buffer, (size_t)chunk, offset);
        if (n < 0) {
            close(fd);
            free(buffer);
            return -1;
        }
        if (n == 0) break;
        offset += n;
        chunks += 1;
    }
    close(fd);
    uint64_t elapsed = now_ns() - t0;
    free(buffer);
    if (chunks == 0) return -1;
    *bytes = offset;
    return (double)elapsed / (double)chunks;
}

/* ---- file_stat_small. */

static char **make_paths(const char *directory, long n) {
    char **paths = calloc((size_t)n, sizeof(char *));
    for (long i = 0; i < n; i++) {
        size_t length = strlen(directory) + 24;
        paths[i] = malloc(length);
        snprintf(paths[i], length, "%s/%ld", directory, i);
    }
    return paths;
}

static void free_paths(char **paths, long n) {
    for (long i = 0; i < n; i++) free(paths[i]);
    free(paths);
}

typedef struct {
    uv_fs_t req;
    uv_loop_t *loop;
    char **paths;
    long n;
    long next;
    int failed;
} stat_chain;

static void stat_done(uv_fs_t *req) {
    stat_chain *chain = req->data;
    if (req->result < 0) chain->failed = 1;
    uv_fs_req_cleanup(req);
    if (chain->failed || ++chain->next == chain->n) return;
    chain->req.data = chain;
    if (uv_fs_stat(chain->loop, &chain->req, chain->paths[chain->next], stat_done) != 0) chain->failed = 1;
}

double cp_uv_stat_files(const char *directory, long n) {
    uv_loop_t loop;
    if (n <= 0 || uv_loop_init(&loop) != 0) return -1;
    stat_chain chain = {.loop = &loop, .paths = make_paths(directory, n), .n = n};
    chain.req.data = &chain;
    uint64_t t0 = now_ns();
    if (uv_fs_stat(&loop, &chain.req, chain.paths[0], stat_done) != 0) chain.failed = 1;
    uv_run(&loop, UV_RUN_DEFAULT);
    uint64_t elapsed = now_ns() - t0;
    free_paths(chain.paths, n);
    uv_loop_close(&loop);
    if (chain.failed || chain.next != n) return -1;
    return (double)elapsed / (double)n;
}

double cp_stat_files(const char *directory, long n) {
    if (n <= 0) return -1;
    char **paths = make_paths(directory, n);
    struct stat status;
    int failed = 0;
    uint64_t t0 = now_ns();
    for (long i = 0; i < n; i++)
        if (stat(paths[i], &status) != 0) failed = 1;
    uint64_t elapsed = now_ns() - t0;
    free_paths(paths, n);
    return failed ? -1 : (double)elapsed / (double)n;
}

/* ---- file_read_ahead on libuv: `depth` uv_fs_read requests in flight at successive offsets,
 * each with its own buffer; a completion takes the next offset. The bytes are counted, not
 * reordered (what a consumer would do with them is not measured). */

typedef struct read_ahead read_ahead;

typedef struct {
    uv_fs_t req;
    read_ahead *owner;
    char *buffer;
} read_ahead_slot;

struct read_ahead {
    uv_loop_t *loop;
    uv_file fd;
    long chunk;
    int64_t next_offset;
    long long bytes;
    long long chunks;
    int running;
    int failed;
};

static void read_ahead_next(read_ahead_slot *slot);

static void read_ahead_done(uv_fs_t *req) {
    read_ahead_slot *slot = req->data;
    read_ahead *ahead = slot->owner;
    ssize_t result = req->result;
    uv_fs_req_cleanup(req);
    if (result <= 0) {
        if (result < 0) ahead->failed = 1;
        ahead->running -= 1;
        return;
    }
    ahead->bytes += result;
    ahead->chunks += 1;
    read_ahead_next(slot);
}

static void read_ahead_next(read_ahead_slot *slot) {
    read_ahead *ahead = slot->owner;
    uv_buf_t buf = uv_buf_init(slot->buffer, (unsigned int)ahead->chunk);
    int64_t offset = ahead->next_offset;
    ahead->next_offset += ahead->chunk;
    slot->req.data = slot;
    if (uv_fs_read(ahead->loop, &slot->req, ahead->fd, &buf, 1, offset, read_ahead_done) != 0) {
        ahead->failed = 1;
        ahead->running -= 1;
    }
}

double cp_uv_read_ahead(const char *path, long chunk, int depth, long long *bytes) {
    uv_loop_t loop;
    if (depth < 1 || uv_loop_init(&loop) != 0) return -1;
    read_ahead ahead = {.loop = &loop, .chunk = chunk};
    read_ahead_slot *slots = calloc((size_t)depth, sizeof(read_ahead_slot));
    for (int i = 0; i < depth; i++) {
        slots[i].owner = &ahead;
        slots[i].buffer = malloc((size_t)chunk);
    }
    uint64_t t0 = now_ns();
    uv_fs_t open_req;
    int fd = uv_fs_open(NULL, &open_req, path, O_RDONLY, 0, NULL);
    uv_fs_req_cleanup(&open_req);
    if (fd >= 0) {
        ahead.fd = fd;
        ahead.running = depth;
        for (int i = 0; i < depth; i++) read_ahead_next(&slots[i]);
        uv_run(&loop, UV_RUN_DEFAULT);
        uv_fs_t close_req;
        uv_fs_close(NULL, &close_req, fd, NULL);
        uv_fs_req_cleanup(&close_req);
    }
    uint64_t elapsed = now_ns() - t0;
    for (int i = 0; i < depth; i++) free(slots[i].buffer);
    free(slots);
    uv_loop_close(&loop);
    if (fd < 0 || ahead.failed || ahead.chunks == 0) return -1;
    *bytes = ahead.bytes;
    return (double)elapsed / (double)ahead.chunks;
}

/* ---- file_stat_concurrent on libuv: `depth` uv_fs_stat requests in flight, each completion
 * starting the next path. */

typedef struct stat_ahead stat_ahead;

typedef struct {
    uv_fs_t req;
    stat_ahead *owner;
} stat_ahead_slot;

struct stat_ahead {
    uv_loop_t *loop;
    char **paths;
    long n;
    long next;
    long done;
    int failed;
};

static void stat_ahead_next(stat_ahead_slot *slot);

static void stat_ahead_done(uv_fs_t *req) {
    stat_ahead_slot *slot = req->data;
    if (req->result < 0) slot->owner->failed = 1;
    uv_fs_req_cleanup(req);
    slot->owner->done += 1;
    stat_ahead_next(slot);
}

static void stat_ahead_next(stat_ahead_slot *slot) {
    stat_ahead *ahead = slot->owner;
    if (ahead->failed || ahead->next == ahead->n) return;
    slot->req.data = slot;
    if (uv_fs_stat(ahead->loop, &slot->req, ahead->paths[ahead->next++], stat_ahead_done) != 0) ahead->failed = 1;
}

double cp_uv_stat_concurrent(const char *directory, long n, int depth) {
    uv_loop_t loop;
    if (n <= 0 || depth < 1 || uv_loop_init(&loop) != 0) return -1;
    stat_ahead ahead = {.loop = &loop, .paths = make_paths(directory, n), .n = n};
    stat_ahead_slot *slots = calloc((size_t)depth, sizeof(stat_ahead_slot));
    uint64_t t0 = now_ns();
    for (int i = 0; i < depth; i++) {
        slots[i].owner = &ahead;
        stat_ahead_next(&slots[i]);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    uint64_t elapsed = now_ns() - t0;
    free(slots);
    free_paths(ahead.paths, n);
    uv_loop_close(&loop);
    if (ahead.failed || ahead.done != n) return -1;
    return (double)elapsed / (double)n;
}
