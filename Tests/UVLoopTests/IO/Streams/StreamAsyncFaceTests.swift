import XCTest

@testable import UVLoop
import UVTestSupport

/// The async faces' shape: typed `LoopError` failures, `next(isolation:)`, and a cancelled
/// waiting task's `LoopError.cancelled`, which leaves the connection or listener usable.
final class StreamAsyncFaceTests: XCTestCase {
    func testTheAsyncSequencesNameTheirFailure() {
        XCTAssertTrue(StreamReads.Failure.self == LoopError.self)
        XCTAssertTrue(StreamReads.Iterator.Failure.self == LoopError.self)
        XCTAssertTrue(StreamConnections.Failure.self == LoopError.self)
        XCTAssertTrue(StreamConnections.Iterator.Failure.self == LoopError.self)
        XCTAssertTrue(DescriptorReadiness.Iterator.Failure.self == LoopError.self)
        // Deliveries and ticks cannot fail: their sequences end instead.
        XCTAssertTrue(SignalDeliveries.Iterator.Failure.self == Never.self)
        XCTAssertTrue(LoopTicks.Iterator.Failure.self == Never.self)
    }

    func testErrorsAreTypedLoopErrors() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        let client = try await loop.connect(to: listener.localAddress)
        var connections = listener.connections.makeAsyncIterator()
        let server = try await connections.next(isolation: #isolation)!
        client.close()
        // `error` is a LoopError without a cast: these calls throw(LoopError).
        do {
            try await client.write([1])
            XCTFail("a write on a closed connection throws")
        } catch {
            XCTAssertEqual(error, .streamClosed)
        }
        do {
            for try await _ in client.reads {}
            XCTFail("reading a closed connection throws")
        } catch {
            XCTAssertEqual(error, .streamClosed)
        }
        do {
            _ = try await loop.connect(to: SocketAddress(unixPath: "/nonexistent/uvloop-no-such-socket"))
            XCTFail("connecting to no socket throws")
        } catch {
            guard case .libuv = error else { return XCTFail("\(error)") }
        }
        server.close()
        listener.close()
        thread.shutdown()
    }

    func testACancelledReadThrowsCancelledAndTheConnectionGoesOn() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)

        let reader = Task { () async throws -> [UInt8]? in
            var reads = server.reads.makeAsyncIterator()
            return try await reads.next()
        }
        reader.cancel()
        let cancelled = await reader.result
        XCTAssertEqual(cancelled.failure as? LoopError, .cancelled, "nothing was sent: the read waited, and was cancelled")

        try await client.write(Array("after".utf8))
        var reads = server.reads.makeAsyncIterator()
        var received: [UInt8] = []
        while received.count < 5, let chunk = try await reads.next() { received += chunk }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "after", "the connection reads on")
        client.close()
        server.close()
        listener.close()
        thread.shutdown()
    }

    func testACancelledAcceptThrowsCancelledAndTheListenerGoesOn() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        let accepter = Task { () async throws -> StreamConnection? in
            var connections = listener.connections.makeAsyncIterator()
            return try await connections.next()
        }
        accepter.cancel()
        let cancelled = await accepter.result
        XCTAssertEqual(cancelled.failure as? LoopError, .cancelled)
        let stillWaiting = try await loop.invoke { listener.box.value.hasAcceptWaiter }
        XCTAssertFalse(stillWaiting)

        let client = try await loop.connect(to: listener.localAddress)
        var connections = listener.connections.makeAsyncIterator()
        let server = try await connections.next()
        XCTAssertNotNil(server, "the listener accepts on")
        client.close()
        server?.close()
        listener.close()
        thread.shutdown()
    }

    /// Writes return without waiting for the loop's thread, which writes them in order; a
    /// close sends what was written before it.
    func testWritesArriveInOrderAndCloseSendsThemFirst() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        let expected = (0..<200).flatMap { index in [UInt8](repeating: UInt8(index % 256), count: 100) }
        for index in 0..<200 { try await client.write([UInt8](repeating: UInt8(index % 256), count: 100)) }
        client.close()
        var received: [UInt8] = []
        for try await chunk in server.reads { received += chunk }
        XCTAssertEqual(received.count, expected.count)
        XCTAssertTrue(received == expected, "every byte, in the order written")
        server.close()
        listener.close()
        thread.shutdown()
    }

    /// Once its user closed the connection, a read throws `streamClosed`, whether or not bytes had
    /// arrived before (or arrive after, while the close is on its way to the loop's thread).
    func testAReadAfterCloseThrowsEvenWithBytesWaiting() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        var reads = client.reads.makeAsyncIterator()
        try await server.write([1])
        _ = try await reads.next()
        try await server.write([2, 3])
        client.close()
        do {
            _ = try await reads.next()
            XCTFail("a read after close throws")
        } catch {
            XCTAssertEqual(error, .streamClosed)
        }
        server.close()
        listener.close()
        thread.shutdown()
    }

    /// A write the loop's thread cannot make (the peer reset the connection) fails a later call.
    func testAWriteThatFailsOnTheLoopFailsALaterWrite() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        server.resetAndClose()
        var reads = client.reads.makeAsyncIterator()
        do {
            while try await reads.next() != nil {}
        } catch {
            XCTAssertNotEqual(error, .cancelled, "the reset reached the client")
        }
        let bytes = [UInt8](repeating: 7, count: 1024)
        var failure: LoopError?
        for _ in 0..<10_000 {
            do {
                try await client.write(bytes)
            } catch {
                failure = error
                break
            }
        }
        guard case .libuv? = failure else { return XCTFail("expected a write error, got \(String(describing: failure))") }
        client.close()
        listener.close()
        thread.shutdown()
    }

    func testAConnectionServedByCallbacksGetsItsAsyncFaceOnFirstUse() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (server, client, listener) = try await callbackAcceptedPair(on: loop)
        XCTAssertNil(server.existingAsyncState, "a connection a listener's handler got carries no async state")
        XCTAssertNotNil(client.existingAsyncState, "connect(to:) async sets the async face up at once")

        // Settings made before the first async call carry over to the state it makes.
        try await loop.invoke {
            try server.setWriteWaterMarks(low: 10, high: 20)
            try server.setReadBufferLimit(30)
        }
        try await client.write(Array("hi".utf8))
        var reads = server.reads.makeAsyncIterator()
        var received: [UInt8] = []
        while received.count < 2, let chunk = try await reads.next() { received += chunk }
        XCTAssertEqual(String(decoding: received, as: UTF8.self), "hi")
        let settings = server.existingAsyncState?.guarded.withLock { ($0.lowWaterMark, $0.highWaterMark, $0.readBufferLimit) }
        XCTAssertEqual(settings?.0, 10)
        XCTAssertEqual(settings?.1, 20)
        XCTAssertEqual(settings?.2, 30)
        client.close()
        server.close()
        listener.close()
        thread.shutdown()
    }

    func testAFirstAsyncWriteAfterCloseThrows() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (server, client, listener) = try await callbackAcceptedPair(on: loop)
        server.close()
        do {
            try await server.write([1])
            XCTFail("a write after close() throws, even as the first async call")
        } catch {
            XCTAssertEqual(error, .streamClosed)
        }
        do {
            for try await _ in server.reads {}
            XCTFail("reading after close() throws")
        } catch {
            XCTAssertEqual(error, .streamClosed)
        }
        client.close()
        listener.close()
        thread.shutdown()
    }

    /// A listener with a handler (the callback face) on `loop`, from a task: the connection its
    /// handler got, a client connected to it, and the listener.
    private func callbackAcceptedPair(
        on loop: Loop
    ) async throws -> (server: StreamConnection, client: StreamConnection, listener: StreamListener) {
        let (accepted, delivery) = AsyncStream<StreamConnection>.makeStream()
        let listener = try await loop.invoke {
            try loop.listen(on: loopback()) { result in
                if case .success(let connection) = result { delivery.yield(connection) }
            }
        }
        let client = try await loop.connect(to: listener.localAddress)
        var connections = accepted.makeAsyncIterator()
        guard let server = await connections.next() else { throw LoopError.streamClosed }
        return (server, client, listener)
    }

    func testCancelledDescribesWhatHappened() {
        XCTAssertTrue(LoopError.cancelled.description.contains("cancelled"))
        XCTAssertTrue(LoopError.cancelled.description.contains("stays open"))
    }
}

extension Result {
    /// The failure, if any (for assertions).
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
