// uvloop-echo: an echo server on UVLoop's streams. Every byte a client sends comes back.
//
//     uvloop-echo --port 7000            TCP on 127.0.0.1:7000 (port 0: the kernel picks one)
//     uvloop-echo --host ::1 --port 7000 TCP on another address
//     uvloop-echo --unix /tmp/echo.sock  a Unix-domain socket
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

    static let usage = "usage: uvloop-echo --port N [--host ADDRESS] | --unix PATH"

    init(_ arguments: [String]) throws(LoopError) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { throw .invalidArgument("\(flag) needs a value; \(Self.usage)") }
            switch flag {
            case "--port":
                guard let port = Int(value), (0...65535).contains(port) else {
                    throw .invalidArgument("--port takes a number from 0 to 65535 (got \(value))")
                }
                self.port = port
            case "--host": host = value
            case "--unix": unixPath = value
            default: throw .invalidArgument("unknown option \(flag); \(Self.usage)")
            }
        }
        guard (port == nil) != (unixPath == nil) else {
            throw .invalidArgument("give either --port or --unix; \(Self.usage)")
        }
    }

    func address() throws(LoopError) -> SocketAddress {
        if let unixPath { return try SocketAddress(unixPath: unixPath) }
        return try SocketAddress(ip: host, port: port ?? 0)
    }
}

/// The server: a listener and its open connections, all on the loop's thread.
final class EchoServer {
    let loop: Loop
    private var listener: StreamListener?
    private var connections: Set<StreamConnection> = []

    init(loop: Loop) {
        self.loop = loop
    }

    func start(on address: SocketAddress) throws(LoopError) {
        listener = try loop.listen(on: address) { [self] accepted in
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
        print("listening on \(listener!.localAddress)")
        fflush(nil)   // at once, even into a pipe: a script waits for this line
    }

    private func drop(_ connection: StreamConnection) {
        connection.close()
        connections.remove(connection)
    }

    /// Closes the listener and every connection; the loop then has nothing left open.
    func stop() {
        listener?.close()
        listener = nil
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
    try server.value.start(on: options.address())
    for signal in [Signal.terminate, .interrupt] {
        try loop.watchSignal(signal, oneShot: true) { _ in
            print("\(signal): closing")
            server.value.stop()
            loop.shutdown()
        }
    }
    try loop.run()
    print("stopped")
} catch {
    printError("uvloop-echo: \(error)")
    exit(2)
}
