/*
 * upper.h: a protocol handler written in Swift for connections that the daemon's C listener
 * accepted: sockets cross from C to Swift and back. Implemented in Swift
 * (Sources/StatsComponent/UpperHandler.swift), declared here for C.
 *
 * The daemon accepts a connection in C, and when the client asks for it ("swift"), hands the
 * socket's descriptor to upper_handler_adopt: from then on Swift speaks its own line protocol
 * on it (a StreamConnection opened on the descriptor):
 *     upper TEXT    ->  TEXT in upper case
 *     lines         ->  lines=N, the lines Swift handled on this connection
 *     c             ->  the connection goes back to C (the daemon's upper_return_cb)
 *     quit          ->  bye, and the connection closes
 * Going back, Swift takes the descriptor out of its stream (StreamConnection.takeDescriptor)
 * and gives it to the callback, with the bytes it read after "c" and did not handle. Nothing
 * the client sent is lost either way: the daemon passes the bytes it read after "swift" to
 * upper_handler_adopt.
 *
 * Results are 0 or a negative error code of uvloop.h (uvloop_strerror gives the message).
 */
#ifndef UPPER_H
#define UPPER_H

#include <stddef.h>
#include <stdint.h>
#include <uvloop.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Gets a connection back from Swift, on the loop thread. `fd` is the caller's from now on: an
 * open socket, non-blocking, close-on-exec (libuv's uv_tcp_open takes it as it is). `pending`
 * holds the `length` bytes the client sent after "c" that Swift read and did not handle; it is
 * valid during the call only. `ctx` is upper_handler_start's.
 */
typedef void (*upper_return_cb)(int fd, const char *pending, size_t length, void *ctx);

/*
 * Starts the handler on `l`: connections adopted from now on return to C through
 * `on_return(fd, pending, length, ctx)`. Loop thread only.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_EALREADY when it is already
 * running; UVLOOP_EINVAL for a NULL `l` or `on_return`.
 */
int upper_handler_start(uvloop_t *l, upper_return_cb on_return, void *ctx);

/*
 * Hands a connected socket to the handler, which greets the client ("swift: ...") and speaks
 * its protocol on it, after handling the `length` bytes at `pending` (what the client sent
 * after asking for Swift; NULL when `length` is 0). Loop thread only.
 *
 * Ownership: on 0 the handler owns `fd` (it closes it with the connection, or gives it back
 * through upper_return_cb); on an error `fd` is still the caller's, to close.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_ESHUTDOWN when the handler is
 * not running; UVLOOP_EDETACHED after uvloop_detach; UVLOOP_EINVAL for a negative `fd`, NULL
 * `pending` with a `length`, or a descriptor that is not a connected stream socket (the
 * message of Swift's error says which).
 */
int upper_handler_adopt(int fd, const char *pending, size_t length);

/*
 * Stops the handler: closes the connections it holds and lets go of the loop. Stores how many
 * connections it adopted and how many went back to C in *adopted and *returned (either may be
 * NULL). Loop thread only; call it before uvloop_release.
 *
 * Returns 0; UVLOOP_ENOTLOOPTHREAD from another thread; UVLOOP_ESHUTDOWN when it is not running.
 */
int upper_handler_stop(uint64_t *adopted, uint64_t *returned);

#ifdef __cplusplus
}
#endif

#endif /* UPPER_H */
