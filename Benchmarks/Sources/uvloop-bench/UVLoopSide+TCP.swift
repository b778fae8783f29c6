// UVLoop's side of tcp_ping_pong and tcp_echo_throughput, in the same shape as the peers
// (CSide.tcpEcho, NIOSide.tcpEcho, NIOSide.tcpEchoAsync):
//   - setup (untimed): two loops, each on its own thread (`Loop.startThread`), one for the server,
//     one for the clients. The server listens on 127.0.0.1, port 0, reads the bound port back, and
//     echoes every byte it reads on every connection. The client loop opens `connections`
//     connections to it, TCP_NODELAY on both ends; setup returns once every connection is
//     established and accepted.
//   - `run` (timed): from the harness thread, start all connections at once; each writes one
//     `messageBytes`-byte message (`pingMessage(size:)`'s bytes: "PING", dots, "\n"), waits until
//     as many bytes came back, and repeats, max(1, n / connections) times; ns per round trip.
//   - `close`: close every connection and the listener, then shut both loops down.
//
// Two faces, as a user would write them:
//   - `tcpEcho` ("uvloop"): the callback face. Reads run on the loop threads; the server writes
//     the lent bytes straight back (`write(UnsafeRawBufferPointer)`, no copy when the kernel takes
//     them), the client counts bytes and writes the next message when a whole echo arrived.
//   - `tcpEchoAsync` ("uvloop_async"): the async face, in tasks on the global executor as
//     nio_async: `for try await chunk in connection.reads`, `try await connection.write(chunk)`,
//     `Loop.listen(on:) async`, `listener.connections`, `Loop.connect(to:) async`; one task per
//     connection on each end.
import Dispatch
import UVLoop

/// The bytes every client writes, as the NIO peers' `pingMessage(size:)`: "PING", dots, "\n".
func pingBytes(size: Int) -> [UInt8] {
    var bytes = [UInt8](repeating: UInt8(ascii: "."), count: size)
    for (i, c) in "PING".utf8.enumerated() where i < size { bytes[i] = c }
    bytes[size - 1] = UInt8(ascii: "\n")
    return bytes
}

/// The server loop's state (callback face): the listener and every connection it accepted, so
/// that `close` can close them. Server loop thread only (held in a `LoopBound`).
final class UVEchoServer {
    var listener: StreamListener?
    var accepted: [StreamConnection] = []
}

/// One client connection (callback face): `start(rounds:)` writes the first message; each whole
/// echo writes the next until `rounds` round trips are done, then `finished` counts this
/// connection. Client loop thread only.
final class UVPingClient {
    let connection: StreamConnection
    private let message: [UInt8]     // written in place: `write` copies only what the kernel refuses
    private let finished: Counter
    private var remaining = 0
    private var got = 0

    init(connection: StreamConnection, message: [UInt8], finished: Counter) {
        self.connection = connection
        self.message = message
        self.finished = finished
    }

    func start(rounds: Int) {
        remaining = rounds
        got = 0
        send()
    }

    private func send() {
        do { try connection.write(message) } catch {
            preconditionFailure("tcp bench (uvloop): client write failed: \(error)")
        }
    }

    func read(_ read: StreamRead) {
        switch read {
        case .bytes(let bytes):
            got += bytes.count
            if got < message.count { return }
            precondition(got == message.count, "tcp bench (uvloop): \(got) bytes echoed for one message")
            got = 0
            remaining -= 1
            if remaining > 0 { send() } else { finished.add(1) }
        case .end, .failed:
            // Only the session's close (or a loop shutting down) may end a connection, between runs.
            precondition(remaining == 0, "tcp bench (uvloop): client connection ended during a run: \(read)")
            connection.close()
        }
    }
}

/// The client loop's state (callback face). Client loop thread only (held in a `LoopBound`).
final class UVPingClients {
    var clients: [UVPingClient] = []
}

extension UVLoopSide {
    /// UVLoop's TCP streams with callbacks on the loop thread (the peers: `libuv_c`, `nio`).
    static func tcpEcho(connections: Int, messageBytes: Int, n: Int) -> SessionMaker? {
        return {
            let serverThread = try UVLoopRunner()
            let clientThread: UVLoopRunner
            do { clientThread = try UVLoopRunner() } catch { serverThread.close(); throw error }
            func shutDown() {
                clientThread.close()
                serverThread.close()
            }
            let server = LoopBound(UVEchoServer(), loop: serverThread.loop)
            let clients = LoopBound(UVPingClients(), loop: clientThread.loop)
            let accepted = Counter(target: connections)
            let connected = Counter(target: connections)
            let finished = Counter(target: connections)
            do {
                // The server: every accepted connection echoes what it reads, in place.
                let address = try server.invoke { server throws -> SocketAddress in
                    let state = server // a reference to the loop-confined state, for the handler
                    let listener = try serverThread.loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { result in
                        guard case .success(let connection) = result else {
                            preconditionFailure("tcp bench (uvloop): accept failed: \(result)")
                        }
                        state.accepted.append(connection)
                        do {
                            try connection.setNoDelay(true)
                            try connection.startReading { connection, read in
                                switch read {
                                case .bytes(let bytes):
                                    do { try connection.write(bytes) } catch {
                                        FileHandleOut.err("tcp bench (uvloop): server write failed: \(error)")
                                        connection.close()
                                    }
                                case .end, .failed:
                                    connection.close()
                                }
                            }
                        } catch {
                            preconditionFailure("tcp bench (uvloop): accepted connection: \(error)")
                        }
                        accepted.add(1)
                    }
                    state.listener = listener
                    return listener.localAddress
                }

                // The clients: `connections` connections, each reading with its UVPingClient.
                let message = pingBytes(size: messageBytes)
                try clients.invoke { clients in
                    let state = clients
                    for _ in 0..<connections {
                        try clientThread.loop.connect(to: address) { result in
                            guard case .success(let connection) = result else {
                                preconditionFailure("tcp bench (uvloop): connect failed: \(result)")
                            }
                            let client = UVPingClient(connection: connection, message: message, finished: finished)
                            state.clients.append(client)
                            do {
                                try connection.setNoDelay(true)
                                try connection.startReading { _, read in client.read(read) }
                            } catch {
                                preconditionFailure("tcp bench (uvloop): connected connection: \(error)")
                            }
                            connected.add(1)
                        }
                    }
                }
                connected.wait()
                accepted.wait()
            } catch {
                shutDown()
                throw error
            }

            let rounds = max(1, n / connections) // at least one round trip each, whatever --n says
            return Session(run: {
                // Reset before the post, which publishes it to the client loop.
                finished.reset(target: connections)
                let t0 = nowNs()
                try clients.post { clients in
                    for client in clients.clients { client.start(rounds: rounds) }
                }
                finished.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(rounds * connections), ops: rounds * connections)
            }, close: {
                try? clients.invoke { clients in
                    for client in clients.clients { client.connection.close() }
                    clients.clients = []
                }
                try? server.invoke { server in
                    server.listener?.close()
                    for connection in server.accepted { connection.close() }
                    server.listener = nil
                    server.accepted = []
                }
                shutDown()
            })
        }
    }

    /// UVLoop's TCP streams through their async face (the peer: `nio_async`).
    static func tcpEchoAsync(connections: Int, messageBytes: Int, n: Int) -> SessionMaker? {
        return {
            let serverThread = try UVLoopRunner()
            let clientThread: UVLoopRunner
            do { clientThread = try UVLoopRunner() } catch { serverThread.close(); throw error }
            func shutDown() {
                clientThread.close()
                serverThread.close()
            }
            let serverLoop = serverThread.loop, clientLoop = clientThread.loop

            // Server: listen, accept in one task, echo each connection in a child task until its
            // client closes. TCP_NODELAY is a loop-thread option: set through the async `invoke`.
            let listener: StreamListener
            do {
                listener = try awaitBlocking {
                    try await serverLoop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
                }
            } catch {
                shutDown()
                throw error
            }
            let accepted = Counter(target: connections) // touched by the accepting task only
            let serverDone = DispatchSemaphore(value: 0)
            Task {
                do {
                    try await withThrowingDiscardingTaskGroup { group in
                        for try await connection in listener.connections {
                            try await serverLoop.invoke { try connection.setNoDelay(true) }
                            accepted.add(1)
                            group.addTask {
                                defer { connection.close() }
                                do {
                                    for try await chunk in connection.reads { try await connection.write(chunk) }
                                } catch {
                                    FileHandleOut.err("tcp bench (uvloop_async): server connection failed: \(error)")
                                }
                            }
                        }
                    }
                } catch {
                    FileHandleOut.err("tcp bench (uvloop_async): server failed: \(error)")
                }
                serverDone.signal()
            }

            // Clients: connect, then one task per connection, one round-trip count per run on `runs`.
            let clients: [StreamConnection]
            do {
                clients = try awaitBlocking {
                    var clients: [StreamConnection] = []
                    for _ in 0..<connections {
                        let connection = try await clientLoop.connect(to: listener.localAddress)
                        try await clientLoop.invoke { try connection.setNoDelay(true) }
                        clients.append(connection)
                    }
                    return clients
                }
            } catch {
                listener.close()
                shutDown()
                serverDone.wait()
                throw error
            }
            accepted.wait()

            let message = pingBytes(size: messageBytes)
            let runDone = DispatchSemaphore(value: 0)
            let clientsDone = DispatchSemaphore(value: 0)
            var runs: [AsyncStream<Int>.Continuation] = []
            for connection in clients {
                let (requests, continuation) = AsyncStream.makeStream(of: Int.self)
                runs.append(continuation)
                Task {
                    defer { connection.close() }
                    do {
                        var next = requests.makeAsyncIterator()
                        guard var remaining = await next.next() else { clientsDone.signal(); return }
                        try await connection.write(message)
                        var got = 0
                        for try await chunk in connection.reads {
                            got += chunk.count
                            if got < message.count { continue }
                            precondition(got == message.count, "tcp bench (uvloop_async): \(got) bytes echoed for one message")
                            got = 0
                            remaining -= 1
                            if remaining == 0 {
                                runDone.signal()
                                guard let rounds = await next.next() else { break } // session closing
                                remaining = rounds
                            }
                            try await connection.write(message)
                        }
                        if remaining != 0 { throw BenchError.failed("the server closed the connection") }
                    } catch {
                        FileHandleOut.err("tcp bench (uvloop_async): client connection failed: \(error)")
                    }
                    clientsDone.signal()
                }
            }

            let rounds = max(1, n / connections) // at least one round trip each, whatever --n says
            return Session(run: {
                let t0 = nowNs()
                for run in runs { run.yield(rounds) }
                for _ in 0..<connections { runDone.wait() }
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(rounds * connections), ops: rounds * connections)
            }, close: {
                // Clients return and close their connections, the server's reads end, then closing
                // the listener ends the accept loop.
                for run in runs { run.finish() }
                for _ in clients { clientsDone.wait() }
                listener.close()
                serverDone.wait()
                shutDown()
            })
        }
    }
}
