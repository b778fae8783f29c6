// UVLoop's side of tcp_ping_pong and tcp_echo_throughput: pending until UVLoop's TCP streams land.
// The rows are registered in main.swift already (impls "uvloop" and "uvloop_async"); the table reads
// "pending" and the targets "pending / not measured" while these makers return nil.
//
// To add a row, replace `nil` with a maker of the same shape as the peers' (CSide.tcpEcho,
// NIOSide.tcpEcho, NIOSide.tcpEchoAsync):
//   - setup (in the maker, untimed): two loops, each on its own thread (`Loop.startThread`), one
//     for the server, one for the clients. The server listens on 127.0.0.1, port 0, reads the bound
//     port back, and echoes every byte it reads on every connection. The client loop opens
//     `connections` connections to it (TCP_NODELAY on both ends, as the peers); setup returns
//     once every connection is established and accepted.
//   - `run` (timed): from the harness thread, start all connections at once; each writes one
//     `messageBytes`-byte message (`pingMessage(size:)`'s bytes: "PING", dots, "\n"), waits until
//     as many bytes came back, and repeats, max(1, n / connections) times. Wait on a semaphore for the
//     last echo; return `Sample(value: ns / Double(rounds * connections), ops: rounds * connections)`.
//   - `close`: close every connection and the listener, then shut both loops down; nothing may
//     outlive the session (the harness makes one session per impl and closes it after the case).

extension UVLoopSide {
    /// UVLoop's TCP streams with callbacks on the loop thread (the peers: `libuv_c`, `nio`).
    static func tcpEcho(connections: Int, messageBytes: Int, n: Int) -> SessionMaker? {
        nil
    }

    /// UVLoop's TCP streams through their async face (the peer: `nio_async`).
    static func tcpEchoAsync(connections: Int, messageBytes: Int, n: Int) -> SessionMaker? {
        nil
    }
}
