import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

final class PostTests: XCTestCase {
    func testPostNeverRunsInlineAndKeepsOrder() throws {
        let loop = try Loop.manual()
        let log = Recorder<Int>()
        for i in 0..<5 { try loop.post { log.append(i) } }
        XCTAssertEqual(log.values, [], "post must never run inline")
        try loop.runUntilIdle()
        XCTAssertEqual(log.values, [0, 1, 2, 3, 4])
    }

    func testPostFromLoopThreadInsideACallbackRunsInALaterDrain() throws {
        let loop = try Loop.manual()
        let log = Recorder<String>()
        try loop.post {
            log.append("outer")
            try? loop.post { log.append("inner") }
            log.append("outer-end")
        }
        try loop.runUntilIdle()
        XCTAssertEqual(log.values, ["outer", "outer-end", "inner"])
    }

    func testSelfRepostingTaskDoesNotStarveTimersOrNextIteration() throws {
        let loop = try Loop.manual()
        let spins = Atomic<Int>(0)
        let timerFired = Atomic<Bool>(false)
        let nextRan = Atomic<Bool>(false)
        @Sendable func spin() {
            spins.add(1, ordering: .relaxed)
            try? loop.post(spin)
        }
        try loop.post(spin)
        try loop.schedule(after: .zero) { timerFired.store(true, ordering: .relaxed) }
        try loop.postNextIteration { nextRan.store(true, ordering: .relaxed) }
        for _ in 0..<3 { try loop.runOnce() }
        XCTAssertTrue(timerFired.load(ordering: .relaxed))
        XCTAssertTrue(nextRan.load(ordering: .relaxed))
        XCTAssertLessThanOrEqual(spins.load(ordering: .relaxed), 6, "each drain runs a snapshot: at most a couple per turn")
        loop.shutdown()
    }

    /// A post from another thread that arrives while the loop is awake sends no wake-up (one is
    /// still pending); the loop looks at the queue before it polls, so the post runs in that turn.
    func testAPostFromAnotherThreadWhileTheLoopIsAwakeRunsBeforeTheLoopPolls() throws {
        let loop = try Loop.manual()
        let log = Recorder<String>()
        onThreads(1) { _ in
            try! loop.post {
                log.append("A")
                onThreads(1) { _ in try! loop.post { log.append("B") } }
            }
        }
        try loop.runOnce()
        XCTAssertEqual(log.values, ["A", "B"], "B arrived while the loop ran A, and ran in the same turn")
        XCTAssertFalse(try loop.runOnce(), "nothing is left")
        loop.shutdown()
    }

    /// A chain of posts, each made from a new thread while the loop runs the previous one, so
    /// that none of them wakes the loop: every link must still run without further help.
    func testPostsThatNeverWakeTheLoopAllRun() throws {
        let thread = try Loop.startThread(name: "awake-chain")
        let loop = thread.loop
        let links = 200
        let done = ThreadEvent()
        let ran = Atomic<Int>(0)
        @Sendable func link(_ i: Int) {
            ran.add(1, ordering: .relaxed)
            if i == links { done.signal(); return }
            onThreads(1) { _ in try! loop.post { link(i + 1) } }
        }
        try loop.post { link(1) }
        XCTAssertTrue(done.wait(timeoutNanoseconds: 60_000_000_000), "a post that found a wake-up pending was never run")
        XCTAssertEqual(ran.load(ordering: .relaxed), links)
        thread.shutdown()
    }

    func testBudgetBoundsEachDrainAndTheRestRunsNextTurn() throws {
        let loop = try Loop(clock: .manual, postBudget: 10)
        let count = Atomic<Int>(0)
        for _ in 0..<25 { try loop.post { count.add(1, ordering: .relaxed) } }
        XCTAssertTrue(try loop.runOnce(), "work is left after one budget-bound turn")
        XCTAssertLessThan(count.load(ordering: .relaxed), 25)
        try loop.runUntilIdle()
        XCTAssertEqual(count.load(ordering: .relaxed), 25)
        XCTAssertFalse(loop.idleHandleIsActive, "an idle loop must not keep its idle handle active")
    }

    func testFourProducersHundredThousandEachRunExactlyOnceInPerProducerOrder() throws {
        let thread = try Loop.startThread(name: "post-test")
        let loop = thread.loop
        let producers = 4
        let perProducer = 100_000
        // Loop-thread-only state: the last value seen per producer, and a count.
        let state = LoopBound((last: [Int](repeating: -1, count: producers), count: 0, outOfOrder: 0), loop: loop)
        onThreads(producers) { producer in
            for i in 0..<perProducer {
                try! state.post { s in
                    if s.last[producer] != i - 1 { s.outOfOrder += 1 }
                    s.last[producer] = i
                    s.count += 1
                }
            }
        }
        // Every producer has returned, so all their posts are queued ahead of this invoke.
        let final = try state.invoke { $0 }
        thread.shutdown()
        XCTAssertEqual(final.count, producers * perProducer)
        XCTAssertEqual(final.outOfOrder, 0)
        XCTAssertEqual(final.last, [Int](repeating: perProducer - 1, count: producers))
    }

    func testPostAfterShutdownThrowsAndNothingIsDropped() throws {
        let loop = try Loop.manual()
        let ran = Atomic<Int>(0)
        try loop.post { ran.add(1, ordering: .relaxed) }
        loop.shutdown()
        XCTAssertEqual(ran.load(ordering: .relaxed), 1, "shutdown runs what was posted before it")
        XCTAssertThrowsError(try loop.post { ran.add(1, ordering: .relaxed) }) { error in
            XCTAssertEqual(error as? LoopError, .shutDown)
            XCTAssertTrue("\(error)".contains("accepts no new work"))
        }
        XCTAssertThrowsError(try loop.postNextIteration {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertThrowsError(try loop.schedule(after: .seconds(1)) {}) { XCTAssertEqual($0 as? LoopError, .shutDown) }
        XCTAssertEqual(ran.load(ordering: .relaxed), 1)
    }

    /// The loop's own thread queues without a lock; its posts are still refused, with an error,
    /// once shutdown has begun (here by the shutdown drain itself), never dropped silently.
    func testAPostMadeByTheShutdownDrainIsRefusedWithAnError() throws {
        let loop = try Loop.manual()
        let outcomes = Recorder<String>()
        try loop.post {
            do {
                try loop.post { outcomes.append("ran") }
                outcomes.append("accepted")
            } catch {
                outcomes.append("\(error)")
            }
        }
        loop.shutdown()
        XCTAssertEqual(outcomes.values.count, 1)
        XCTAssertTrue(outcomes.values.first?.contains("accepts no new work") ?? false, "\(outcomes.values)")
    }

    func testALoopThreadPostOutsideAnyCallbackStartsTheIdleHandleItself() throws {
        let loop = try Loop.manual()
        XCTAssertFalse(loop.idleHandleIsActive)
        try loop.post {}
        XCTAssertTrue(loop.idleHandleIsActive, "no callback's end follows this post: it must start the handle")
        try loop.runUntilIdle()
        XCTAssertFalse(loop.idleHandleIsActive)
    }

    func testAPostFromTheCheckPhaseKeepsTheIdleHandleActiveAfterTheCallback() throws {
        let loop = try Loop.manual()
        let log = Recorder<String>()
        // Runs in the check phase, after that phase's drain: only the callback's end can keep the
        // next poll from blocking for the post.
        try loop.postNextIteration {
            log.append("next iteration")
            try? loop.post { log.append("posted from the check phase") }
        }
        try loop.runOnce()
        XCTAssertEqual(log.values, ["next iteration"])
        XCTAssertTrue(loop.idleHandleIsActive, "the check callback's end must start the idle handle for the post")
        try loop.runOnce()
        XCTAssertEqual(log.values, ["next iteration", "posted from the check phase"])
        XCTAssertFalse(loop.idleHandleIsActive)
    }

    func testZeroPostBudgetIsRejected() {
        XCTAssertThrowsError(try Loop(postBudget: 0)) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
    }
}

