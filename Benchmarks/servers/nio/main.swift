// bench-echo-nio: SwiftNIO's echo server for the server benchmark (scripts/bench --servers), as
// NIO's own NIOEchoServer example writes it: one event-loop thread, a channel handler that
// writes each inbound buffer back and flushes once per read burst.
//
//   bench-echo-nio --port N [--host ADDRESS] | --unix PATH
//
// Prints "listening on PORT-OR-PATH" once it accepts; SIGTERM or SIGINT stops it.
import Glibc
import NIOCore
import NIOPosix

final class EchoHandler: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        context.write(data, promise: nil)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        context.flush()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        context.close(promise: nil)
    }
}

func fatal(_ message: String) -> Never {
    let line = "bench-echo-nio: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(2)
}

var host = "127.0.0.1"
var port: Int?
var unixPath: String?
var rest = CommandLine.arguments.dropFirst()
while let flag = rest.popFirst() {
    guard let value = rest.popFirst() else { fatal("\(flag) needs a value") }
    switch flag {
    case "--port": port = Int(value)
    case "--host": host = value
    case "--unix": unixPath = value
    default: fatal("unknown option \(flag)")
    }
}
guard (port == nil) != (unixPath == nil) else { fatal("usage: bench-echo-nio --port N [--host ADDRESS] | --unix PATH") }

// Block the stop signals in every thread (NIO's threads inherit the mask) and wait for one here.
var signals = sigset_t()
sigemptyset(&signals)
sigaddset(&signals, SIGTERM)
sigaddset(&signals, SIGINT)
pthread_sigmask(SIG_BLOCK, &signals, nil)

let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
let bootstrap = ServerBootstrap(group: group)
    .serverChannelOption(ChannelOptions.backlog, value: 511)
    .serverChannelOption(ChannelOptions.socketOption(.so_reuseaddr), value: 1)
    .childChannelOption(ChannelOptions.socketOption(.tcp_nodelay), value: 1)
    .childChannelInitializer { channel in
        channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(EchoHandler()) }
    }
do {
    let channel: Channel
    if let unixPath {
        unlink(unixPath)
        channel = try bootstrap.bind(unixDomainSocketPath: unixPath).wait()
        print("listening on \(unixPath)")
    } else {
        channel = try bootstrap.bind(host: host, port: port ?? 0).wait()
        print("listening on \(channel.localAddress?.port ?? 0)")
    }
    fflush(nil)
    var received: Int32 = 0
    sigwait(&signals, &received)
    try? channel.close().wait()
    if let unixPath { unlink(unixPath) }
    try group.syncShutdownGracefully()
} catch {
    fatal("\(error)")
}
