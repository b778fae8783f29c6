import CLibUV
import XCTest

@testable import UVLoop
import UVTestSupport

/// Shutdown and detach close every stream, listener and pending connect, failing what waits.
final class StreamLifecycleTests: XCTestCase {
    func testShutdownClosesEverythingAndFailsWhatWaits() throws {
        let loop = try Loop()
        var listenerEvents: [Result<StreamConnection, LoopError>] = []
        var server: StreamConnection?
        let listener = try loop.listen(on: loopback()) { result in
            listenerEvents.append(result)
            if case .success(let connection) = result { server = connection }
        }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        loop.turn(until: { client != nil && server != nil })
        let serverLog = ReadLog()
        try server!.startReading(serverLog.handler)
        // A peer that never reads: fill the kernel's buffers until a write is queued.
        let chunk = [UInt8](repeating: 7, count: 256 * 1024)
        var completions: [LoopError?] = []
        while client!.queuedWriteBytes == 0 {
            try client!.write(chunk) { completions.append($0) }
        }
        let queuedCount = completions.count
        // A connect still in flight when the loop shuts down (to a listener that never accepts,
        // it would complete; close it first): use a second connect started right before.
        var pending: Result<StreamConnection, LoopError>?
        try loop.connect(to: listener.localAddress) { pending = $0 }

        loop.shutdown()
        XCTAssertFalse(client!.isOpen)
        XCTAssertFalse(server!.isOpen)
        XCTAssertEqual(serverLog.failure, .shutDown, "a read handler hears why reading ended")
        XCTAssertTrue(completions.count > queuedCount)
        XCTAssertTrue(completions.contains { $0 == .shutDown }, "queued writes fail with shutDown")
        XCTAssertEqual(listenerEvents.count, 2)
        if case .failure(let error) = listenerEvents.last { XCTAssertEqual(error, .shutDown) } else { XCTFail() }
        if case .failure(let error) = pending { XCTAssertEqual(error, .shutDown) } else { XCTFail("\(String(describing: pending))") }
        XCTAssertThrowsError(try client!.write([1])) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loop.connect(to: listener.localAddress) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    func testDetachClosesStreamsSoTheOwnerCanCloseItsLoop() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        var server: StreamConnection?
        let listener = try loop.listen(on: loopback()) { result in server = try? result.get() }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        var turns = 0
        while (client == nil || server == nil) && turns < 100_000 {
            _ = uv_run(cLoop, UV_RUN_NOWAIT)
            turns += 1
        }
        let log = ReadLog()
        try server!.startReading(log.handler)
        var written: LoopError??
        try client!.write(Array("bye".utf8)) { written = $0 }
        XCTAssertEqual(uv_run(cLoop, UV_RUN_NOWAIT) != 0, true, "open streams keep the owner's loop alive")

        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(log.failure, .detached)
        XCTAssertEqual(written, .some(nil), "the kernel took the bytes before the detach")
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no stream handle is left on the owner's loop")
        XCTAssertThrowsError(try client!.write([1])) { XCTAssertEqual($0 as? LoopError, .detached) }
    }

    /// A detach asked for inside a read callback waits for the callback to return (the read's
    /// bytes are still lent to it), then closes every stream, as inside the loop's own callbacks.
    func testDetachInsideAReadCallbackFinishesWhenTheCallbackReturns() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        var server: StreamConnection?
        let listener = try loop.listen(on: loopback()) { result in server = try? result.get() }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        var turns = 0
        while (client == nil || server == nil) && turns < 100_000 {
            _ = uv_run(cLoop, UV_RUN_NOWAIT)
            turns += 1
        }
        var seen: [String] = []
        try server!.startReading { connection, read in
            guard case .bytes(let bytes) = read else {
                seen.append("end")
                return
            }
            loop.detach()
            seen.append("read \(String(decoding: bytes, as: UTF8.self)) after detach, open: \(connection.isOpen)")
        }
        try client!.write(Array("last".utf8))
        turns = 0
        while seen.isEmpty && turns < 100_000 {
            _ = uv_run(cLoop, UV_RUN_NOWAIT)
            turns += 1
        }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(seen.first, "read last after detach, open: true", "the callback finished first")
        XCTAssertFalse(loop.isAcceptingWork)
        XCTAssertEqual(uv_loop_close(cLoop), 0, "the detach closed every stream once the callback returned")
    }

    func testAsyncWaitersFailWithShutDown() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        let client = try await loop.connect(to: listener.localAddress)
        var iterator = listener.connections.makeAsyncIterator()
        let server = try await iterator.next()!
        let reader = Task { () -> LoopError? in
            do {
                for try await _ in server.reads {}
                return nil
            } catch {
                return error as? LoopError
            }
        }
        let accepter = Task { () -> LoopError? in
            var connections = listener.connections.makeAsyncIterator()
            do {
                _ = try await connections.next()
                return nil
            } catch {
                return error as? LoopError
            }
        }
        // Both tasks are suspended once the loop holds their waiters.
        while try await loop.invoke({ !server.box.value.isReading || !listener.box.value.hasAcceptWaiter }) { await Task.yield() }
        thread.shutdown()
        let readerError = await reader.value
        let accepterError = await accepter.value
        XCTAssertEqual(readerError, .shutDown)
        XCTAssertEqual(accepterError, .shutDown)
        do {
            try await client.write([1])
            XCTFail("write after shutdown")
        } catch {
            XCTAssertEqual(error, .shutDown)
        }
    }
}
