import XCTest

@testable import UVLoop
import UVTestSupport

/// The async face from tasks that run on the loop's thread (`Task(executorPreference: loop)`),
/// which write at once when no other task's bytes wait: the order of the calls, the high-water
/// mark, a cancelled waiting write and a failed write hold as for tasks elsewhere.
final class StreamAsyncFaceOnTheLoopTests: XCTestCase {
    /// Writes from tasks on the loop's thread and from tasks elsewhere arrive in the order of
    /// the calls, whether a loop task's write goes out at once or behind queued bytes.
    func testWritesFromTheLoopAndOtherTasksKeepTheOrderOfTheCalls() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        var expected: [UInt8] = []
        for round in 0..<100 {
            let first = [UInt8](repeating: UInt8(round % 250), count: 100)
            let second = [UInt8](repeating: UInt8(round % 250 + 1), count: 200)
            let third = [UInt8](repeating: UInt8(round % 250 + 2), count: 300)
            try await Task(executorPreference: loop) { try await client.write(first) }.value
            try await Task { try await client.write(second) }.value
            try await Task(executorPreference: loop) {
                XCTAssertTrue(loop.isOnLoopThread)
                try await client.write(third)
            }.value
            expected += first + second + third
        }
        client.close()
        var received: [UInt8] = []
        for try await chunk in server.reads { received += chunk }
        XCTAssertEqual(received.count, expected.count)
        XCTAssertTrue(received == expected, "every byte, in the order of the calls")
        server.close()
        listener.close()
        thread.shutdown()
    }

    /// A loop task writing to a peer that never reads stops near the high-water mark, and its
    /// waiting write throws `cancelled` when the task is cancelled.
    func testALoopTaskWritingToAPeerThatNeverReadsStopsNearTheHighWaterMark() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        let chunk = [UInt8](repeating: 2, count: 16 * 1024)
        let writer = Task(executorPreference: loop) { () async throws in
            var highest = 0
            while true {
                try await client.write(chunk)
                highest = max(highest, client.box.value.queuedWriteBytes)
                XCTAssertLessThanOrEqual(highest, 64 * 1024 + chunk.count, "memory stays bounded near the high-water mark")
            }
        }
        // Wait until the writer is suspended: the kernel's buffers are full and the queue is
        // above the high-water mark.
        while try await loop.invoke({ client.box.value.isWritable }) { await Task.yield() }
        let queued = try await loop.invoke { client.box.value.queuedWriteBytes }
        XCTAssertGreaterThan(queued, 64 * 1024)
        XCTAssertLessThanOrEqual(queued, 64 * 1024 + chunk.count)

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

    /// A write that a loop task made at once and that failed (the peer reset the connection)
    /// fails a later call with the write's error.
    func testAWriteThatFailsOnALoopTaskFailsALaterWrite() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let (client, server, listener) = try await asyncConnectedPair(on: loop)
        server.resetAndClose()
        let failure = await Task(executorPreference: loop) { () -> LoopError? in
            var reads = client.reads.makeAsyncIterator()
            do throws(LoopError) {
                while try await reads.next() != nil {}
            } catch {
                XCTAssertNotEqual(error, .cancelled, "the reset reached the client")
            }
            let bytes = [UInt8](repeating: 7, count: 1024)
            for _ in 0..<10_000 {
                do throws(LoopError) {
                    try await client.write(bytes)
                } catch {
                    return error
                }
            }
            return nil
        }.value
        guard case .libuv? = failure else { return XCTFail("expected a write error, got \(String(describing: failure))") }
        // Later writes fail with the close that followed, or the shut-down writing side.
        client.close()
        do {
            try await Task(executorPreference: loop) { try await client.write([1]) }.value
            XCTFail("a write after close throws")
        } catch {
            XCTAssertEqual(error as? LoopError, .streamClosed, "\(error)")
        }
        listener.close()
        thread.shutdown()
    }
}
