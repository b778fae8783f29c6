import UVLoop
import UVTestSupport
import XCTest

/// The examples of Streams.md on framing, pipes and graceful closing, run for real.
final class StreamsFlowExamples: XCTestCase {
    /// Steps `loop` until `condition` holds, failing instead of hanging.
    private func turn(_ loop: Loop, until condition: () -> Bool) throws {
        var turns = 0
        while !condition() {
            try loop.runOnce()
            turns += 1
            if turns > 2_000_000 { return XCTFail("condition not reached") }
        }
    }

    private func pair(_ loop: Loop) throws -> (client: StreamConnection, server: StreamConnection, listener: StreamListener) {
        var server: StreamConnection?
        var client: StreamConnection?
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { server = try? $0.get() }
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        try turn(loop) { server != nil && client != nil }
        return (client!, server!, listener)
    }

    func testALineServerThatFollowsItsWriteQueue() throws {
        let loop = try Loop()
        let (client, connection, listener) = try pair(loop)
        // docs:begin streams-line-server
        try connection.startReading(framing: .lines(maxLength: 1024)) { connection, frame in
            switch frame {
            case .frame(let line):
                try? connection.write(Array("you said: ".utf8) + Array(line) + [0x0A])
            case .tooLong:
                try? connection.write(Array("ERR line too long\n".utf8))
                connection.closeAfterFlushing()      // the answer arrives, then the connection closes
            case .end, .failed:
                connection.close()
            }
        }
        // docs:end
        var received: [UInt8] = []
        var ended = false
        try client.startReading { client, read in
            switch read {
            case .bytes(let bytes): received += bytes
            case .end:
                ended = true
                client.close()
            case .failed(let error): XCTFail("\(error)")
            }
        }
        try client.write(Array("hi\r\n".utf8) + [UInt8](repeating: 0x41, count: 2000) + [0x0A])
        try turn(loop) { ended && !connection.isOpen }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "you said: hi\nERR line too long\n")
        listener.close()
        loop.shutdown()
    }

    func testAsyncFramesAnsweredBeforeClosing() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
        let client = try await loop.connect(to: listener.localAddress)
        var connections = listener.connections.makeAsyncIterator()
        let connection = try await connections.next()!
        try await client.write(Array("one\n".utf8) + [UInt8](repeating: 0x42, count: 4096) + [0x0A])
        let reader = Task {
            var answer: [UInt8] = []
            for try await chunk in client.reads { answer += chunk }
            client.close()
            return String(decoding: answer, as: UTF8.self)
        }
        // docs:begin streams-frames-async
        do {
            for try await line in connection.frames(.lines(maxLength: 1024)) {
                try await connection.write(Array("you said: ".utf8) + line + [0x0A])
            }
        } catch {
            guard case .frameTooLong = error else { throw error }   // error is a LoopError
            try await connection.write(Array("ERR line too long\n".utf8))
        }
        try await connection.closeAfterFlushing()
        // docs:end
        let answer = try await reader.value
        XCTAssertEqual(answer, "you said: one\nERR line too long\n")
        listener.close()
        thread.shutdown()
    }

    func testAProxy() throws {
        let loop = try Loop()
        let echo = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let connection) = accepted else { return }
            try? connection.pipe(to: connection)
        }
        let backend = echo.localAddress
        // docs:begin streams-proxy
        let proxy = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let inbound) = accepted else { return }
            try? loop.connect(to: backend) { connected in
                guard case .success(let outbound) = connected else { return inbound.close() }
                try? inbound.pipe(to: outbound)      // the client's end half-closes the backend
                try? outbound.pipe(to: inbound)      // and the backend's end the client
            }
        }
        // docs:end
        var client: StreamConnection?
        try loop.connect(to: proxy.localAddress) { client = try? $0.get() }
        try turn(loop) { client != nil }
        var received: [UInt8] = []
        var ended = false
        try client!.startReading { _, read in
            if case .bytes(let bytes) = read { received += bytes } else { ended = true }
        }
        try client!.write(Array("through the proxy".utf8))
        try client!.shutdownWrites()
        try turn(loop) { ended }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "through the proxy")
        loop.shutdown()
    }

    func testDrainingAListener() throws {
        let loop = try Loop()
        let (client, server, listener) = try pair(loop)
        // docs:begin streams-drain
        listener.drain(within: .seconds(10)) { closedAtDeadline in   // stops accepting at once
            print("\(closedAtDeadline) connections were still open at the deadline")
            loop.shutdown()
        }
        // docs:end
        server.close()
        try loop.run()   // returns once the drain has shut the loop down
        XCTAssertFalse(client.isOpen)
    }
}
