// SwiftNIO peer of udp_ping_pong and udp_throughput: the same shape as the C peer
// (Sources/CPeers/cpeers_udp.c). A server event loop (its own one-thread group) and a client
// event loop (another), each with a `DatagramBootstrap` channel on 127.0.0.1, port 0, handlers
// in the pipeline; NIO's defaults otherwise (one datagram per read, no vector reads).
import Dispatch
import NIOCore
import NIOPosix

/// Server side: counts datagrams and answers every `ackEvery`-th with a slice of it (no copy).
final class UDPAnswerHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let shape: UDPExchangeShape
    private var received = 0

    init(shape: UDPExchangeShape) { self.shape = shape }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let envelope = unwrapInboundIn(data)
        received += 1
        guard received % shape.ackEvery == 0 else { return }
        let length = min(shape.replyBytes, envelope.data.readableBytes)
        let reply = envelope.data.getSlice(at: envelope.data.readerIndex, length: length)!
        context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: envelope.remoteAddress, data: reply)), promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) { context.flush() }
}

/// Client side: keeps at most `window` datagrams unanswered until `total` were answered.
final class UDPWindowHandler: ChannelInboundHandler {
    typealias InboundIn = AddressedEnvelope<ByteBuffer>
    typealias OutboundOut = AddressedEnvelope<ByteBuffer>

    private let shape: UDPExchangeShape
    private let message: ByteBuffer
    private let server: NIOCore.SocketAddress
    private let finished: Counter
    private var context: ChannelHandlerContext?
    private var total = 0
    private var sent = 0
    private var acked = 0

    init(shape: UDPExchangeShape, server: NIOCore.SocketAddress, finished: Counter) {
        self.shape = shape
        self.message = pingMessage(size: shape.messageBytes)
        self.server = server
        self.finished = finished
    }

    func handlerAdded(context: ChannelHandlerContext) { self.context = context }
    func handlerRemoved(context: ChannelHandlerContext) { self.context = nil }

    func start(total: Int) {
        self.total = total
        sent = 0
        acked = 0
        pump()
    }

    private func pump() {
        guard let context else { preconditionFailure("udp bench (nio): channel closed during a run") }
        while sent < total && sent - acked < shape.window {
            context.write(wrapOutboundOut(AddressedEnvelope(remoteAddress: server, data: message)), promise: nil)
            sent += 1
        }
        context.flush()
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        acked += shape.ackEvery
        if acked >= total { finished.add(1) } else { pump() }
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        preconditionFailure("udp bench (nio): client channel failed: \(error)")
    }
}

extension NIOSide {
    /// n datagrams per run under the window; ns per datagram.
    static func udpExchange(_ shape: UDPExchangeShape, n: Int) -> SessionMaker {
        return {
            let serverGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            let clientGroup = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            func shutDown() {
                try? clientGroup.syncShutdownGracefully()
                try? serverGroup.syncShutdownGracefully()
            }
            do {
                let server = try DatagramBootstrap(group: serverGroup)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(UDPAnswerHandler(shape: shape))
                        }
                    }
                    .bind(host: "127.0.0.1", port: 0).wait()
                guard let serverAddress = server.localAddress else { throw BenchError.failed("nio: no bound port") }
                let finished = Counter(target: 1)
                let client = try DatagramBootstrap(group: clientGroup)
                    .channelInitializer { channel in
                        channel.eventLoop.makeCompletedFuture {
                            try channel.pipeline.syncOperations.addHandler(
                                UDPWindowHandler(shape: shape, server: serverAddress, finished: finished))
                        }
                    }
                    .bind(host: "127.0.0.1", port: 0).wait()
                let handler = try client.eventLoop.submit {
                    NIOLoopBound(try client.pipeline.syncOperations.handler(type: UDPWindowHandler.self), eventLoop: client.eventLoop)
                }.wait()
                let total = shape.total(n)
                return Session(run: {
                    finished.reset(target: 1)  // before `execute`, which publishes it to the client loop
                    let t0 = nowNs()
                    client.eventLoop.execute { handler.value.start(total: total) }
                    finished.wait()
                    let t1 = nowNs()
                    return Sample(value: Double(t1 - t0) / Double(total), ops: total)
                }, close: {
                    try? client.close().wait()
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
