// echo-libuv: the raw C libuv echo server of the server benchmark, the floor the others are
// measured against. What a careful C programmer writes: one handle per connection, reads into
// one buffer shared by every connection (the loop is single-threaded), `uv_try_write` first and a
// queued `uv_write` (one malloc holding the request and a copy of the rest) only for what the
// kernel refused; reading stops while more than 1 MiB waits to be written.
//
//   echo-libuv --port N [--host ADDRESS] | --unix PATH [--addresses 1]
//
// --addresses 1 reads each accepted connection's local and peer address (getsockname and
// getpeername), as UVLoop's StreamConnection does: the cost of those two calls, measured alone.
//
// Prints "listening on PORT-OR-PATH" once it accepts; SIGTERM or SIGINT stops it.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

#define HIGH_WATER (1024 * 1024)

struct connection {
    union {
        uv_tcp_t tcp;
        uv_pipe_t pipe;
        uv_stream_t stream;
        uv_handle_t handle;
    } h;
};

struct pending_write {
    uv_write_t request;
    uv_buf_t buffer;
    // the copied bytes follow
};

static uv_loop_t *loop;
static union {
    uv_tcp_t tcp;
    uv_pipe_t pipe;
    uv_stream_t stream;
    uv_handle_t handle;
} server;
static int is_unix;
static int read_addresses;
static char read_buffer[65536];
static uv_signal_t sigterm, sigint;

static void allocate(uv_handle_t *handle, size_t suggested, uv_buf_t *buffer) {
    (void)handle;
    (void)suggested;
    // libuv lends the buffer to one read callback at a time on this thread, which echoes or
    // copies the bytes before it returns.
    *buffer = uv_buf_init(read_buffer, sizeof read_buffer);
}

static void closed(uv_handle_t *handle) {
    free(handle);
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer);

static void written(uv_write_t *request, int status) {
    uv_stream_t *stream = request->handle;
    free(request);
    if (status < 0) return;
    if (uv_stream_get_write_queue_size(stream) < HIGH_WATER / 2 && !uv_is_closing((uv_handle_t *)stream)) {
        uv_read_start(stream, allocate, on_read);
    }
}

static void on_read(uv_stream_t *stream, ssize_t nread, const uv_buf_t *buffer) {
    if (nread < 0) {
        uv_close((uv_handle_t *)stream, closed);
        return;
    }
    if (nread == 0) return;
    uv_buf_t out = uv_buf_init(buffer->base, (unsigned int)nread);
    int taken = uv_try_write(stream, &out, 1);
    if (taken == nread) return;
    if (taken < 0 && taken != UV_EAGAIN) {
        uv_close((uv_handle_t *)stream, closed);
        return;
    }
    size_t done = taken > 0 ? (size_t)taken : 0;
    size_t rest = (size_t)nread - done;
    struct pending_write *pending = malloc(sizeof *pending + rest);
    if (pending == NULL) abort();
    memcpy(pending + 1, buffer->base + done, rest);
    pending->buffer = uv_buf_init((char *)(pending + 1), (unsigned int)rest);
    if (uv_write(&pending->request, stream, &pending->buffer, 1, written) != 0) {
        free(pending);
        uv_close((uv_handle_t *)stream, closed);
        return;
    }
    if (uv_stream_get_write_queue_size(stream) > HIGH_WATER) uv_read_stop(stream);
}

static void on_connection(uv_stream_t *listener, int status) {
    if (status < 0) return;
    struct connection *c = malloc(sizeof *c);
    if (c == NULL) abort();
    if (is_unix) uv_pipe_init(loop, &c->h.pipe, 0);
    else uv_tcp_init(loop, &c->h.tcp);
    if (uv_accept(listener, &c->h.stream) != 0) {
        uv_close(&c->h.handle, closed);
        return;
    }
    if (!is_unix) uv_tcp_nodelay(&c->h.tcp, 1);
    if (read_addresses) {
        struct sockaddr_storage local, peer;
        int local_length = sizeof local, peer_length = sizeof peer;
        char local_path[256], peer_path[256];
        size_t local_size = sizeof local_path, peer_size = sizeof peer_path;
        if (is_unix) {
            uv_pipe_getsockname(&c->h.pipe, local_path, &local_size);
            uv_pipe_getpeername(&c->h.pipe, peer_path, &peer_size);
        } else {
            uv_tcp_getsockname(&c->h.tcp, (struct sockaddr *)&local, &local_length);
            uv_tcp_getpeername(&c->h.tcp, (struct sockaddr *)&peer, &peer_length);
        }
    }
    uv_read_start(&c->h.stream, allocate, on_read);
}

static void close_any(uv_handle_t *handle, void *argument) {
    (void)argument;
    if (!uv_is_closing(handle)) uv_close(handle, handle->data == (void *)1 ? NULL : closed);
}

static void on_signal(uv_signal_t *signal, int number) {
    (void)signal;
    (void)number;
    server.handle.data = (void *)1;   // static storage: closed without free
    sigterm.data = (void *)1;
    sigint.data = (void *)1;
    uv_walk(loop, close_any, NULL);
}

static void check(int status, const char *what) {
    if (status == 0) return;
    fprintf(stderr, "echo-libuv: %s: %s\n", what, uv_strerror(status));
    exit(2);
}

int main(int argc, char **argv) {
    const char *host = "127.0.0.1", *unix_path = NULL;
    int port = -1;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--port") == 0) port = atoi(argv[i + 1]);
        else if (strcmp(argv[i], "--host") == 0) host = argv[i + 1];
        else if (strcmp(argv[i], "--unix") == 0) unix_path = argv[i + 1];
        else if (strcmp(argv[i], "--addresses") == 0) read_addresses = atoi(argv[i + 1]);
    }
    if ((port < 0) == (unix_path == NULL)) {
        fprintf(stderr, "usage: echo-libuv --port N [--host ADDRESS] | --unix PATH\n");
        return 2;
    }
    signal(SIGPIPE, SIG_IGN);
    loop = uv_default_loop();
    if (unix_path != NULL) {
        is_unix = 1;
        unlink(unix_path);
        check(uv_pipe_init(loop, &server.pipe, 0), "uv_pipe_init");
        check(uv_pipe_bind(&server.pipe, unix_path), "bind");
    } else {
        struct sockaddr_storage address;
        if (uv_ip4_addr(host, port, (struct sockaddr_in *)&address) != 0) {
            check(uv_ip6_addr(host, port, (struct sockaddr_in6 *)&address), "address");
        }
        check(uv_tcp_init(loop, &server.tcp), "uv_tcp_init");
        check(uv_tcp_bind(&server.tcp, (const struct sockaddr *)&address, 0), "bind");
    }
    check(uv_listen(&server.stream, 511, on_connection), "listen");
    if (unix_path != NULL) {
        printf("listening on %s\n", unix_path);
    } else {
        struct sockaddr_storage bound;
        int length = sizeof bound;
        check(uv_tcp_getsockname(&server.tcp, (struct sockaddr *)&bound, &length), "getsockname");
        printf("listening on %d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));
    }
    fflush(stdout);
    uv_signal_init(loop, &sigterm);
    uv_signal_start_oneshot(&sigterm, on_signal, SIGTERM);
    uv_signal_init(loop, &sigint);
    uv_signal_start_oneshot(&sigint, on_signal, SIGINT);
    uv_run(loop, UV_RUN_DEFAULT);
    if (unix_path != NULL) unlink(unix_path);
    uv_loop_close(loop);
    return 0;
}
