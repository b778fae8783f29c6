// SwiftNIO peers of tcp_ping_pong and tcp_echo_throughput: the same shape as the C peer
// (Sources/CPeers/cpeers_tcp.c). A server event loop (its own one-thread MultiThreadedEventLoopGroup)
// accepts on 127.0.0.1, port 0 (read back), and echoes every byte on every connection; a client event
// loop (another one-thread group) holds `connections` connections and ping-pongs one fixed-size
// message per connection: write it, wait until as many bytes came back, repeat. NIO's bootstraps
// enable TCP_NODELAY by default, as the C peer does with uv_tcp_nodelay.
//
// Two faces: `tcpEcho` is the channel-handler way (ServerBootstrap / ClientBootstrap with handlers
// in the pipeline, everything on the event loops); `tcpEchoAsync` the async way (NIOAsyncChannel,
// `executeThenClose`, `for try await` over the inbound stream, in tasks on the global executor).
import Dispatch
import NIOCore
import NIOPosix

/// The message every client writes: "PING", dots, and a newline, `size` bytes in all.
func pingMessage(size: Int) -> ByteBuffer {
    var bytes = [UInt8](repeating: UInt8(ascii: "."), count: size)
    for (i, c) in "PING".utf8.enumerated() where i < size { bytes[i] = c }
    bytes[size - 1] = UInt8(ascii: "\n")
    return ByteBuffer(bytes: bytes)
}

/// Server side: writes back what it reads and flushes once per read burst (NIO's echo example).
final class EchoHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }
}

/// Client side: `start(rounds:)` writes the first message; each complete echo sends the next until
/// `rounds` round trips are done, then `finished` counts this connection. Event-loop thread only.
final class PingClientHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let message: ByteBuffer   // shared storage: a write retains it, copies nothing
    private let finished: Counter
    private var context: ChannelHandlerContext?
    private var remaining = 0
    private var got = 0

    init(message: ByteBuffer, finished: Counter) {
        self.message = message
        self.finished = finished
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func start(rounds: Int) {
        remaining = rounds
        got = 0
        send()
    }

    private func send() {
        guard let context else { preconditionFailure("tcp bench (nio): connection closed during a run") }
        context.writeAndFlush(wrapOutboundOut(message), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        got += unwrapInboundIn(data).readableBytes
        if got < message.readableBytes { return }
        precondition(got == message.readableBytes, "tcp bench (nio): \(got) bytes echoed for one message")
        got = 0
        remaining -= 1
        if remaining > 0 { send() } else { finished.add(1) }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        preconditionFailure("tcp bench (nio): client connection failed: \(error)")
    }
}

extension NIOSide {
    /// `connections` connections, each doing n / connections round trips per run; ns per round trip.
    static func tcpEcho(connections: Int, messageBytes: Int, n: Int) -> SessionMaker {
        return {
            let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            func shutDown() {
                try? clientGroup.syncShutdownGracefully()
                try? serverGroup.syncShutdownGracefully()
            }
            do {
                let server = try ServerBootstrap(group: serverGroup)
                    .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                    .childChannelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(EchoHandler())
                        }
                    }
                    .bind(host: "127.0.0.1", port: 0).wait()
                guard let port = server.localAddress?.port else { throw BenchError.failed("nio: no bound port") }

                let message = pingMessage(size: messageBytes)
                let finished = Counter(target: connections)
                var clients: [(channel: Channel, handler: NIOLoopBound<PingClientHandler>)] = []
                for _ in 0..<connections {
                    let channel = try ClientBootstrap(group: clientGroup)
                        .channelInitializer { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try channel.pipeline.syncOperations.addHandler(
                                    PingClientHandler(message: message, finished: finished))
                            }
                        }
                        .connect(host: "127.0.0.1", port: port).wait()
                    let handler = try channel.eventLoop.submit {
                        NIOLoopBound(try channel.pipeline.syncOperations.handler(type: PingClientHandler.self),
                                     eventLoop: channel.eventLoop)
                    }.wait()
                    clients.append((channel, handler))
                }
                let rounds = max(1, n / connections) // at least one round trip each, whatever --n says
                return Session(run: {
                    // Reset before the first `execute`, which publishes it to the client loop.
                    finished.reset(target: connections)
                    let t0 = nowNs()
                    for (channel, handler) in clients {
                        channel.eventLoop.execute { handler.value.start(rounds: rounds) }
                    }
                    finished.wait()
                    let t1 = nowNs()
                    return Sample(value: Double(t1 - t0) / Double(rounds * connections), ops: rounds * connections)
                }, close: {
                    for (channel, _) in clients { try? channel.close().wait() }
                    try? server.close().wait()
                    shutDown()
                })
            } catch {
                shutDown()
                throw error
            }
        }
    }
}

extension NIOSide {
    /// The async face: NIOAsyncChannel on both ends, `executeThenClose` and `for try await` over
    /// each connection's inbound stream, in tasks on the global executor. The server accepts in one
    /// task and echoes each connection in a child task; each client connection is one task that
    /// lives as long as the session and waits for a run's round-trip count on an `AsyncStream`.
    static func tcpEchoAsync(connections: Int, messageBytes: Int, n: Int) -> SessionMaker {
        return {
            let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            func shutDown() {
                try? clientGroup.syncShutdownGracefully()
                try? serverGroup.syncShutdownGracefully()
            }
            let server: NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never>
            let clients: [NIOAsyncChannel<ByteBuffer, ByteBuffer>]
            do {
                (server, clients) = try awaitBlocking {
                    let server = try await ServerBootstrap(group: serverGroup)
                        .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
                        .bind(host: "127.0.0.1", port: 0) { channel in
                            channel.eventLoop.makeCompletedFuture {
                                try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                            }
                        }
                    guard let port = server.channel.localAddress?.port else {
                        throw BenchError.failed("nio_async: no bound port")
                    }
                    var clients: [NIOAsyncChannel<ByteBuffer, ByteBuffer>] = []
                    for _ in 0..<connections {
                        clients.append(try await ClientBootstrap(group: clientGroup)
                            .connect(host: "127.0.0.1", port: port) { channel in
                                channel.eventLoop.makeCompletedFuture {
                                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                                }
                            })
                    }
                    return (server, clients)
                }
            } catch {
                shutDown()
                throw error
            }

            // Server: accept in this task, echo each connection in a child task until its client
            // closes. `accepted` is touched by the accepting task only (one iteration at a time).
            let accepted = Counter(target: connections)
            let serverDone = DispatchSemaphore(value: 0)
            Task {
                do {
                    try await withThrowingDiscardingTaskGroup { group in
                        try await server.executeThenClose { inbound in
                            for try await connection in inbound {
                                accepted.add(1)
                                group.addTask {
                                    do {
                                        try await connection.executeThenClose { inbound, outbound in
                                            for try await buffer in inbound { try await outbound.write(buffer) }
                                        }
                                    } catch {
                                        FileHandleOut.err("tcp bench (nio_async): server connection failed: \(error)")
                                    }
                                }
                            }
                        }
                    }
                } catch {
                    FileHandleOut.err("tcp bench (nio_async): server failed: \(error)")
                }
                serverDone.signal()
            }
            accepted.wait()

            // Clients: one task per connection, one round-trip count per run on `runs`.
            let message = pingMessage(size: messageBytes)
            let runDone = DispatchSemaphore(value: 0)
            let clientsDone = DispatchSemaphore(value: 0)
            var runs: [AsyncStream<Int>.Continuation] = []
            for client in clients {
                let (requests, continuation) = AsyncStream.makeStream(of: Int.self)
                runs.append(continuation)
                Task {
                    do {
                        try await client.executeThenClose { inbound, outbound in
                            var next = requests.makeAsyncIterator()
                            guard var remaining = await next.next() else { return }
                            try await outbound.write(message)
                            var got = 0
                            for try await buffer in inbound {
                                got += buffer.readableBytes
                                if got < message.readableBytes { continue }
                                precondition(got == message.readableBytes, "tcp bench (nio_async): \(got) bytes echoed for one message")
                                got = 0
                                remaining -= 1
                                if remaining == 0 {
                                    runDone.signal()
                                    guard let rounds = await next.next() else { return } // session closing
                                    remaining = rounds
                                }
                                try await outbound.write(message)
                            }
                            throw BenchError.failed("the server closed the connection")
                        }
                    } catch {
                        FileHandleOut.err("tcp bench (nio_async): client connection failed: \(error)")
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
                // Clients return from executeThenClose (closing their channels), the server's
                // connection tasks see end-of-stream, then closing the listener ends the accept loop.
                for run in runs { run.finish() }
                for _ in clients { clientsDone.wait() }
                try? server.channel.close().wait()
                serverDone.wait()
                shutDown()
            })
        }
    }
}

/// Runs `body` in a task and blocks the calling thread (a harness thread, never one of the global
/// executor's) until it returns: for session setup, which the harness calls synchronously.
func awaitBlocking<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> T {
    let outcome = Box<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do { outcome.value = .success(try await body()) } catch { outcome.value = .failure(error) }
        done.signal()
    }
    done.wait()
    return try outcome.value!.get()
}
