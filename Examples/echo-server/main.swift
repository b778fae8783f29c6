// uvloop-echo: an echo server on UVLoop's streams. Every byte a client sends comes back.
//
//     uvloop-echo --port 7000            TCP on 127.0.0.1:7000 (port 0: the kernel picks one)
//     uvloop-echo --host ::1 --port 7000 TCP on another address
//     uvloop-echo --unix /tmp/echo.sock  a Unix-domain socket
//     uvloop-echo --udp --port 7000      UDP: each datagram goes back to its sender
//     uvloop-echo                        the sockets systemd passed (socket activation)
//     uvloop-echo --stdio [--raw]        standard input back to standard output (--raw: a terminal
//                                        in raw mode, restored at exit and on SIGHUP)
//     uvloop-echo --listener-channel 3   the listening sockets that arrive over Unix socket 3
//
// It prints "listening on ADDRESS" once it accepts connections, and stops cleanly on SIGTERM or
// SIGINT: the listener and every connection close, the loop shuts down, exit status 0.
//
// A client that sends and never reads the echoes costs it no more than the write queue's
// high-water mark plus one read: the read handler's reading follows the write queue (an echo
// that leaves the queue above the mark pauses reading until the client catches up), so the
// kernel holds the client back instead of the server queueing its bytes (scripts/test-echo
// checks it with 512 MiB).
import Glibc
import UVLoop

/// What the command line asked for.
struct Options {
    var host = "127.0.0.1"
    var port: Int?
    var unixPath: String?
    var udp = false
    /// Echo standard input to standard output instead of serving sockets.
    var stdio = false
    /// With `--stdio` on a terminal: raw mode (key by key, no echo by the terminal).
    var raw = false
    /// A Unix socket on which the listening sockets to serve arrive (a pre-forked worker).
    var listenerChannel: Int32?

    static let usage =
        "usage: uvloop-echo [--udp] --port N [--host ADDRESS] | --unix PATH | --stdio [--raw] | --listener-channel FD | (socket-activated)"

    /// Whether a service manager passed listening sockets (see `SocketActivation`).
    static var isSocketActivated: Bool { getenv("LISTEN_FDS") != nil }

    init(_ arguments: [String]) throws(LoopError) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            if flag == "--udp" {
                udp = true
                continue
            }
            if flag == "--stdio" || flag == "--raw" {
                stdio = true
                raw = raw || flag == "--raw"
                continue
            }
            guard let value = rest.popFirst() else { throw .invalidArgument("\(flag) needs a value; \(Self.usage)") }
            switch flag {
            case "--port":
                guard let port = Int(value), (0...65535).contains(port) else {
                    throw .invalidArgument("--port takes a number from 0 to 65535 (got \(value))")
                }
                self.port = port
            case "--host": host = value
            case "--unix": unixPath = value
            case "--listener-channel":
                guard let descriptor = Int32(value), descriptor >= 0 else {
                    throw .invalidArgument("--listener-channel takes a descriptor number (got \(value))")
                }
                listenerChannel = descriptor
            default: throw .invalidArgument("unknown option \(flag); \(Self.usage)")
            }
        }
        if stdio || listenerChannel != nil || (port == nil && unixPath == nil && Self.isSocketActivated) { return }
        guard (port == nil) != (unixPath == nil) else {
            throw .invalidArgument("give either --port or --unix; \(Self.usage)")
        }
        if udp, unixPath != nil { throw .invalidArgument("--udp takes --port, not --unix; \(Self.usage)") }
    }

    func address() throws(LoopError) -> SocketAddress {
        if let unixPath { return try SocketAddress(unixPath: unixPath) }
        return try SocketAddress(ip: host, port: port ?? 0)
    }
}

/// The server: a listener and its open connections, all on the loop's thread.
final class EchoServer {
    let loop: Loop
    var listener: StreamListener?
    var activated: [StreamListener] = []
    var connections: Set<StreamConnection> = []

    init(loop: Loop) {
        self.loop = loop
    }

    func start(on address: SocketAddress) throws(LoopError) {
        listener = try loop.listen(on: address) { [self] accepted in serve(accepted) }
        print("listening on \(listener!.localAddress)")
        fflush(nil)   // at once, even into a pipe: a script waits for this line
    }

    /// Echoes on an accepted connection until the client is done.
    func serve(_ accepted: Result<StreamConnection, LoopError>) {
        guard case .success(let connection) = accepted else { return }
        try? connection.setNoDelay(true)
        connections.insert(connection)
        try? connection.startReading { [self] connection, read in
            switch read {
            case .bytes(let bytes):
                try? connection.write(bytes)   // above the high-water mark, reading pauses
            case .end:
                // The client is done sending: finish our side once the echoes are out.
                try? connection.shutdownWrites { [self] _ in drop(connection) }
            case .failed:
                drop(connection)
            }
        }
    }

    func drop(_ connection: StreamConnection) {
        connection.close()
        connections.remove(connection)
    }

    /// Closes the listener and every connection; the loop then has nothing left open.
    func stop() {
        listener?.close()
        listener = nil
        for listener in activated { listener.close() }
        activated.removeAll()
        for connection in connections { connection.close() }
        connections.removeAll()
    }
}

/// Writes `message` and a newline to standard error.
func printError(_ message: String) {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

do {
    let options = try Options(Array(CommandLine.arguments.dropFirst()))
    let loop = try Loop()
    // The server is the loop thread's; the signal handlers reach it through a LoopBound.
    let server = LoopBound(EchoServer(loop: loop), loop: loop)
    let datagrams = LoopBound(DatagramEcho(), loop: loop)
    if options.udp {
        try datagrams.value.start(on: loop, at: options.address())
    } else if options.stdio {
        try server.value.startStdio(raw: options.raw)
    } else if let channel = options.listenerChannel {
        try server.value.startFromChannel(channel)
    } else if options.port == nil && options.unixPath == nil {
        try server.value.startActivated()
    } else {
        try server.value.start(on: options.address())
    }
    for signal in [Signal.terminate, .interrupt] {
        try loop.watchSignal(signal, oneShot: true) { _ in
            print("\(signal): closing")
            server.value.stop()
            datagrams.value.stop()
            loop.shutdown()
        }
    }
    try loop.run()
    if !options.stdio { print("stopped") }
} catch {
    printError("uvloop-echo: \(error)")
    exit(2)
}
