import Foundation
import UVLoop
import UVLoopTesting
import UVTestSupport
import XCTest

/// `async` tests on a manual clock: a loop on its own thread runs the I/O, the test moves time.
final class ManualClockOnAThreadTests: XCTestCase {
    func testTimersFireAtTheirDeadlinesInOrder() async throws {
        let thread = try Loop.startThread(clock: .manual)
        let loop = thread.loop
        let fired = Recorder<UInt64>()
        try await loop.invoke {
            for delay in [300, 100, 200] as [Int64] {
                try loop.schedule(after: .milliseconds(delay)) { fired.append(loop.now.nanoseconds / 1_000_000) }
            }
        }
        try await thread.advanceTime(by: .milliseconds(150))
        XCTAssertEqual(fired.values, [100])
        try await thread.advanceTime(by: .milliseconds(150))
        XCTAssertEqual(fired.values, [100, 200, 300], "each saw its own deadline as now")
        thread.shutdown()
    }

    func testAReplyTimeoutFiresExactlyAtItsDeadlineWhileThePeerStalls() async throws {
        let thread = try Loop.startThread(clock: .manual)
        let loop = thread.loop
        // A server that reads requests and never answers.
        let received = Recorder<UInt8>()
        let server = try await loop.invoke {
            try loop.listen(on: try SocketAddress(ip: "127.0.0.1", port: 0)) { result in
                guard case .success(let connection) = result else { return }
                try? connection.startReading { _, read in
                    if case .bytes(let bytes) = read { for byte in bytes { received.append(byte) } }
                }
            }
        }
        let client = try await loop.connect(to: server.localAddress)
        // The client's rule: no reply within 5 s closes the connection.
        let closedAt = Recorder<UInt64>()
        try await loop.invoke {
            try client.write(Array("hello".utf8))
            try loop.schedule(after: .seconds(5)) {
                closedAt.append(loop.now.nanoseconds)
                client.close()
            }
        }
        try await thread.runUntilIdle()
        XCTAssertEqual(String(decoding: received.values, as: UTF8.self), "hello", "the request arrived without moving time")
        try await thread.advanceTime(by: .milliseconds(4_999))
        XCTAssertEqual(closedAt.values, [], "not yet")
        try await thread.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(closedAt.values, [5_000_000_000], "at exactly 5 s of the loop's time")
        var chunks = 0
        do {
            for try await _ in client.reads { chunks += 1 }
            XCTFail("reads of a closed connection end with an error")
        } catch {
            XCTAssertEqual(error, .streamClosed)
        }
        XCTAssertEqual(chunks, 0)
        try await loop.invoke { server.close() }
        thread.shutdown()
    }

    func testAFileSystemRequestIsWaitedFor() async throws {
        let thread = try Loop.startThread(clock: .manual)
        let loop = thread.loop
        let status = Recorder<FileType>()
        try await loop.invoke { try loop.fileSystem.status(of: "/") { if case .success(let s) = $0 { status.append(s.type) } } }
        try await thread.runUntilIdle()
        XCTAssertEqual(status.values, [.directory])
        thread.shutdown()
    }
}
