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

    /// Posts job `value` of a chain from another thread: each job, when it runs, posts the next
    /// one from another thread and returns only once that post is queued (a task that hops to
    /// the loop and back at once), until `last`.
    private static func chain(_ value: Int, last: Int, to loop: Loop, log: Recorder<Int>) {
        onThreads(1) { _ in
            try? loop.post {
                log.append(value)
                if value < last { chain(value + 1, last: last, to: loop, log: log) }
            }
        }
    }

    /// Jobs that other threads queue while a batch of theirs runs are taken by the same drain, not
    /// left to later turns whose polls cannot block.
    func testJobsQueuedByOtherThreadsDuringADrainRunInThatDrain() throws {
        let loop = try Loop.manual()
        let log = Recorder<Int>()
        Self.chain(0, last: 4, to: loop, log: log)
        try loop.runOnce()
        XCTAssertEqual(log.values, [0, 1, 2, 3, 4])
        loop.shutdown()
    }

    /// A job that re-posts itself from another thread forever still lets a step end: the budget
    /// bounds every drain, the jobs taken during it included.
    func testAChainFromAnotherThreadStopsAtTheBudget() throws {
        let budget = 4
        let loop = try Loop.manual(postBudget: budget)
        let log = Recorder<Int>()
        Self.chain(0, last: .max, to: loop, log: log)
        try loop.runOnce()
        // At most four drains in a step: idle, prepare, the wake-up and check.
        XCTAssertGreaterThanOrEqual(log.values.count, budget)
        XCTAssertLessThanOrEqual(log.values.count, 4 * budget)
        loop.shutdown()
    }

    /// A task that keeps hopping back from another thread does not hold a drain for its whole
    /// budget: after `lateTakesPerDrain` late takes the drain ends, and timers and I/O get their
    /// turn.
    func testLateTakesFromOtherThreadsAreBoundedPerDrain() throws {
        let loop = try Loop.manual()
        let log = Recorder<Int>()
        Self.chain(0, last: .max, to: loop, log: log)
        loop.engine.drainPosted()
        XCTAssertEqual(log.values.count, 1 + LoopEngine.lateTakesPerDrain)
        loop.shutdown()
    }

    /// The loop thread's own posts made during a drain still wait for the poll: a drain takes no
    /// more jobs from other threads once the loop's thread has queued one.
    func testAnOwnPostDuringADrainStopsTakingJobsFromOtherThreads() throws {
        let loop = try Loop.manual()
        let log = Recorder<Int>()
        onThreads(1) { _ in
            try? loop.post {
                log.append(0)
                try? loop.post { log.append(100) }   // the loop's own thread
                Self.chain(1, last: 2, to: loop, log: log)
            }
        }
        try loop.runUntilIdle()
        // 100 waits for the poll after 0's drain; the next drain runs the batch from other
        // threads (1), then the loop's own snapshot (100), then what arrived meanwhile (2).
        XCTAssertEqual(log.values, [0, 1, 100, 2])
        loop.shutdown()
    }
}
