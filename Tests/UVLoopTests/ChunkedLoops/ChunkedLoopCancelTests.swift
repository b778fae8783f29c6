import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Cancelling a chunked loop: between chunks, from its body, before it begins, after its last item,
/// and by cancelling the task that awaits it.
final class ChunkedLoopCancelTests: XCTestCase {
    func testCancelBetweenChunksStopsBeforeTheNextItem() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let handle = try loop.startChunkedLoop(count: 100, budget: .items(3)) { index in
            log.value.append("body \(index)")
        } progress: { _ in
        } completion: { completion in
            log.value.append(describe(completion))
        }
        try loop.runOnce()
        try loop.runOnce()
        try loop.runOnce()
        XCTAssertEqual(log.value.last, "body 5")
        XCTAssertTrue(handle.isRunning)
        XCTAssertTrue(handle.cancel())
        XCTAssertFalse(handle.cancel(), "cancel is idempotent")
        XCTAssertFalse(handle.isRunning)
        try loop.runUntilIdle()
        XCTAssertEqual(log.value.suffix(2), ["body 5", "done cancelled 6/100 at 6"])
        XCTAssertFalse(try loop.runOnce())
    }

    func testCancelFromTheBodyIsExact() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let handle = NativeMutex<ChunkedLoop?>(nil)
        let ended = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        let started = try loop.startChunkedLoop(count: 100, budget: .items(10)) { index in
            log.value.append("body \(index)")
            if index == 4 { XCTAssertEqual(handle.withLock { $0 }?.cancel(), true) }
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
            ended.value = completion
        }
        handle.withLock { $0 = started }
        try loop.runUntilIdle()
        XCTAssertThrowsError(try ended.value?.get()) { XCTAssertTrue($0 is CancellationError) }
        XCTAssertEqual(log.value, [
            "progress 0/100", "body 0", "body 1", "body 2", "body 3", "body 4", "done cancelled 5/100 at 5",
        ])
        XCTAssertFalse(started.cancel(), "an ended chunked loop cannot be cancelled")
    }

    func testCancelBeforeItBeginsReportsInitialProgressThenCancelled() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let handle = try loop.startChunkedLoop(count: 10) { index in
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
        }
        XCTAssertTrue(handle.cancel())
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["progress 0/10", "done cancelled 0/10 at 0"])
    }

    func testCancelFromTheLastProgressReportStopsNothingAndTheLoopFinishes() throws {
        let loop = try Loop.manual()
        let handle = LoopBound<ChunkedLoop?>(nil, loop: loop)
        let cancelled = LoopBound<Bool?>(nil, loop: loop)
        let ending = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        handle.value = try loop.startChunkedLoop(count: 3, budget: .items(10)) { _ in
        } progress: { progress in
            if progress.processed == progress.total { cancelled.value = handle.value!.cancel() }
        } completion: { ending.value = $0 }
        try loop.runUntilIdle()
        XCTAssertEqual(cancelled.value, false, "every item had run: there was nothing left to stop")
        let completion = try XCTUnwrap(ending.value)
        XCTAssertTrue(completion.isFinished)
        XCTAssertNil(completion.stoppedAt)
        XCTAssertEqual(try completion.get(), 3)
    }

    func testCancellingTheAwaitingTaskCancelsTheChunkedLoop() async throws {
        let thread = try Loop.startThread(name: "chunked-cancel")
        let calls = Counter()
        let handle = try thread.loop.startChunkedLoop(count: Int.max) { _ in
            calls.increment()
        }
        let waiter = Task { await handle.completion }
        waiter.cancel()
        let completion = await waiter.value
        guard case .cancelled = completion.reason else { return XCTFail("\(completion)") }
        XCTAssertEqual(completion.stoppedAt, completion.processed)
        thread.shutdown()
        XCTAssertEqual(calls.value, completion.processed, "no body call after the end")
    }
}
