import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Posted work must never be stranded in the queue, whatever the batch and budget boundaries.
final class PostQueueDrainTests: XCTestCase {
    /// Posts values `start..<start+count` from another thread; returns once they are all queued.
    private func post(_ count: Int, to loop: Loop, log: Recorder<Int>, from start: Int) {
        onThreads(1) { _ in
            for value in start..<(start + count) {
                try? loop.post { log.append(value) }
            }
        }
    }

    /// A wake-up that arrives while an earlier batch still has jobs left over (more than the
    /// budget) must still lead to the new jobs being taken once that batch is used up.
    func testAWakeDuringALeftOverBatchStillDrainsTheNewJobs() throws {
        let loop = try Loop.manual(postBudget: 1)
        let log = Recorder<Int>()
        post(3, to: loop, log: log, from: 0)
        try loop.runOnce()   // the wake takes jobs 0...2, runs 0
        post(1, to: loop, log: log, from: 3)
        try loop.runOnce()   // idle runs 1; the new wake runs 2 and cannot take 3 yet
        try loop.runUntilIdle(maxIterations: 10)
        XCTAssertEqual(log.values, [0, 1, 2, 3])
        loop.shutdown()
    }
}
