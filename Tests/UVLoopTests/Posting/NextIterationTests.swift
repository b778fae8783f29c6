import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

final class NextIterationTests: XCTestCase {
    func testNextIterationRunsAfterPostedWorkOfTheSameTurn() throws {
        let loop = try Loop.manual()
        let log = Recorder<String>()
        try loop.postNextIteration { log.append("next") }
        try loop.post { log.append("post") }
        try loop.runOnce()
        XCTAssertEqual(log.values, ["post", "next"], "posts drain before poll; next-iteration runs in the check phase")
    }

    /// Work a posted job queues runs in the check phase of the same turn, before the
    /// next-iteration work queued alongside it, not on the following turn.
    func testPostsQueuedByAJobRunBeforeNextIterationWorkItQueued() throws {
        let loop = try Loop.manual()
        let log = Recorder<String>()
        try loop.post {
            log.append("job")
            try? loop.postNextIteration { log.append("next") }
            try? loop.post { log.append("first post") }
            try? loop.post { log.append("second post") }
        }
        try loop.runOnce()
        XCTAssertEqual(log.values, ["job", "first post", "second post", "next"])
    }

    func testWorkQueuedWhileTheSnapshotRunsWaitsForTheFollowingIteration() throws {
        let loop = try Loop.manual()
        let turns = LoopBound([Int](), loop: loop)
        let iteration = LoopBound(0, loop: loop)
        @Sendable func chain(_ depth: Int) {
            turns.value.append(iteration.value)
            if depth < 3 { try? loop.postNextIteration { chain(depth + 1) } }
        }
        try loop.postNextIteration { chain(0) }
        for i in 0..<6 {
            iteration.value = i
            try loop.runOnce()
        }
        XCTAssertEqual(turns.value, [0, 1, 2, 3], "one link of the chain per loop iteration")
        XCTAssertFalse(loop.idleHandleIsActive, "idle handle stops once the queue is empty")
    }

    func testNonEmptyQueueKeepsLoopFromBlockingAndEmptyQueueReleasesIt() throws {
        let loop = try Loop.manual()
        try loop.postNextIteration {}
        XCTAssertTrue(loop.idleHandleIsActive, "pending next-iteration work must not let the loop block in poll")
        try loop.runUntilIdle()
        XCTAssertFalse(loop.idleHandleIsActive)
    }

    func testCrossThreadNextIterationKeepsProducerOrderWithPosts() throws {
        let thread = try Loop.startThread()
        let log = LoopBound([String](), loop: thread.loop)
        // The loop's thread is held in a job while the producer queues its three, so that they
        // reach the loop together (a drain between them would let "next" run before "b" arrives).
        let holding = Gate()
        let release = Gate()
        try thread.loop.post {
            holding.open()
            release.pass()
        }
        holding.pass()
        onThreads(1) { _ in
            try! log.post { $0.append("a") }
            try! log.postNextIteration { $0.append("next") }
            try! log.post { $0.append("b") }
        }
        release.open()
        // Queued after the producer's work: its next-iteration entry lands after "next".
        let done = ThreadEvent()
        try thread.loop.post { try? thread.loop.postNextIteration { done.signal() } }
        done.wait()
        XCTAssertEqual(try log.invoke { $0 }, ["a", "b", "next"])
        thread.shutdown()
    }
}
