import CLibUV
import XCTest

@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Closing after the queued writes are flushed, and draining a listener, on a manual clock.
final class StreamClosingTests: XCTestCase {
    /// A reply bigger than the kernel's buffers both ways, so that part of it stays queued.
    private let reply = [UInt8](repeating: 0x52, count: 32 * 1024 * 1024)

    private func countingReader(_ connection: StreamConnection) throws -> ReadLog {
        let log = ReadLog()
        try connection.startReading(log.handler)
        return log
    }

    func testCloseAfterFlushingDeliversWhatCloseDrops() throws {
        let loop = try Loop.manual()
        var (client, server, listener) = try connectedPair(on: loop)
        try server.write(reply)
        XCTAssertGreaterThan(server.queuedWriteBytes, 0, "the kernel did not take it all")
        server.closeAfterFlushing(within: .seconds(60))
        server.closeAfterFlushing(within: .seconds(60))   // idempotent
        XCTAssertTrue(server.isOpen, "open until flushed")
        let log = try countingReader(client)
        loop.turn(until: { log.ended })
        XCTAssertEqual(log.bytes.count, reply.count, "every byte arrived, then the end")
        XCTAssertTrue(server.isOpen, "lingers for the client's end")
        try loop.advanceTime(by: FlushingClose.lingerTime)
        XCTAssertFalse(server.isOpen, "a quiet client is not waited for longer")
        client.close()
        listener.close()

        // close() right after write() drops what the kernel had not taken.
        (client, server, listener) = try connectedPair(on: loop)
        try server.write(reply)
        XCTAssertGreaterThan(server.queuedWriteBytes, 0)
        server.close()
        let dropped = try countingReader(client)
        loop.turn(until: { dropped.ended || dropped.failure != nil })
        XCTAssertLessThan(dropped.bytes.count, reply.count)
        client.close()
        listener.close()
        loop.shutdown()
    }

    func testTheDeadlineClosesWhatIsLeftAndTheEndOfThePeerClosesAtOnce() throws {
        let loop = try Loop.manual()
        var (client, server, listener) = try connectedPair(on: loop)
        try server.write(reply)
        var flushed: [Bool] = []
        server.box.value.closeAfterFlushing(within: .seconds(5)) { flushed.append($0) }
        server.box.value.closeAfterFlushing(within: .seconds(5)) { flushed.append($0) }
        for _ in 0..<100 { try loop.runOnce() }
        XCTAssertTrue(server.isOpen)
        try loop.advanceTime(by: .seconds(5))
        XCTAssertFalse(server.isOpen)
        XCTAssertEqual(flushed, [false, false], "the client read nothing: the deadline dropped the rest")
        client.close()
        listener.close()

        // Writes shut down by hand before: the close follows the queue's draining.
        (client, server, listener) = try connectedPair(on: loop)
        try server.write(reply)
        try server.shutdownWrites()
        server.box.value.closeAfterFlushing(within: .seconds(5)) { flushed.append($0) }
        try client.startReading { connection, read in
            if case .end = read { connection.close() }
        }
        loop.turn(until: { !server.isOpen && flushed.count == 3 })
        XCTAssertEqual(flushed.last, true)
        listener.close()

        // A peer that ends its side once it has the reply: the close follows at once.
        (client, server, listener) = try connectedPair(on: loop)
        try client.startReading { connection, read in
            if case .end = read { connection.close() }
        }
        try server.write(Array("bye\n".utf8))
        server.box.value.closeAfterFlushing(within: .seconds(5)) { flushed.append($0) }
        loop.turn(until: { !server.isOpen && flushed.count == 4 })
        XCTAssertEqual(flushed.last, true)
        listener.close()
        loop.shutdown()
    }

    func testReadingAConnectionThatClosesAfterFlushingIsRefused() throws {
        let loop = try Loop.manual()
        let (client, server, listener) = try connectedPair(on: loop)
        try server.write(reply)
        server.closeAfterFlushing()
        XCTAssertThrowsError(try server.startReading { _, _ in }) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        XCTAssertThrowsError(try server.startReading(framing: .lines(maxLength: 8)) { _, _ in }) {
            XCTAssertEqual($0 as? LoopError, .streamClosed)
        }
        XCTAssertThrowsError(try server.pipe(to: client)) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        XCTAssertThrowsError(try server.write([1])) { XCTAssertEqual($0 as? LoopError, .writesShutDown) }
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    func testShutdownEndsAFlushingCloseAndDetachLeavesNothing() throws {
        let loop = try Loop.manual()
        let (_, server, _) = try connectedPair(on: loop)
        try server.write(reply)
        var flushed: Bool?
        server.box.value.closeAfterFlushing(within: .seconds(5)) { flushed = $0 }
        loop.shutdown()
        XCTAssertEqual(flushed, false, "told, from the close callback, that the loop's end dropped the rest")

        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let attached = try Loop.attach(cLoop)
        var accepted: StreamConnection?
        let listener = try attached.listen(on: loopback()) { accepted = try? $0.get() }
        var client: StreamConnection?
        try attached.connect(to: listener.localAddress) { client = try? $0.get() }
        var turns = 0
        while (client == nil || accepted == nil) && turns < 100_000 {
            _ = uv_run(cLoop, UV_RUN_NOWAIT)
            turns += 1
        }
        try accepted!.write(reply)
        accepted!.closeAfterFlushing(within: .seconds(5))
        var drained: Int?
        listener.drain(within: .seconds(5)) { drained = $0 }
        attached.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(drained, 0, "the detach closed the connection; the drain ended")
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no handle or timer is left on the owner's loop")
    }

    func testDrainStopsAcceptingAndClosesWhatIsOpenAtTheDeadline() throws {
        let loop = try Loop.manual()
        var accepted: [StreamConnection] = []
        let listener = try loop.listen(on: loopback()) { result in
            if case .success(let connection) = result { accepted.append(connection) }
        }
        var clients: [StreamConnection] = []
        for _ in 0..<3 { try loop.connect(to: listener.localAddress) { if let c = try? $0.get() { clients.append(c) } } }
        loop.turn(until: { accepted.count == 3 && clients.count == 3 })
        var drained: [Int] = []
        listener.drain(within: .seconds(10)) { drained.append($0) }
        listener.drain(within: .seconds(10)) { drained.append($0) }
        var refused: LoopError?
        try loop.connect(to: listener.localAddress) { if case .failure(let error) = $0 { refused = error } }
        loop.turn(until: { refused != nil })
        XCTAssertEqual(refused, .libuv(function: "connect", code: UV_ECONNREFUSED.rawValue), "no longer accepting")

        accepted[0].close()
        for _ in 0..<100 { try loop.runOnce() }
        XCTAssertEqual(drained, [], "two connections are still open")
        XCTAssertTrue(accepted[1].isOpen)
        try loop.advanceTime(by: .seconds(10))
        loop.turn(until: { drained.count == 2 })
        XCTAssertEqual(drained, [2, 2])
        XCTAssertFalse(accepted[1].isOpen || accepted[2].isOpen)

        // Nothing open: the drain ends at once, after the call returns.
        let idle = try loop.listen(on: loopback()) { _ in }
        var idleDrained: Int?
        idle.drain(within: .seconds(10)) { idleDrained = $0 }
        XCTAssertNil(idleDrained)
        try loop.runOnce()
        XCTAssertEqual(idleDrained, 0)
        clients.forEach { $0.close() }
        loop.shutdown()
    }

    func testAsyncDrainOfAGroup() async throws {
        let group = try LoopGroup(loopCount: 2)
        let (accepts, accepted) = AsyncStream.makeStream(of: Void.self)
        let listeners = try group.listen(on: loopback()) { result in
            // Each connection finishes by itself: it answers, then closes after flushing.
            guard case .success(let connection) = result else { return }
            accepted.yield()
            try? connection.startReading(framing: .lines(maxLength: 64)) { connection, frame in
                guard case .frame = frame else { return }
                try? connection.write(Array("bye\n".utf8))
                connection.closeAfterFlushing()
            }
        }
        let client = try await group.loops[0].connect(to: listeners[0].localAddress)
        try await client.write(Array("hello\n".utf8))
        // Accepted first: closing a listening socket resets what its backlog still holds.
        var acceptedOnes = accepts.makeAsyncIterator()
        _ = await acceptedOnes.next()
        let drain = Task { await group.drain(listeners, within: .seconds(30)) }
        var answer: [UInt8] = []
        for try await chunk in client.reads { answer += chunk }
        client.close()
        let closedAtDeadline = await drain.value
        XCTAssertEqual(closedAtDeadline, 0)
        XCTAssertEqual(String(decoding: answer, as: UTF8.self), "bye\n")
        group.shutdown()
    }
}
