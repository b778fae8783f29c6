/*
 * c-daemon: a C daemon that owns its libuv loop and runs a Swift component on it through UVLoop.
 *
 *   c-daemon [--port N] [--events N] [--report-ms N] [--idle-timeout-ms N] [--stall-ms N]
 *
 * main() owns a uv_loop_t and runs it with uv_run. UVLoop is attached to it (uvloop.h), and on it:
 *   - a TCP line server in C on 127.0.0.1 (--port 0, the default, picks a free port; the port is
 *     printed). Commands: stats, ping, time, help, swift, quit. A connection that sends no line
 *     for --idle-timeout-ms is closed by a UVLoop timer started from C;
 *   - a protocol handler in Swift (upper.h): "swift" hands the connection's socket to it, and
 *     its "c" hands the socket back to the C server (sockets across the border, both ways);
 *   - a C worker pthread that produces --events sequence-numbered events and sends them to the
 *     Swift statistics component (stats.h), then posts its exit notice to the loop (uvloop_post);
 *   - the component, which counts the events on the loop thread, checks their order, prints a
 *     report every --report-ms (on an unreferenced timer: it never keeps the loop running on its
 *     own) and computes percentiles in a background operation;
 *   - the loop's health (uvloop_metrics) in the stats reply, and a stall callback that logs every
 *     loop turn busy for longer than --stall-ms;
 *   - SIGTERM and SIGINT watchers (uv_signal_t): stop the worker, detach UVLoop, close every
 *     handle. uv_loop_close then returns 0 and the process exits with status 0.
 *
 * Build: cc daemon.c $(pkg-config --cflags --libs uvloop)    (see ./build)
 */
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uv.h>
#include <uvloop.h>

#include "stats.h"
#include "upper.h"

typedef struct daemon_s daemon_t;

/* One client connection. Loop thread only. */
typedef struct conn_s {
    uv_tcp_t tcp;
    uv_shutdown_t shutdown;
    daemon_t *d;
    uvloop_t *uvloop;
    uvloop_timer_t *idle; /* closes the connection after idle_timeout_ms without a line */
    struct conn_s *prev, *next;
    int closing;
    int to_swift; /* the line just handled was "swift": hand the socket to Swift */
    size_t len;
    char buf[1024];
} conn_t;

struct daemon_s {
    uv_loop_t loop;
    uvloop_t *uvloop;
    uv_tcp_t server;
    uv_signal_t sigterm, sigint;
    conn_t *conns;
    uint64_t events_wanted, report_ms, idle_timeout_ms, stall_ms;
    uint64_t health_busy_ns, health_idle_ns; /* the loop's figures at the last stats line */
    uint64_t stalls;                         /* long turns reported by the stall callback */
    int stopping; /* loop thread */
    /* The worker thread. */
    pthread_t worker;
    int worker_started, worker_exited; /* loop thread */
    atomic_int stop_worker;            /* set by the loop thread, read by the worker */
    uint64_t worker_sent;              /* written by the worker before its exit notice */
    uint64_t worker_ns;                /* likewise: how long it took */
    int worker_rc;                     /* likewise */
    uint64_t handed_to_swift, returned_from_swift; /* connections, loop thread */
};

static void die(const char *what, int rc) {
    fprintf(stderr, "c-daemon: %s: %s\n", what, uvloop_strerror(rc));
    exit(1);
}

/* ---- the worker thread ---------------------------------------------------------------------- */

static void finish_shutdown(daemon_t *d);

/* The worker's exit notice, on the loop thread: uvloop_post ran it after the worker's last send. */
static void on_worker_exit(void *ctx) {
    daemon_t *d = ctx;
    pthread_join(d->worker, NULL);
    d->worker_exited = 1;
    if (d->worker_rc != 0) printf("worker: stopped by an error: %s\n", uvloop_strerror(d->worker_rc));
    printf("worker: done, %" PRIu64 " events sent in %" PRIu64 " ms\n", d->worker_sent,
           d->worker_ns / 1000000);
    if (d->stopping) finish_shutdown(d);
}

/* Produces the events: sequence numbers 1, 2, 3, ... with a pseudo-random value each. */
static void *worker_main(void *arg) {
    daemon_t *d = arg;
    uint64_t x = 88172645463325252u, sequence, sent = 0, start = uv_hrtime();
    int rc = 0;
    for (sequence = 1; sequence <= d->events_wanted; sequence++) {
        if (atomic_load_explicit(&d->stop_worker, memory_order_relaxed)) break;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* Any thread: the component counts it on the loop thread, in this thread's order. */
        rc = stats_component_event(sequence, x % 10000);
        if (rc != 0) break;
        sent++;
    }
    d->worker_sent = sent;
    d->worker_ns = uv_hrtime() - start;
    d->worker_rc = rc;
    /* Posting orders these writes before on_worker_exit's reads. The loop is still attached:
     * the loop thread detaches only after this notice has run. */
    rc = uvloop_post(d->uvloop, on_worker_exit, d);
    if (rc != 0) fprintf(stderr, "worker: uvloop_post: %s\n", uvloop_strerror(rc));
    return NULL;
}

/* ---- connections ------------------------------------------------------------------------------ */

typedef struct {
    uv_write_t req;
    char data[];
} write_req_t;

static void on_conn_closed(uv_handle_t *handle) {
    free(handle->data);
}

static void conn_close(conn_t *c) {
    if (c->closing) return;
    c->closing = 1;
    if (c->idle != NULL) {
        uvloop_timer_cancel(c->idle); /* on the loop thread: on_idle will not run */
        uvloop_timer_release(c->idle);
        c->idle = NULL;
    }
    if (c->prev) c->prev->next = c->next;
    else c->d->conns = c->next;
    if (c->next) c->next->prev = c->prev;
    uv_close((uv_handle_t *)&c->tcp, on_conn_closed);
}

static void on_written(uv_write_t *req, int status) {
    (void)status;
    free(req);
}

/* Sends `text` (one line, newline included): at once when the socket takes it, else queued. */
static void conn_send(conn_t *c, const char *text) {
    size_t len = strlen(text);
    uv_buf_t buf = uv_buf_init((char *)text, (unsigned)len);
    int n = uv_try_write((uv_stream_t *)&c->tcp, &buf, 1);
    if (n == (int)len) return;
    if (n < 0 && n != UV_EAGAIN) {
        conn_close(c);
        return;
    }
    if (n < 0) n = 0;
    write_req_t *w = malloc(sizeof *w + len - (size_t)n);
    if (w == NULL) {
        conn_close(c);
        return;
    }
    memcpy(w->data, text + n, len - (size_t)n);
    buf = uv_buf_init(w->data, (unsigned)(len - (size_t)n));
    if (uv_write(&w->req, (uv_stream_t *)&c->tcp, &buf, 1, on_written) != 0) {
        free(w);
        conn_close(c);
    }
}

static void on_shut_down(uv_shutdown_t *req, int status) {
    (void)status;
    conn_close(req->data);
}

/* Sends a last line, then closes the connection once it is written. */
static void conn_finish(conn_t *c, const char *text) {
    conn_send(c, text);
    if (c->closing) return;
    uv_read_stop((uv_stream_t *)&c->tcp);
    c->shutdown.data = c;
    if (uv_shutdown(&c->shutdown, (uv_stream_t *)&c->tcp, on_shut_down) != 0) conn_close(c);
}

/* The idle timeout: a UVLoop timer, on the loop thread. */
static void on_idle(void *ctx) {
    conn_t *c = ctx;
    char line[96];
    snprintf(line, sizeof line, "bye: idle for %" PRIu64 " ms\n", c->d->idle_timeout_ms);
    conn_finish(c, line);
}

static void reply_stats(conn_t *c) {
    daemon_t *d = c->d;
    stats_snapshot_t s;
    uvloop_metrics_t m;
    char line[512];
    int rc = stats_component_snapshot(&s);
    if (rc == 0) rc = uvloop_metrics(d->uvloop, &m);
    if (rc != 0) {
        snprintf(line, sizeof line, "error: stats: %s\n", uvloop_strerror(rc));
    } else {
        int in_order = s.out_of_order == 0 && s.last_sequence == s.events;
        const char *worker = !d->worker_started ? "none" : d->worker_exited ? "done" : "running";
        /* The loop's health: its share of busy time since the last stats line, its turns, and
         * the work waiting when it last polled. */
        uint64_t busy = m.busy_ns - d->health_busy_ns, idle = m.idle_ns - d->health_idle_ns;
        unsigned busy_permille = busy + idle > 0 ? (unsigned)(busy * 1000 / (busy + idle)) : 0;
        d->health_busy_ns = m.busy_ns;
        d->health_idle_ns = m.idle_ns;
        snprintf(line, sizeof line,
                 "stats events=%" PRIu64 " in_order=%s out_of_order=%" PRIu64 " last_sequence=%" PRIu64
                 " reports=%" PRIu64 " digests=%" PRIu64 " p50=%" PRIu64 " p99=%" PRIu64
                 " loop_turns=%" PRIu64 " loop_busy=%u.%u%% loop_waiting=%" PRIu64 " loop_stalls=%" PRIu64
                 " worker=%s\n",
                 s.events, in_order ? "yes" : "no", s.out_of_order, s.last_sequence, s.reports, s.digests,
                 s.p50, s.p99, m.iterations, busy_permille / 10, busy_permille % 10,
                 m.posted + m.next_iteration + m.inbox_messages, d->stalls, worker);
    }
    conn_send(c, line);
}

/* A loop turn busy for longer than --stall-ms: logged, and counted in the stats line. */
static void on_stall(void *ctx, const uvloop_stall_t *stall) {
    daemon_t *d = ctx;
    d->stalls++;
    printf("stall: a loop turn was busy for %" PRIu64 " ms (%" PRIu64 " posted jobs, %" PRIu64 " timers)\n",
           stall->duration_ns / 1000000, stall->posted_jobs, stall->timers_fired);
}

static void handle_line(conn_t *c, const char *line) {
    char reply[160];
    if (line[0] == '\0') return;
    if (strcmp(line, "stats") == 0) {
        reply_stats(c);
    } else if (strcmp(line, "ping") == 0) {
        conn_send(c, "pong\n");
    } else if (strcmp(line, "time") == 0) {
        snprintf(reply, sizeof reply, "time_ns=%" PRIu64 "\n", uvloop_now(c->uvloop));
        conn_send(c, reply);
    } else if (strcmp(line, "help") == 0) {
        conn_send(c, "commands: stats ping time help swift quit\n");
    } else if (strcmp(line, "swift") == 0) {
        c->to_swift = 1; /* on_read hands the socket over, with the bytes after this line */
    } else if (strcmp(line, "quit") == 0) {
        conn_finish(c, "bye\n");
    } else {
        snprintf(reply, sizeof reply, "error: unknown command '%.64s' (try help)\n", line);
        conn_send(c, reply);
    }
}

static void on_alloc(uv_handle_t *handle, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    conn_t *c = handle->data;
    *buf = uv_buf_init(c->buf + c->len, (unsigned)(sizeof c->buf - c->len));
}

/* Hands the connection's socket to the Swift handler (upper.h), with the bytes the client sent
 * after "swift" (`rest`), and closes the C side's handle: the Swift stream has a descriptor of
 * its own for the socket. On the loop thread. */
static void conn_to_swift(conn_t *c, const char *rest, size_t rest_len) {
    uv_os_fd_t fd;
    /* A reply still queued in C would be cancelled by the close: keep the connection then. */
    if (c->tcp.write_queue_size > 0 || uv_fileno((uv_handle_t *)&c->tcp, &fd) != 0) {
        conn_send(c, "error: busy, try swift again\n");
        return;
    }
    int own = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (own < 0) {
        conn_send(c, "error: no descriptor for swift\n");
        return;
    }
    int rc = upper_handler_adopt(own, rest, rest_len);
    if (rc != 0) {
        close(own); /* still ours: the handler did not take it */
        char reply[160];
        snprintf(reply, sizeof reply, "error: swift: %s\n", uvloop_strerror(rc));
        conn_send(c, reply);
        return;
    }
    c->d->handed_to_swift++;
    conn_close(c);
}

/* Handles the complete lines in c->buf (c->len bytes). */
static void conn_handle_lines(conn_t *c) {
    char *start = c->buf, *end = c->buf + c->len, *newline;
    while (!c->closing && (newline = memchr(start, '\n', (size_t)(end - start))) != NULL) {
        *newline = '\0';
        if (newline > start && newline[-1] == '\r') newline[-1] = '\0';
        handle_line(c, start);
        start = newline + 1;
        if (c->to_swift) {
            c->to_swift = 0;
            conn_to_swift(c, start, (size_t)(end - start));
        }
    }
    if (c->closing) return;
    c->len = (size_t)(end - start);
    memmove(c->buf, start, c->len);
    if (c->len == sizeof c->buf) {
        conn_finish(c, "error: line too long\n");
        return;
    }
    if (c->idle != NULL) uvloop_timer_again(c->idle, c->d->idle_timeout_ms * 1000000u);
}

static void on_read(uv_stream_t *stream, ssize_t n, const uv_buf_t *buf) {
    (void)buf;
    conn_t *c = stream->data;
    if (n < 0) { /* UV_EOF or an error */
        conn_close(c);
        return;
    }
    c->len += (size_t)n;
    conn_handle_lines(c);
}

/* A new connection, in the list, its handle initialized; NULL when out of memory. */
static conn_t *conn_new(daemon_t *d) {
    conn_t *c = calloc(1, sizeof *c);
    if (c == NULL) return NULL;
    c->d = d;
    c->uvloop = d->uvloop;
    uv_tcp_init(&d->loop, &c->tcp);
    c->tcp.data = c;
    c->next = d->conns;
    if (d->conns) d->conns->prev = c;
    d->conns = c;
    return c;
}

/* Starts a connection's idle timer and its reading; returns 0, or closes it. */
static int conn_start(conn_t *c) {
    int rc = uvloop_timer_start(c->d->uvloop, c->d->idle_timeout_ms * 1000000u, 0, on_idle, c, &c->idle);
    if (rc != 0) {
        fprintf(stderr, "c-daemon: uvloop_timer_start: %s\n", uvloop_strerror(rc));
        conn_close(c);
        return rc;
    }
    uv_read_start((uv_stream_t *)&c->tcp, on_alloc, on_read);
    return 0;
}

static void on_connection(uv_stream_t *server, int status) {
    daemon_t *d = server->data;
    if (status < 0) {
        fprintf(stderr, "c-daemon: accept: %s\n", uv_strerror(status));
        return;
    }
    conn_t *c = conn_new(d);
    if (c == NULL) return;
    if (uv_accept(server, (uv_stream_t *)&c->tcp) != 0) {
        conn_close(c);
        return;
    }
    conn_start(c);
}

/* A connection the Swift handler gives back ("c"), on the loop thread: `fd` is ours again, and
 * `pending` holds what the client sent after "c". The C server goes on where it left off. */
static void on_back_from_swift(int fd, const char *pending, size_t length, void *ctx) {
    daemon_t *d = ctx;
    conn_t *c = d->stopping ? NULL : conn_new(d);
    if (c == NULL || length > sizeof c->buf) {
        if (c != NULL) conn_close(c);
        close(fd);
        return;
    }
    if (uv_tcp_open(&c->tcp, fd) != 0) {
        close(fd);
        conn_close(c);
        return;
    }
    d->returned_from_swift++;
    if (conn_start(c) != 0) return;
    conn_send(c, "c: back in C\n");
    memcpy(c->buf, pending, length);
    c->len = length;
    conn_handle_lines(c);
}

/* ---- shutdown --------------------------------------------------------------------------------- */

/* On the loop thread, once the worker has stopped: everything that posts to UVLoop is done. */
static void finish_shutdown(daemon_t *d) {
    while (d->conns != NULL) conn_close(d->conns);
    /* Runs what was posted, delivers every event the component accepted, cancels UVLoop's
     * timers (the component's reports) and closes UVLoop's handles. From inside a UVLoop
     * callback (on_worker_exit), it completes when that callback returns. */
    int rc = uvloop_detach(d->uvloop);
    if (rc != 0) fprintf(stderr, "c-daemon: uvloop_detach: %s\n", uvloop_strerror(rc));
    uv_close((uv_handle_t *)&d->server, NULL);
    uv_close((uv_handle_t *)&d->sigterm, NULL);
    uv_close((uv_handle_t *)&d->sigint, NULL);
    /* uv_run returns once these handles are closed (and the component's background work is). */
}

static void on_signal(uv_signal_t *handle, int signum) {
    daemon_t *d = handle->data;
    if (d->stopping) return;
    d->stopping = 1;
    printf("%s: shutting down\n", signum == SIGTERM ? "SIGTERM" : "SIGINT");
    atomic_store(&d->stop_worker, 1);
    if (!d->worker_started || d->worker_exited) finish_shutdown(d);
    /* Otherwise on_worker_exit finishes, once the worker has stopped sending. */
}

static void print_open_handle(uv_handle_t *handle, void *arg) {
    (void)arg;
    fprintf(stderr, "  open handle: %s%s\n", uv_handle_type_name(handle->type),
            uvloop_owns_handle(handle) ? " (UVLoop's: uvloop_detach was not called)" : "");
}

/* ---- main ------------------------------------------------------------------------------------- */

static uint64_t number(const char *text, const char *option) {
    char *end;
    unsigned long long value = strtoull(text, &end, 10);
    if (*text == '\0' || *end != '\0') {
        fprintf(stderr, "c-daemon: %s wants a number, not '%s'\n", option, text);
        exit(2);
    }
    return value;
}

int main(int argc, char **argv) {
    static const struct option options[] = {
        {"port", required_argument, NULL, 'p'},
        {"events", required_argument, NULL, 'e'},
        {"report-ms", required_argument, NULL, 'r'},
        {"idle-timeout-ms", required_argument, NULL, 'i'},
        {"stall-ms", required_argument, NULL, 's'},
        {NULL, 0, NULL, 0},
    };
    static daemon_t daemon_state;
    daemon_t *d = &daemon_state;
    uint64_t port = 0;
    d->events_wanted = 1000000;
    d->report_ms = 1000;
    d->idle_timeout_ms = 60000;
    d->stall_ms = 250;
    int option;
    while ((option = getopt_long(argc, argv, "", options, NULL)) != -1) {
        switch (option) {
        case 'p': port = number(optarg, "--port"); break;
        case 'e': d->events_wanted = number(optarg, "--events"); break;
        case 'r': d->report_ms = number(optarg, "--report-ms"); break;
        case 'i': d->idle_timeout_ms = number(optarg, "--idle-timeout-ms"); break;
        case 's': d->stall_ms = number(optarg, "--stall-ms"); break;
        default:
            fprintf(stderr, "usage: c-daemon [--port N] [--events N] [--report-ms N] [--idle-timeout-ms N] [--stall-ms N]\n");
            return 2;
        }
    }
    if (port > 65535) die("--port", UV_EINVAL);
    setvbuf(stdout, NULL, _IOLBF, 0);
    signal(SIGPIPE, SIG_IGN);

    int rc = uv_loop_init(&d->loop);
    if (rc != 0) die("uv_loop_init", rc);
    /* On the thread that runs the loop: this one. */
    rc = uvloop_attach(&d->loop, &d->uvloop);
    if (rc != 0) die("uvloop_attach", rc);
    rc = stats_component_start(d->uvloop, d->report_ms);
    if (rc != 0) die("stats_component_start", rc);
    rc = upper_handler_start(d->uvloop, on_back_from_swift, d);
    if (rc != 0) die("upper_handler_start", rc);
    if (d->stall_ms > 0) {
        rc = uvloop_set_stall_cb(d->uvloop, d->stall_ms * 1000000u, on_stall, d);
        if (rc != 0) die("uvloop_set_stall_cb", rc);
    }

    struct sockaddr_in address;
    uv_ip4_addr("127.0.0.1", (int)port, &address);
    uv_tcp_init(&d->loop, &d->server);
    d->server.data = d;
    rc = uv_tcp_bind(&d->server, (const struct sockaddr *)&address, 0);
    if (rc == 0) rc = uv_listen((uv_stream_t *)&d->server, 128, on_connection);
    if (rc != 0) die("listen on 127.0.0.1", rc);
    struct sockaddr_storage bound;
    int bound_len = sizeof bound;
    uv_tcp_getsockname(&d->server, (struct sockaddr *)&bound, &bound_len);
    printf("listening on 127.0.0.1:%d\n", ntohs(((struct sockaddr_in *)&bound)->sin_port));

    uv_signal_init(&d->loop, &d->sigterm);
    uv_signal_init(&d->loop, &d->sigint);
    d->sigterm.data = d->sigint.data = d;
    uv_signal_start(&d->sigterm, on_signal, SIGTERM);
    uv_signal_start(&d->sigint, on_signal, SIGINT);

    if (d->events_wanted > 0) {
        rc = pthread_create(&d->worker, NULL, worker_main, d);
        if (rc != 0) die("pthread_create", uv_translate_sys_error(rc));
        d->worker_started = 1;
        printf("worker: sending %" PRIu64 " events\n", d->events_wanted);
    }

    /* The server and the signal watchers keep uv_run going, so UVLoop's work always gets turns:
     * no uvloop_keep_alive. It returns once finish_shutdown has closed every handle. */
    uv_run(&d->loop, UV_RUN_DEFAULT);

    stats_snapshot_t final;
    rc = stats_component_stop(&final);
    if (rc != 0) die("stats_component_stop", rc);
    printf("stats: final events=%" PRIu64 " in_order=%s out_of_order=%" PRIu64 " reports=%" PRIu64
           " digests=%" PRIu64 "\n",
           final.events, final.out_of_order == 0 && final.last_sequence == final.events ? "yes" : "no",
           final.out_of_order, final.reports, final.digests);
    uint64_t adopted = 0, returned = 0;
    rc = upper_handler_stop(&adopted, &returned);
    if (rc != 0) die("upper_handler_stop", rc);
    printf("swift handler: adopted=%" PRIu64 " returned=%" PRIu64 " (C: handed=%" PRIu64 " back=%" PRIu64 ")\n",
           adopted, returned, d->handed_to_swift, d->returned_from_swift);
    rc = uvloop_release(d->uvloop);
    if (rc != 0) die("uvloop_release", rc);
    rc = uv_loop_close(&d->loop);
    printf("uv_loop_close: %d\n", rc);
    if (rc != 0) {
        uv_walk(&d->loop, print_open_handle, NULL);
        return 1;
    }
    return 0;
}
