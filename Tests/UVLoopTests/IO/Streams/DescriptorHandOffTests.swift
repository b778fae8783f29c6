import CLibUV
import Glibc
import XCTest

@testable import UVLoop
import UVTestSupport

/// `StreamConnection.takeDescriptor()`: a connection's socket leaves UVLoop for other code (a C
/// library), open, with nothing lost, and comes back as a stream.
final class DescriptorHandOffTests: XCTestCase {
    private func socketPair() -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        return (pair[0], pair[1])
    }

    private func runHandOff(on loop: Loop, turn: (() -> Bool) -> Void) throws {
        let (mine, peer) = socketPair()
        defer { close(peer) }
        let connection = try loop.openConnection(descriptor: mine, ownership: .take)
        let log = ReadLog()
        try connection.startReading(log.handler)
        XCTAssertEqual(write(peer, "one", 3), 3)
        turn { log.text == "one" }
        connection.stopReading()
        XCTAssertEqual(write(peer, "two", 3), 3)  // waits in the kernel for the new owner
        let descriptor = try connection.takeDescriptor()
        defer { close(descriptor) }
        XCTAssertFalse(connection.isOpen)
        XCTAssertTrue(isOpen(descriptor))
        XCTAssertFalse(isOpen(mine), "the stream's own descriptor closed with it")
        XCTAssertNotEqual(fcntl(descriptor, F_GETFD) & FD_CLOEXEC, 0, "close-on-exec")
        var bytes = [UInt8](repeating: 0, count: 8)
        XCTAssertEqual(read(descriptor, &bytes, 8), 3, "what the peer sent after the reader stopped")
        XCTAssertEqual(String(decoding: bytes.prefix(3), as: UTF8.self), "two")
        // The peer saw no end of stream: the socket works both ways.
        XCTAssertEqual(write(descriptor, "back", 4), 4)
        XCTAssertEqual(read(peer, &bytes, 8), 4)
        XCTAssertEqual(log.text, "one", "the read handler was not called again")
        // And it opens as a stream again.
        let again = try loop.openConnection(descriptor: dup(descriptor), ownership: .take)
        let againLog = ReadLog()
        try again.startReading(againLog.handler)
        XCTAssertEqual(write(peer, "three", 5), 5)
        turn { againLog.text == "three" }
        again.close()
    }

    func testATakenDescriptorLeavesTheStreamOpenWithNothingLost() throws {
        let loop = try Loop()
        try runHandOff(on: loop) { loop.turn(until: $0) }
        loop.shutdown()
    }

    func testATakenDescriptorOnAnAttachedLoop() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        try loop.setKeepsOwnerLoopAlive(true)
        try runHandOff(on: loop) { condition in
            var turns = 0
            while !condition() && turns < 100_000 {
                _ = uv_run(cLoop, UV_RUN_ONCE)
                turns += 1
            }
            XCTAssertTrue(condition())
        }
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testTakingTheDescriptorOfAClosedConnectionThrows() throws {
        let loop = try Loop()
        let (mine, peer) = socketPair()
        defer { close(peer) }
        let connection = try loop.openConnection(descriptor: mine, ownership: .take)
        connection.close()
        XCTAssertThrowsError(try connection.takeDescriptor()) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        loop.shutdown()
    }

    func testTakingTheDescriptorWithWritesQueuedThrowsAndKeepsTheConnection() throws {
        let loop = try Loop()
        let (mine, peer) = socketPair()
        defer { close(peer) }
        let connection = try loop.openConnection(descriptor: mine, ownership: .take)
        // More than the socket buffers hold, with a peer that does not read: the rest is queued.
        try connection.write(Array(repeating: 0x61, count: 8 << 20))
        XCTAssertThrowsError(try connection.takeDescriptor()) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("queued for writing"), message)
        }
        XCTAssertTrue(connection.isOpen)
        connection.close()
        loop.shutdown()
    }
}
