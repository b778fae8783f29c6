import CLibUV
import XCTest

@testable import UVLoop
import UVTestSupport

/// Water marks on the write side, bounded buffering on the async read side, and the async face.
final class StreamBackpressureTests: XCTestCase {
    func testWritabilityFollowsTheWaterMarks() throws {
        let loop = try Loop()
        let (client, server, listener) = try connectedPair(on: loop)
        try client.setWriteWaterMarks(low: 16 * 1024, high: 128 * 1024)
        XCTAssertThrowsError(try client.setWriteWaterMarks(low: 10, high: 5))
        var writableCalls = 0
        client.setWritableHandler { connection in
            XCTAssertTrue(connection.isWritable)
            writableCalls += 1
        }
        // The server does not read: write until the writer is told to stop.
        let chunk = [UInt8](repeating: 1, count: 64 * 1024)
        var sent = 0
        while client.isWritable {
            try client.write(chunk)
            sent += chunk.count
        }
        XCTAssertGreaterThan(client.queuedWriteBytes, 128 * 1024)
        XCTAssertLessThanOrEqual(client.queuedWriteBytes, 128 * 1024 + chunk.count)
        for _ in 0..<100 { try loop.runOnce() }
        XCTAssertEqual(writableCalls, 0, "still above the low-water mark: the peer reads nothing")

        var received = 0
        try server.startReading { _, read in if case .bytes(let bytes) = read { received += bytes.count } }
        loop.turn(until: { writableCalls == 1 })
        XCTAssertLessThanOrEqual(client.queuedWriteBytes, 16 * 1024)
        loop.turn(until: { received == sent })
        XCTAssertEqual(writableCalls, 1)
        [client, server].forEach { $0.close() }
        listener.close()
        loop.shutdown()
    }

    /// Writes queued on several connections at once leave a bounded number of finished requests
    /// (and their buffers) behind on the loop, however many were queued.
    func testFinishedWriteRequestsKeptByTheLoopAreBounded() throws {
        let loop = try Loop()
        let pairs = try (0..<4).map { _ in try connectedPair(on: loop) }
        let chunk = [UInt8](repeating: 1, count: 64 * 1024)
        var sent = 0
        for (client, _, _) in pairs {
            try client.setWriteWaterMarks(low: 16 * 1024, high: 512 * 1024)
            // The servers do not read yet: write until each writer is told to stop.
            while client.isWritable {
                try client.write(chunk)
                sent += chunk.count
            }
            XCTAssertGreaterThan(client.queuedWriteBytes, 512 * 1024)
        }
        var received = 0
        for (_, server, _) in pairs {
            try server.startReading { _, read in if case .bytes(let bytes) = read { received += bytes.count } }
        }
        loop.turn(until: { received == sent })
        loop.turn(until: { pairs.allSatisfy { $0.client.queuedWriteBytes == 0 } })
        let kept = loop.engine.ioHandles.keptStreamWriteCount
        XCTAssertGreaterThan(kept, 0, "finished requests are kept for the next queued writes")
        XCTAssertLessThanOrEqual(kept, LoopIOHandles.keptStreamWritesLimit)
        for (client, server, listener) in pairs {
            client.close()
            server.close()
            listener.close()
        }
        loop.shutdown()
    }

    func testAsyncWriterToAPeerThatNeverReadsStopsNearTheHighWaterMark() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        let chunk = [UInt8](repeating: 2, count: 16 * 1024)
        let highest = Counter()
        let writer = Task {
            while true {
                try await client.write(chunk)
                let queued = try await loop.invoke { client.box.value.queuedWriteBytes }
                if queued > highest.value { highest.increment(by: queued - highest.value) }
            }
        }
        // Wait until the writer is suspended: the kernel's buffers are full and the queue is
        // above the high-water mark.
        while try await loop.invoke({ client.box.value.isWritable }) { await Task.yield() }
        let queued = try await loop.invoke { client.box.value.queuedWriteBytes }
        XCTAssertGreaterThan(queued, 64 * 1024)
        XCTAssertLessThanOrEqual(queued, 64 * 1024 + chunk.count, "memory stays bounded near the high-water mark")
        XCTAssertLessThanOrEqual(highest.value, 64 * 1024 + chunk.count)

        writer.cancel()
        do {
            try await writer.value
            XCTFail("the writer runs until cancelled")
        } catch {
            XCTAssertEqual(error as? LoopError, .cancelled, "\(error)")
        }
        client.close()
        server.close()
        listener.close()
        thread.shutdown()
    }

    func testAsyncReaderThatDoesNotKeepUpStopsReading() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        let refused = try await loop.invoke { () -> LoopError? in
            do throws(LoopError) {
                try server.setReadBufferLimit(0)
                return nil
            } catch {
                return error
            }
        }
        guard case .invalidArgument(let message)? = refused else { return XCTFail("\(String(describing: refused))") }
        XCTAssertTrue(message.contains("at least 1 byte"), message)
        let limit = try await loop.invoke { () throws in
            try server.setReadBufferLimit(32 * 1024)
            return server.readBufferLimit
        }
        XCTAssertEqual(limit, 32 * 1024)
        var reads = server.reads.makeAsyncIterator()
        let total = 1024 * 1024
        let writer = Task {
            try await client.write([UInt8](repeating: 3, count: total))
            try await client.shutdownWrites()
        }
        var received = try await reads.next()!.count
        // Not reading on: the connection stops reading once 32 KiB wait in its buffer.
        while try await loop.invoke({ server.box.value.isReading }) { await Task.yield() }
        let buffered = try await loop.invoke { server.box.value.bufferedReadBytes }
        XCTAssertGreaterThanOrEqual(buffered, 32 * 1024)
        XCTAssertLessThan(buffered, 32 * 1024 + StreamReadBuffer.size)
        while let chunk = try await reads.next() { received += chunk.count }
        XCTAssertEqual(received, total, "nothing lost while reading was stopped")
        try await writer.value
        client.close()
        server.close()
        listener.close()
        thread.shutdown()
    }

    func testAsyncEchoAndCancelledRead() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let listener = try await loop.listen(on: loopback())
        let server = Task {
            for try await connection in listener.connections {
                Task {
                    for try await chunk in connection.reads { try await connection.write(chunk) }
                    connection.close()
                }
            }
        }
        let client = try await loop.connect(to: listener.localAddress)
        try await client.write(Array("ping".utf8))
        var reads = client.reads.makeAsyncIterator()
        var echoed: [UInt8] = []
        while echoed.count < 4, let chunk = try await reads.next() { echoed += chunk }
        XCTAssertEqual(String(decoding: echoed, as: UTF8.self), "ping")

        // A read that nobody answers ends with the task's cancellation.
        let waiting = Task {
            var more = client.reads.makeAsyncIterator()
            return try await more.next()
        }
        waiting.cancel()
        do {
            _ = try await waiting.value
            XCTFail("a cancelled read throws")
        } catch {
            XCTAssertEqual(error as? LoopError, .cancelled, "\(error)")
        }
        try await client.shutdownWrites()
        let last = try await reads.next()
        XCTAssertNil(last, "the server closed after our half-close")
        client.close()
        listener.close()
        try await server.value
        thread.shutdown()
    }
}
