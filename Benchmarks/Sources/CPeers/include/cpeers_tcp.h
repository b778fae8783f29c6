#ifndef UVLOOP_BENCH_CPEERS_TCP_H
#define UVLOOP_BENCH_CPEERS_TCP_H
/*
 * Raw C libuv TCP peers for tcp_ping_pong and tcp_echo_throughput: the floor UVLoop's TCP streams
 * are measured against. libuv types stay opaque here, as in cpeers.h.
 *
 * Two loops, each on its own thread: a server loop listening on 127.0.0.1, port 0 (the port the
 * kernel chose is read back), which echoes every byte it reads on every connection; and a client
 * loop holding `connections` TCP connections to it (TCP_NODELAY on both ends). A run makes each
 * client connection do `rounds` round trips: write one `message_size`-byte message, wait until as
 * many bytes came back, repeat (libuv's benchmark-ping-pongs with one connection and 64 bytes;
 * MagicStack vmbench's echo method with ten connections and 1 KiB).
 *
 * No allocation per message on either side: the client writes one constant buffer with one
 * uv_write_t per connection and reads into a buffer of its own; the server reads into a buffer per
 * connection and echoes it with uv_write from a ring of write requests embedded in the connection.
 */
#include <stddef.h>

typedef struct cp_tcp cp_tcp;

/* Starts both loop threads, listens, connects `connections` clients and returns once the server
   has accepted every one of them. Aborts with a message on any libuv error. */
cp_tcp *cp_tcp_start(int connections, size_t message_size);

/* The port the server listens on (read back from the kernel). */
int cp_tcp_port(const cp_tcp *t);

/* Every connection does `rounds` round trips, all connections at once; returns the wall time (ns)
   from the start signal to the last connection's last echo. */
double cp_tcp_run(cp_tcp *t, long rounds);

/* Closes every connection, the listener and both loops' handles, joins both threads and checks
   that both loops close cleanly. */
void cp_tcp_stop(cp_tcp *t);

#endif
