import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// The examples of Streams.md and of the streams' symbol documentation, run for real.
final class StreamsExamples: XCTestCase {
    func testSocketAddresses() throws {
        // docs:begin socket-addresses
        let local = try SocketAddress(ip: "127.0.0.1", port: 8080)
        let any6 = try SocketAddress(ip: "::", port: 0)          // port 0: the kernel picks one
        let socket = try SocketAddress(unixPath: "/tmp/app.sock")
        // docs:end
        XCTAssertEqual(local.description, "127.0.0.1:8080")
        XCTAssertEqual(any6.description, "[::]:0")
        XCTAssertEqual(socket.description, "unix:/tmp/app.sock")
    }

    func testCallbackEchoServer() throws {
        // docs:begin streams-echo-callback
        let loop = try Loop()
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let connection) = accepted else { return }
            try? connection.startReading { connection, read in
                switch read {
                case .bytes(let bytes): try? connection.write(bytes)   // copies only what the kernel did not take
                case .end, .failed: connection.close()
                }
            }
        }
        print("listening on \(listener.localAddress)")
        // docs:end
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        var echoed: [UInt8] = []
        var turns = 0
        while client == nil, turns < 1_000_000 { try loop.runOnce(); turns += 1 }
        try client!.startReading { _, read in if case .bytes(let bytes) = read { echoed += bytes } }
        try client!.write(Array("hello".utf8))
        while echoed.count < 5, turns < 2_000_000 { try loop.runOnce(); turns += 1 }
        XCTAssertEqual(String(decoding: echoed, as: UTF8.self), "hello")
        loop.shutdown()
    }

    func testAsyncEchoServer() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        // docs:begin streams-echo-async
        let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
        Task {
            for try await connection in listener.connections {
                Task {
                    defer { connection.close() }
                    for try await chunk in connection.reads { try await connection.write(chunk) }
                }
            }
        }
        let client = try await loop.connect(to: listener.localAddress)
        try await client.write(Array("ping".utf8))
        for try await chunk in client.reads {
            print(String(decoding: chunk, as: UTF8.self))   // "ping"
            break
        }
        // docs:end
        client.close()
        listener.close()
        thread.shutdown()
    }

    func testPerConnectionStateOnTheLoopThread() throws {
        let loop = try Loop.manual()
        // docs:begin streams-per-connection-state
        final class Session {                     // one per connection; lives on the loop's thread
            let connection: StreamConnection
            var received = 0
            var idleTimer: LoopTimer?
            init(connection: StreamConnection) { self.connection = connection }

            func touch(_ loop: IsolatedLoop) {
                idleTimer?.cancel()
                idleTimer = try? loop.schedule(after: .seconds(30)) { [self] in
                    connection.close()            // idle for 30 s: hang up
                }
            }
        }

        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let connection) = accepted else { return }
            let isolated = loop.assumeIsolated()  // a handler runs on the loop's thread
            let session = Session(connection: connection)
            session.touch(isolated)
            try? connection.startReading { connection, read in
                switch read {
                case .bytes(let bytes):
                    session.received += bytes.count
                    try? connection.write(bytes)
                    session.touch(isolated)
                case .end, .failed:
                    session.idleTimer?.cancel()
                    connection.close()
                }
            }
        }
        // docs:end
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        var turns = 0
        while client == nil, turns < 1_000_000 { try loop.runOnce(); turns += 1 }
        var echoed: [UInt8] = []
        var ended = false
        try client!.startReading { _, read in
            switch read {
            case .bytes(let bytes): echoed += bytes
            case .end, .failed: ended = true
            }
        }
        try client!.write(Array("hello".utf8))
        while echoed.count < 5, turns < 2_000_000 { try loop.runOnce(); turns += 1 }
        XCTAssertEqual(String(decoding: echoed, as: UTF8.self), "hello")
        try loop.advanceTime(by: .seconds(29))
        XCTAssertFalse(ended, "not idle for 30 s yet")
        try client!.write(Array("!".utf8))      // pushes the idle timeout back
        while echoed.count < 6, turns < 3_000_000 { try loop.runOnce(); turns += 1 }
        try loop.advanceTime(by: .seconds(29))
        XCTAssertFalse(ended, "29 s after the last bytes")
        try loop.advanceTime(by: .seconds(1))
        while !ended, turns < 4_000_000 { try loop.runOnce(); turns += 1 }
        XCTAssertTrue(ended, "idle for 30 s: the server hung up")
        client!.close()
        listener.close()
        loop.shutdown()
    }

    func testBackpressure() throws {
        let loop = try Loop()
        var server: StreamConnection?
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { server = try? $0.get() }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        var turns = 0
        while client == nil || server == nil, turns < 1_000_000 { try loop.runOnce(); turns += 1 }
        let connection = server!
        // docs:begin streams-backpressure
        try connection.startReading(pausingWhileUnwritable: false) { connection, read in
            guard case .bytes(let bytes) = read else { return connection.close() }
            try? connection.write(bytes)
            // The peer sends faster than it reads what we send back: wait for it.
            if !connection.isWritable { connection.stopReading() }
        }
        connection.setWritableHandler { connection in try? connection.startReading() }
        // docs:end
        // More than the kernel's buffers in both directions can hold (tcp_rmem and tcp_wmem).
        var echoed = 0
        try client!.write([UInt8](repeating: 1, count: 72_000_000))
        while connection.isReading, turns < 5_000_000 {
            try loop.runOnce()
            turns += 1
        }
        XCTAssertFalse(connection.isReading, "the echo side stopped reading: its peer does not read")
        try client!.startReading { _, read in if case .bytes(let bytes) = read { echoed += bytes.count } }
        while echoed < 72_000_000, turns < 200_000_000 { try loop.runOnce(); turns += 1 }
        XCTAssertEqual(echoed, 72_000_000)
        loop.shutdown()
    }

    func testResolveAndConnectByName() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
        let port = listener.localAddress.port!
        // docs:begin streams-resolve
        let addresses = try await loop.resolve(host: "localhost", port: port)
        print(addresses)                                     // [127.0.0.1:…] or [::1]:… first
        let connection = try await loop.connect(host: "localhost", port: port)   // tries each in order
        // docs:end
        XCTAssertFalse(addresses.isEmpty)
        XCTAssertEqual(connection.remoteAddress, listener.localAddress)
        connection.close()
        listener.close()
        thread.shutdown()
    }
}

/// `Loop.connect(host:port:_:)`'s example, run for real.
final class ConnectByNameExamples: XCTestCase {
    func testConnectByNameWithCallbacks() throws {
        let loop = try Loop()
        var accepted = false
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { _ in accepted = true }
        let port = listener.localAddress.port!
        // docs:begin connect-by-name
        try loop.connect(host: "localhost", port: port) { result in
            guard case .success(let connection) = result else { return }
            try? connection.write(Array("hello".utf8))
        }
        // docs:end
        var turns = 0
        while !accepted && turns < 1_000_000 {
            try loop.runOnce()
            turns += 1
        }
        XCTAssertTrue(accepted)
        loop.shutdown()
    }
}
