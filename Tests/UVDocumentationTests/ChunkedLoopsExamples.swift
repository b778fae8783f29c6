import Synchronization
import UVLoop
import UVLoopTesting
import XCTest

/// The examples of ChunkedLoops.md, run for real.
final class ChunkedLoopsExamples: XCTestCase {
    func testAChunkedLoop() throws {
        let loop = try Loop.manual()
        let names = ["ada", "grace", "barbara"]
        // docs:begin chunked-loop
        let shown = LoopBound([String](), loop: loop)

        try loop.startChunkedLoop(over: names, budget: .items(2)) { name in
            shown.value.append(name.uppercased())            // each item, on the loop's thread
        } progress: { progress in
            shown.value.append("\(Int(progress.fractionCompleted * 100))%")   // after each chunk
        } completion: { completion in
            shown.value.append("done: \(completion.processed) items")
        }
        // docs:end
        _ = try loop.runUntilIdle()
        XCTAssertEqual(shown.value, ["0%", "ADA", "GRACE", "66%", "BARBARA", "100%", "done: 3 items"])
        loop.shutdown()
    }

    func testAwaitingAChunkedLoop() async throws {
        let thread = try Loop.startThread()
        // docs:begin chunked-await
        let sum = Atomic<Int>(0)
        let processed = try await thread.loop.startChunkedLoop(count: 1000) { index in
            sum.add(index, ordering: .relaxed)
        }.completion.get()                                    // 1000, or the error that stopped it
        // docs:end
        XCTAssertEqual(processed, 1000)
        XCTAssertEqual(sum.load(ordering: .relaxed), 999 * 1000 / 2)
        thread.shutdown()
    }

    func testCancelling() throws {
        let loop = try Loop.manual()
        // docs:begin chunked-cancel
        let ended = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        let chunked = try loop.startChunkedLoop(count: 1_000_000, budget: .items(100)) { _ in
            // one item of work
        } completion: { completion in
            ended.value = completion           // .cancelled, processed: 100
        }
        _ = try loop.runUntilIdle(maxIterations: 2)   // a chunk of 100 items runs
        chunked.cancel()                       // stops it before the next item
        _ = try loop.runUntilIdle()
        // docs:end
        XCTAssertFalse(chunked.isRunning)
        XCTAssertEqual(ended.value?.processed, 100)
        XCTAssertEqual(ended.value?.reason.description, ChunkedLoopCompletion.Reason.cancelled.description)
        loop.shutdown()
    }
}
