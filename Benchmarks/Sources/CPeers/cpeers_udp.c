/* Raw C libuv UDP peers (see include/cpeers_udp.h): a server loop thread answering datagrams, a
   client loop thread sending them under a window. */
#define _GNU_SOURCE
#include "cpeers_udp.h"
#include "cpeers.h"
#include <uv.h>
#include <pthread.h>
#include <semaphore.h>
#include <arpa/inet.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define UDP_CHECK(expr) do { int _r = (expr); if (_r != 0) { fprintf(stderr, "cpeers_udp: %s failed: %d (%s)\n", #expr, _r, _r < 0 ? uv_strerror(_r) : ""); abort(); } } while (0)
#define UDP_FAIL(what, code) do { fprintf(stderr, "cpeers_udp: %s: %s\n", (what), uv_strerror((int)(code))); abort(); } while (0)

/* libuv 1.44 gives each datagram of a recvmmsg batch a 64 KiB slot, at most 20 per call. */
#define UDP_SLOT 65536
#define UDP_SLOTS 20

enum { CMD_NONE, CMD_RUN, CMD_STOP };

typedef struct udp_end {
    uv_loop_t loop;
    uv_udp_t udp;
    uv_async_t async;
    pthread_t thread;
    struct sockaddr_in address;  /* where this end is bound */
    char *buffer;                /* UDP_SLOTS * UDP_SLOT bytes */
} udp_end;

struct cp_udp {
    size_t message_size;
    int window;
    int ack_every;
    size_t reply_size;
    char *message;

    udp_end server;
    long received;               /* server loop thread only */

    udp_end client;
    _Atomic int command;
    long total;                  /* written before CMD_RUN is signalled */
    long sent, acked;            /* client loop thread only */
    sem_t done;
};

static void sem_wait_intr(sem_t *s) {
    while (sem_wait(s) != 0) { /* EINTR */ }
}

static void udp_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
    (void)suggested;
    udp_end *end = h->data;
    *buf = uv_buf_init(end->buffer, UDP_SLOTS * UDP_SLOT);
}

static void udp_queued_sent(uv_udp_send_t *req, int status) {
    if (status != 0) UDP_FAIL("uv_udp_send", status);
    free(req);
}

/* Sends at once; when the kernel's buffer is full, queues a copy in a malloc'd request. */
static void udp_send(uv_udp_t *udp, const char *bytes, size_t count, const struct sockaddr *to) {
    uv_buf_t buf = uv_buf_init((char *)bytes, (unsigned)count);
    int r = uv_udp_try_send(udp, &buf, 1, to);
    if (r >= 0) return;
    if (r != UV_EAGAIN) UDP_FAIL("uv_udp_try_send", r);
    uv_udp_send_t *req = malloc(sizeof *req + count);
    memcpy(req + 1, bytes, count);
    buf = uv_buf_init((char *)(req + 1), (unsigned)count);
    UDP_CHECK(uv_udp_send(req, udp, &buf, 1, to, udp_queued_sent));
}

/* ---------------------------------------------------------------------------------------------- */

static void srv_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *from, unsigned flags) {
    udp_end *end = h->data;
    cp_udp *owner = (cp_udp *)((char *)end - offsetof(cp_udp, server));
    if (nread < 0) UDP_FAIL("server recv", nread);
    if (from == NULL || (flags & UV_UDP_MMSG_FREE)) return; /* nothing left, or the batch's end */
    if (++owner->received % owner->ack_every != 0) return;
    size_t reply = (size_t)nread < owner->reply_size ? (size_t)nread : owner->reply_size;
    udp_send(h, buf->base, reply, from);
}

static void cli_pump(cp_udp *u) {
    while (u->sent < u->total && u->sent - u->acked < u->window) {
        udp_send(&u->client.udp, u->message, u->message_size, (const struct sockaddr *)&u->server.address);
        u->sent++;
    }
}

static void cli_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf, const struct sockaddr *from, unsigned flags) {
    (void)buf;
    udp_end *end = h->data;
    cp_udp *u = (cp_udp *)((char *)end - offsetof(cp_udp, client));
    if (nread < 0) UDP_FAIL("client recv", nread);
    if (from == NULL || (flags & UV_UDP_MMSG_FREE)) return;
    u->acked += u->ack_every;
    if (u->acked >= u->total) {
        sem_post(&u->done);
    } else {
        cli_pump(u);
    }
}

static void end_closed(uv_handle_t *h) { (void)h; }

static void end_close(udp_end *end) {
    uv_close((uv_handle_t *)&end->udp, end_closed);
    uv_close((uv_handle_t *)&end->async, end_closed);
}

static void srv_async(uv_async_t *a) { end_close(a->data); }

static void cli_async(uv_async_t *a) {
    udp_end *end = a->data;
    cp_udp *u = (cp_udp *)((char *)end - offsetof(cp_udp, client));
    switch (atomic_exchange(&u->command, CMD_NONE)) {
    case CMD_RUN:
        u->sent = 0;
        u->acked = 0;
        cli_pump(u);
        break;
    case CMD_STOP:
        end_close(end);
        break;
    default:
        break;
    }
}

static void *end_thread(void *arg) {
    udp_end *end = arg;
    UDP_CHECK(uv_run(&end->loop, UV_RUN_DEFAULT));
    return NULL;
}

static void end_open(udp_end *end, uv_udp_recv_cb on_recv, uv_async_cb on_async) {
    UDP_CHECK(uv_loop_init(&end->loop));
    UDP_CHECK(uv_udp_init_ex(&end->loop, &end->udp, AF_INET | UV_UDP_RECVMMSG));
    end->udp.data = end;
    end->buffer = malloc(UDP_SLOTS * UDP_SLOT);
    UDP_CHECK(uv_ip4_addr("127.0.0.1", 0, &end->address));
    UDP_CHECK(uv_udp_bind(&end->udp, (const struct sockaddr *)&end->address, 0));
    int len = sizeof end->address;
    UDP_CHECK(uv_udp_getsockname(&end->udp, (struct sockaddr *)&end->address, &len));
    UDP_CHECK(uv_udp_recv_start(&end->udp, udp_alloc, on_recv));
    UDP_CHECK(uv_async_init(&end->loop, &end->async, on_async));
    end->async.data = end;
    UDP_CHECK(pthread_create(&end->thread, NULL, end_thread, end));
}

cp_udp *cp_udp_start(size_t message_size, int window, int ack_every, size_t reply_size) {
    cp_udp *u = calloc(1, sizeof *u);
    u->message_size = message_size;
    u->window = window;
    u->ack_every = ack_every;
    u->reply_size = reply_size;
    u->message = malloc(message_size);
    memset(u->message, '.', message_size);
    memcpy(u->message, "PING", message_size < 4 ? message_size : 4);
    sem_init(&u->done, 0, 0);
    end_open(&u->server, srv_recv, srv_async);
    end_open(&u->client, cli_recv, cli_async);
    return u;
}

double cp_udp_run(cp_udp *u, long total) {
    u->total = total;
    uint64_t t0 = cp_now_ns();
    atomic_store(&u->command, CMD_RUN);
    UDP_CHECK(uv_async_send(&u->client.async));
    sem_wait_intr(&u->done);
    return (double)(cp_now_ns() - t0);
}

void cp_udp_stop(cp_udp *u) {
    atomic_store(&u->command, CMD_STOP);
    UDP_CHECK(uv_async_send(&u->client.async));
    UDP_CHECK(pthread_join(u->client.thread, NULL));
    UDP_CHECK(uv_loop_close(&u->client.loop));
    UDP_CHECK(uv_async_send(&u->server.async));
    UDP_CHECK(pthread_join(u->server.thread, NULL));
    UDP_CHECK(uv_loop_close(&u->server.loop));
    sem_destroy(&u->done);
    free(u->server.buffer);
    free(u->client.buffer);
    free(u->message);
    free(u);
}
