/* Raw C libuv TCP peers (see include/cpeers_tcp.h): a server loop thread echoing every byte, a
   client loop thread ping-ponging fixed-size messages over `connections` connections. */
#define _GNU_SOURCE
#include "cpeers_tcp.h"
#include "cpeers.h"
#include <uv.h>
#include <pthread.h>
#include <semaphore.h>
#include <arpa/inet.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TCP_CHECK(expr) do { int _r = (expr); if (_r != 0) { fprintf(stderr, "cpeers_tcp: %s failed: %d (%s)\n", #expr, _r, _r < 0 ? uv_strerror(_r) : ""); abort(); } } while (0)
#define TCP_FAIL(what, code) do { fprintf(stderr, "cpeers_tcp: %s: %s\n", (what), uv_strerror((int)(code))); abort(); } while (0)

/* Read buffer per connection, both sides: far more than one message, so a read normally returns
   what is there in one call. */
#define TCP_READ_CAP 65536
/* Write requests embedded in a server connection. Echoes complete in the order they were issued,
   so the ring's slots come back in order; a connection has at most one message in flight, so more
   than a few outstanding writes means reads of a few bytes each (then a request is malloc'd). */
#define TCP_WRITE_RING 16

enum { CMD_NONE, CMD_RUN, CMD_STOP };

typedef struct srv_conn {
    uv_tcp_t tcp;                /* first member: the handle's address is the connection's */
    struct srv_conn *next;       /* the server's list of open connections */
    struct srv_conn **prev_next;
    size_t used;                 /* bytes [0, used) of buf are being echoed (writes in flight) */
    int pending;                 /* writes in flight, ring and malloc'd */
    int ring_in_flight;
    int ring_next;
    uv_write_t ring[TCP_WRITE_RING];
    char buf[TCP_READ_CAP];
} srv_conn;

typedef struct cli_conn {
    uv_tcp_t tcp;
    uv_connect_t connect;
    uv_write_t write;            /* one message in flight per connection: one request, reused */
    struct cp_tcp *owner;
    size_t got;                  /* bytes of the current echo received so far */
    long remaining;              /* round trips left in this run, the current one included */
    int writing;                 /* `write` is in flight (its callback has not run yet) */
    int echoed;                  /* the echo came back before the write's callback ran */
    char buf[TCP_READ_CAP];
} cli_conn;

struct cp_tcp {
    int connections;
    size_t message_size;
    uv_buf_t message;            /* the constant message every client writes */
    int port;

    uv_loop_t server_loop;
    uv_tcp_t listener;
    uv_async_t server_async;     /* stop */
    pthread_t server_thread;
    srv_conn *open;              /* server loop thread only */
    int accepted;                /* server loop thread only */
    sem_t server_ready;          /* posted once every connection was accepted */

    uv_loop_t client_loop;
    uv_async_t client_async;     /* run / stop */
    pthread_t client_thread;
    cli_conn *clients;
    int connected;               /* client loop thread only */
    sem_t client_ready;          /* posted once every connection is established */
    _Atomic int command;
    long rounds;                 /* written before CMD_RUN is signalled */
    int finished;                /* client loop thread only: connections done with this run */
    sem_t done;                  /* posted when every connection finished its rounds */
    _Atomic int stopping;        /* errors from closed peers are expected from now on */
};

static void sem_wait_intr(sem_t *s) {
    while (sem_wait(s) != 0) { /* EINTR */ }
}

/* ---------------------------------------------------------------------------------------------- */
/* Server: echo everything                                                                          */

static void srv_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    srv_conn *c = (srv_conn *)h;
    /* The bytes still being written stay put; the next read goes after them. */
    *buf = uv_buf_init(c->buf + c->used, (unsigned)(TCP_READ_CAP - c->used));
}

static void srv_closed(uv_handle_t *h) {
    free(h); /* a srv_conn: its handle is its first member */
}

static void srv_close(srv_conn *c) {
    *c->prev_next = c->next;
    if (c->next) c->next->prev_next = c->prev_next;
    uv_close((uv_handle_t *)&c->tcp, srv_closed);
}

static void srv_written(uv_write_t *req, int status) {
    srv_conn *c = req->data;
    cp_tcp *t = c->tcp.data;
    if (status != 0 && !atomic_load(&t->stopping)) TCP_FAIL("server write", status);
    if (req >= c->ring && req < c->ring + TCP_WRITE_RING) {
        c->ring_in_flight--;
    } else {
        free(req);
    }
    if (--c->pending == 0) c->used = 0;
}

static void srv_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    srv_conn *c = (srv_conn *)s;
    cp_tcp *t = c->tcp.data;
    if (nread < 0) {
        if (nread != UV_EOF && nread != UV_ECONNRESET) TCP_FAIL("server read", nread);
        srv_close(c);
        return;
    }
    if (nread == 0) return; /* EAGAIN */
    uv_write_t *req;
    if (c->ring_in_flight < TCP_WRITE_RING) {
        req = &c->ring[c->ring_next];
        c->ring_next = (c->ring_next + 1) % TCP_WRITE_RING;
        c->ring_in_flight++;
    } else {
        req = malloc(sizeof *req);
    }
    req->data = c;
    uv_buf_t out = uv_buf_init(buf->base, (unsigned)nread);
    c->used += (size_t)nread;
    c->pending++;
    int r = uv_write(req, s, &out, 1, srv_written);
    if (r != 0 && !atomic_load(&t->stopping)) TCP_FAIL("server uv_write", r);
}

static void srv_on_connection(uv_stream_t *listener, int status) {
    cp_tcp *t = listener->data;
    if (status != 0) TCP_FAIL("server accept", status);
    srv_conn *c = calloc(1, sizeof *c);
    TCP_CHECK(uv_tcp_init(&t->server_loop, &c->tcp));
    c->tcp.data = t;
    TCP_CHECK(uv_accept(listener, (uv_stream_t *)&c->tcp));
    TCP_CHECK(uv_tcp_nodelay(&c->tcp, 1));
    c->next = t->open;
    c->prev_next = &t->open;
    if (t->open) t->open->prev_next = &c->next;
    t->open = c;
    TCP_CHECK(uv_read_start((uv_stream_t *)&c->tcp, srv_alloc, srv_read));
    if (++t->accepted == t->connections) sem_post(&t->server_ready);
}

static void srv_handle_closed(uv_handle_t *h) { (void)h; }

static void srv_async(uv_async_t *a) {
    cp_tcp *t = a->data;
    while (t->open) srv_close(t->open);
    uv_close((uv_handle_t *)&t->listener, srv_handle_closed);
    uv_close((uv_handle_t *)&t->server_async, srv_handle_closed);
}

static void *srv_thread(void *arg) {
    cp_tcp *t = arg;
    TCP_CHECK(uv_run(&t->server_loop, UV_RUN_DEFAULT));
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */
/* Client: write a message, wait for its echo, repeat                                               */

static void cli_written(uv_write_t *req, int status);

static void cli_send(cli_conn *c) {
    c->writing = 1;
    int r = uv_write(&c->write, (uv_stream_t *)&c->tcp, &c->owner->message, 1, cli_written);
    if (r != 0) TCP_FAIL("client uv_write", r);
}

/* One round trip is complete (echo received, write request back): the next, or done. */
static void cli_next(cli_conn *c) {
    if (--c->remaining > 0) {
        cli_send(c);
    } else if (++c->owner->finished == c->owner->connections) {
        sem_post(&c->owner->done);
    }
}

static void cli_written(uv_write_t *req, int status) {
    cli_conn *c = req->data;
    if (status != 0 && !atomic_load(&c->owner->stopping)) TCP_FAIL("client write", status);
    c->writing = 0;
    if (c->echoed) {
        c->echoed = 0;
        cli_next(c);
    }
}

static void cli_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    cli_conn *c = h->data;
    *buf = uv_buf_init(c->buf, TCP_READ_CAP);
}

static void cli_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
    (void)buf;
    cli_conn *c = s->data;
    if (nread < 0) {
        if (atomic_load(&c->owner->stopping)) return;
        TCP_FAIL("client read", nread);
    }
    c->got += (size_t)nread;
    if (c->got < c->owner->message_size) return;
    if (c->got > c->owner->message_size) {
        fprintf(stderr, "cpeers_tcp: %zu bytes echoed for one %zu-byte message\n", c->got, c->owner->message_size);
        abort();
    }
    c->got = 0;
    /* The write's callback comes in a later loop turn than the write; if the echo beat it, the
       request is still libuv's, and the next write waits for that callback. */
    if (c->writing) {
        c->echoed = 1;
    } else {
        cli_next(c);
    }
}

static void cli_connected(uv_connect_t *req, int status) {
    cli_conn *c = req->data;
    if (status != 0) TCP_FAIL("client connect", status);
    TCP_CHECK(uv_tcp_nodelay(&c->tcp, 1));
    TCP_CHECK(uv_read_start((uv_stream_t *)&c->tcp, cli_alloc, cli_read));
    if (++c->owner->connected == c->owner->connections) sem_post(&c->owner->client_ready);
}

static void cli_handle_closed(uv_handle_t *h) { (void)h; }

static void cli_async(uv_async_t *a) {
    cp_tcp *t = a->data;
    switch (atomic_exchange(&t->command, CMD_NONE)) {
    case CMD_RUN:
        t->finished = 0;
        for (int i = 0; i < t->connections; i++) {
            cli_conn *c = &t->clients[i];
            c->remaining = t->rounds;
            c->got = 0;
            cli_send(c);
        }
        break;
    case CMD_STOP:
        for (int i = 0; i < t->connections; i++) uv_close((uv_handle_t *)&t->clients[i].tcp, cli_handle_closed);
        uv_close((uv_handle_t *)&t->client_async, cli_handle_closed);
        break;
    default:
        break;
    }
}

static void *cli_thread(void *arg) {
    cp_tcp *t = arg;
    TCP_CHECK(uv_run(&t->client_loop, UV_RUN_DEFAULT));
    return NULL;
}

/* ---------------------------------------------------------------------------------------------- */

cp_tcp *cp_tcp_start(int connections, size_t message_size) {
    /* A write to a connection the peer closed must fail with EPIPE, not kill the process. */
    signal(SIGPIPE, SIG_IGN);

    cp_tcp *t = calloc(1, sizeof *t);
    t->connections = connections;
    t->message_size = message_size;
    char *m = malloc(message_size);
    memset(m, '.', message_size);
    memcpy(m, "PING", message_size < 4 ? message_size : 4);
    m[message_size - 1] = '\n';
    t->message = uv_buf_init(m, (unsigned)message_size);
    sem_init(&t->server_ready, 0, 0);
    sem_init(&t->client_ready, 0, 0);
    sem_init(&t->done, 0, 0);

    /* Server: listen on 127.0.0.1, port 0, and read the port back. Set up on this thread before
       the loop thread starts (pthread_create orders it). */
    TCP_CHECK(uv_loop_init(&t->server_loop));
    TCP_CHECK(uv_tcp_init(&t->server_loop, &t->listener));
    t->listener.data = t;
    struct sockaddr_in addr;
    TCP_CHECK(uv_ip4_addr("127.0.0.1", 0, &addr));
    TCP_CHECK(uv_tcp_bind(&t->listener, (const struct sockaddr *)&addr, 0));
    TCP_CHECK(uv_listen((uv_stream_t *)&t->listener, 128, srv_on_connection));
    struct sockaddr_storage bound;
    int len = sizeof bound;
    TCP_CHECK(uv_tcp_getsockname(&t->listener, (struct sockaddr *)&bound, &len));
    t->port = ntohs(((struct sockaddr_in *)&bound)->sin_port);
    TCP_CHECK(uv_async_init(&t->server_loop, &t->server_async, srv_async));
    t->server_async.data = t;
    TCP_CHECK(pthread_create(&t->server_thread, NULL, srv_thread, t));

    /* Client: the connects are issued here and complete on the client loop's thread. */
    TCP_CHECK(uv_loop_init(&t->client_loop));
    TCP_CHECK(uv_async_init(&t->client_loop, &t->client_async, cli_async));
    t->client_async.data = t;
    t->clients = calloc((size_t)connections, sizeof *t->clients);
    addr.sin_port = htons((uint16_t)t->port);
    for (int i = 0; i < connections; i++) {
        cli_conn *c = &t->clients[i];
        c->owner = t;
        TCP_CHECK(uv_tcp_init(&t->client_loop, &c->tcp));
        c->tcp.data = c;
        c->connect.data = c;
        c->write.data = c;
        TCP_CHECK(uv_tcp_connect(&c->connect, &c->tcp, (const struct sockaddr *)&addr, cli_connected));
    }
    TCP_CHECK(pthread_create(&t->client_thread, NULL, cli_thread, t));
    sem_wait_intr(&t->client_ready);
    sem_wait_intr(&t->server_ready);
    return t;
}

int cp_tcp_port(const cp_tcp *t) { return t->port; }

double cp_tcp_run(cp_tcp *t, long rounds) {
    t->rounds = rounds;
    uint64_t t0 = cp_now_ns();
    atomic_store(&t->command, CMD_RUN);
    TCP_CHECK(uv_async_send(&t->client_async));
    sem_wait_intr(&t->done);
    return (double)(cp_now_ns() - t0);
}

void cp_tcp_stop(cp_tcp *t) {
    atomic_store(&t->stopping, 1);
    atomic_store(&t->command, CMD_STOP);
    TCP_CHECK(uv_async_send(&t->client_async));
    TCP_CHECK(pthread_join(t->client_thread, NULL));
    TCP_CHECK(uv_loop_close(&t->client_loop));
    TCP_CHECK(uv_async_send(&t->server_async));
    TCP_CHECK(pthread_join(t->server_thread, NULL));
    TCP_CHECK(uv_loop_close(&t->server_loop));
    sem_destroy(&t->server_ready);
    sem_destroy(&t->client_ready);
    sem_destroy(&t->done);
    free(t->clients);
    free(t->message.base);
    free(t);
}
