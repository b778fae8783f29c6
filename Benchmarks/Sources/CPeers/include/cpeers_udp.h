#ifndef UVLOOP_BENCH_CPEERS_UDP_H
#define UVLOOP_BENCH_CPEERS_UDP_H
/*
 * Raw C libuv UDP peers for udp_ping_pong and udp_throughput: the floor UVLoop's datagram sockets
 * are measured against. libuv types stay opaque here, as in cpeers.h.
 *
 * Two loops, each on its own thread, each with one uv_udp_t on 127.0.0.1 (port 0, read back),
 * both made with UV_UDP_RECVMMSG (as UVLoop's sockets are by default) and receiving into one
 * buffer of 20 slots of 64 KiB. The client sends `message_size`-byte datagrams to the server,
 * at most `window` of them unanswered; the server counts what it receives and answers every
 * `ack_every`-th datagram with its first `reply_size` bytes; each answer lets the client send
 * `ack_every` more. udp_ping_pong: window 1, every datagram echoed whole (64 bytes);
 * udp_throughput: 1 KiB datagrams, a window of 64 and an 8-byte answer every 32, small enough
 * for the kernel's default receive buffer, so nothing is dropped on loopback.
 *
 * Sends go through uv_udp_try_send (uv_udp_send with a malloc'd request only if the kernel's
 * buffer is full): no allocation per datagram on either side.
 */
#include <stddef.h>

typedef struct cp_udp cp_udp;

/* Starts both loop threads with their sockets bound; aborts with a message on any libuv error. */
cp_udp *cp_udp_start(size_t message_size, int window, int ack_every, size_t reply_size);

/* Sends `total` datagrams (a multiple of ack_every) under the window; returns the wall time (ns)
   from the start signal to the last answer. */
double cp_udp_run(cp_udp *u, long total);

/* Closes both sockets and loops' handles, joins both threads and checks that both loops close. */
void cp_udp_stop(cp_udp *u);

#endif
