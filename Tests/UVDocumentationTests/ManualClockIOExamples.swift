import UVLoop
import UVLoopTesting
import XCTest

/// The examples of UVLoopTesting.md and of `LoopThread`'s manual-clock calls: real sockets on a
/// loop whose time the test moves.
final class ManualClockIOExamples: XCTestCase {
    func testAClientAndServerOfOneSteppedLoop() throws {
        // docs:begin manual-loop-sockets
        let loop = try Loop.manual()
        let server = try loop.listen(on: try SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let connection) = accepted else { return }
            try? connection.startReading { connection, read in
                if case .bytes(let request) = read { try? connection.write(request) }   // echo
            }
        }
        let reply = LoopBound([UInt8](), loop: loop)
        try loop.connect(to: server.localAddress) { connected in
            guard case .success(let client) = connected else { return }
            try? client.write(Array("ping".utf8))
            try? client.startReading { _, read in
                if case .bytes(let bytes) = read { reply.value += Array(bytes) }
            }
        }
        try loop.runUntilIdle()   // connect, accept, request and reply, all settled
        // reply.value == Array("ping".utf8)
        // docs:end
        XCTAssertEqual(reply.value, Array("ping".utf8))
        server.close()
        loop.shutdown()
    }

    func testAnAsyncTestOnALoopThreadWithAManualClock() async throws {
        let listening = try Loop.startThread()
        let listener = try await listening.loop.listen(on: try SocketAddress(ip: "127.0.0.1", port: 0))
        let address = listener.localAddress
        // docs:begin manual-loop-thread
        let thread = try Loop.startThread(clock: .manual)
        let loop = thread.loop
        let connection = try await loop.connect(to: address)   // the thread runs the I/O
        try await thread.advanceTime(by: .seconds(30))          // timers due by then fire
        // docs:end
        XCTAssertEqual(connection.remoteAddress, address)
        let now = try await loop.invoke { loop.now }
        XCTAssertEqual(now, LoopInstant(nanoseconds: 30_000_000_000))
        connection.close()
        thread.shutdown()
        listener.close()
        listening.shutdown()
    }
}
