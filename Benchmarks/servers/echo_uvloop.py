"""echo_uvloop.py: Python's uvloop echo server of the server benchmark (scripts/bench --servers).

The fastest form uvloop offers, as MagicStack's own benchmark runs it: an asyncio Protocol whose
data_received writes the bytes straight back (no streams, no coroutine per connection).

    python echo_uvloop.py --port N [--host ADDRESS] | --unix PATH

Prints "listening on PORT-OR-PATH" once it accepts; SIGTERM or SIGINT stops it.
"""
import argparse
import asyncio
import os
import signal
import socket
import sys

import uvloop


class Echo(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data):
        self.transport.write(data)

    def eof_received(self):
        self.transport.close()


async def main(arguments):
    loop = asyncio.get_running_loop()
    if arguments.unix:
        if os.path.exists(arguments.unix):
            os.unlink(arguments.unix)
        server = await loop.create_unix_server(Echo, arguments.unix, backlog=511)
        print(f"listening on {arguments.unix}", flush=True)
    else:
        server = await loop.create_server(Echo, arguments.host, arguments.port, backlog=511)
        print(f"listening on {server.sockets[0].getsockname()[1]}", flush=True)
    stopped = asyncio.Event()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stopped.set)
    await stopped.wait()
    server.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int)
    parser.add_argument("--unix")
    arguments = parser.parse_args()
    if (arguments.port is None) == (arguments.unix is None):
        sys.exit("usage: echo_uvloop.py --port N [--host ADDRESS] | --unix PATH")
    uvloop.run(main(arguments))
