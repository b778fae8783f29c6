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
