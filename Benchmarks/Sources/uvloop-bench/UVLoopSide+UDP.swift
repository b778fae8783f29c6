// UVLoop's side of udp_ping_pong and udp_throughput, in the same shape as the C peer
// (Sources/CPeers/cpeers_udp.c) and the NIO peer (NIOSide+UDP.swift):
//   - setup (untimed): two loops, each on its own thread (`Loop.startThread`), each with one
//     `DatagramSocket` on 127.0.0.1, port 0 (read back), receiving with the callback face.
//   - `run` (timed): the client sends `messageBytes`-byte datagrams to the server, at most
//     `window` unanswered; the server answers every `ackEvery`-th with its first `replyBytes`
//     bytes, sent straight from the lent receive buffer; each answer lets the client send
//     `ackEvery` more. ns per datagram.
//   - `close`: close both sockets, then shut both loops down.
import UVLoop

/// The protocol both udp workloads share (see the C peer's header).
struct UDPExchangeShape {
    var messageBytes: Int
    var window: Int
    var ackEvery: Int
    var replyBytes: Int

    static let pingPong = UDPExchangeShape(messageBytes: 64, window: 1, ackEvery: 1, replyBytes: 64)
    static let throughput = UDPExchangeShape(messageBytes: 1_024, window: 64, ackEvery: 32, replyBytes: 8)

    /// n rounded up to whole answers.
    func total(_ n: Int) -> Int { max(ackEvery, (n + ackEvery - 1) / ackEvery * ackEvery) }
}

/// The server's state: what it has received. Server loop thread only.
final class UVDatagramServer {
    var socket: DatagramSocket?
    var received = 0
}

/// The client's state: the window. Client loop thread only.
final class UVDatagramClient {
    let shape: UDPExchangeShape
    let message: [UInt8]
    let finished: Counter
    var socket: DatagramSocket?
    var server: SocketAddress?
    var total = 0
    var sent = 0
    var acked = 0

    init(shape: UDPExchangeShape, finished: Counter) {
        self.shape = shape
        self.message = pingBytes(size: shape.messageBytes)
        self.finished = finished
    }

    func start(total: Int) {
        self.total = total
        sent = 0
        acked = 0
        pump()
    }

    func pump() {
        guard let socket, let server else { return }
        while sent < total && sent - acked < shape.window {
            do { try socket.send(message, to: server) } catch {
                preconditionFailure("udp bench (uvloop): client send failed: \(error)")
            }
            sent += 1
        }
    }

    func answered() {
        acked += shape.ackEvery
        if acked >= total { finished.add(1) } else { pump() }
    }
}

extension UVLoopSide {
    /// UVLoop's datagram sockets with callbacks on the loop threads (the peers: `libuv_c`, `nio`).
    static func udpExchange(_ shape: UDPExchangeShape, n: Int) -> SessionMaker? {
        return {
            let serverThread = try UVLoopRunner()
            let clientThread: UVLoopRunner
            do { clientThread = try UVLoopRunner() } catch { serverThread.close(); throw error }
            func shutDown() {
                clientThread.close()
                serverThread.close()
            }
            let finished = Counter(target: 1)
            let server = LoopBound(UVDatagramServer(), loop: serverThread.loop)
            let client = LoopBound(UVDatagramClient(shape: shape, finished: finished), loop: clientThread.loop)
            do {
                let address = try server.invoke { state throws -> SocketAddress in
                    let state = state
                    let socket = try serverThread.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
                    try socket.startReceiving { socket, read in
                        guard case .datagram(let bytes, let sender, _) = read else {
                            preconditionFailure("udp bench (uvloop): server receive failed: \(read)")
                        }
                        state.received += 1
                        guard state.received % shape.ackEvery == 0 else { return }
                        let reply = UnsafeRawBufferPointer(rebasing: bytes.prefix(shape.replyBytes))
                        do { try socket.send(reply, to: sender) } catch {
                            preconditionFailure("udp bench (uvloop): server send failed: \(error)")
                        }
                    }
                    state.socket = socket
                    return socket.localAddress
                }
                try client.invoke { state throws in
                    let state = state
                    let socket = try clientThread.loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
                    try socket.startReceiving { _, read in
                        guard case .datagram = read else {
                            preconditionFailure("udp bench (uvloop): client receive failed: \(read)")
                        }
                        state.answered()
                    }
                    state.socket = socket
                    state.server = address
                }
            } catch {
                shutDown()
                throw error
            }
            let total = shape.total(n)
            return Session(run: {
                finished.reset(target: 1)  // before the post, which publishes it to the client loop
                let t0 = nowNs()
                try client.post { $0.start(total: total) }
                finished.wait()
                let t1 = nowNs()
                return Sample(value: Double(t1 - t0) / Double(total), ops: total)
            }, close: {
                try? client.invoke { $0.socket?.close() }
                try? server.invoke { $0.socket?.close() }
                shutDown()
            })
        }
    }
}
