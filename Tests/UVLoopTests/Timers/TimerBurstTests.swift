import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// A burst of due timers is split by the post budget: at most one budget per turn, with posted
/// work and a poll between the parts, and a shutdown from inside it still finishes it.
final class TimerBurstTests: XCTestCase {
    func testABurstOfDueTimersFiresAtMostTheBudgetPerTurnInOrder() throws {
        let loop = try Loop.manual(postBudget: 10)
        let fired = LoopBound([Int](), loop: loop)
        // 25 timers over 25 distinct deadlines, scheduled out of deadline order.
        for i in 0..<25 {
            let ms = (i * 7) % 25 + 1
            try loop.schedule(after: .milliseconds(ms)) { fired.value.append(ms) }
        }
        try loop.advanceClockWithoutRunning(by: .milliseconds(30))
        XCTAssertTrue(try loop.runOnce(), "the rest of the burst is ready for the next turn")
        XCTAssertEqual(fired.value, Array(1...10), "one turn fires the budget, earliest first")
        XCTAssertTrue(try loop.runOnce())
        XCTAssertEqual(fired.value, Array(1...20))
        XCTAssertFalse(try loop.runOnce(), "nothing is ready once the burst has fired")
        XCTAssertEqual(fired.value, Array(1...25))
        XCTAssertFalse(loop.idleHandleIsActive, "an idle loop must not keep its idle handle active")
    }

    func testWorkQueuedByATimerBurstRunsBetweenItsTurnsOnTheWakeTimer() throws {
        // The system clock, so that the burst comes from the wake timer (the timer phase), after a
        // real poll: one deadline for all, already passed by the time the loop runs.
        let loop = try Loop(postBudget: 10)
        let log = LoopBound([String](), loop: loop)
        let deadline = loop.now.advanced(by: .milliseconds(1))
        for i in 0..<25 {
            try loop.schedule(at: deadline) {
                log.value.append("t\(i)")
                if i == 0 {
                    try! loop.post { log.value.append("post") }
                    try! loop.postNextIteration { log.value.append("next") }
                }
                if i == 24 { loop.stop() }
            }
        }
        try loop.run()
        let timers = (0..<25).map { "t\($0)" }
        XCTAssertEqual(
            log.value, timers[0..<10] + ["post", "next"] + timers[10...],
            "the post runs after the first budget's timers, and a poll (then the check phase) comes before the rest")
        loop.shutdown()
    }

    func testShutdownFromATimerFinishesTheBurstTheBudgetSplit() throws {
        let loop = try Loop(postBudget: 10)
        let fired = Recorder<Int>()
        let deadline = loop.now.advanced(by: .milliseconds(1))
        for i in 0..<25 {
            try loop.schedule(at: deadline) {
                fired.append(i)
                if i == 0 { loop.shutdown() }
            }
        }
        let later = Atomic<Bool>(false)
        try loop.schedule(at: deadline.advanced(by: .seconds(60))) { later.store(true, ordering: .relaxed) }
        try loop.run()
        XCTAssertEqual(fired.values, Array(0..<25), "timers already due when the burst began fire before shutdown ends")
        XCTAssertFalse(later.load(ordering: .relaxed), "a timer not yet due is cancelled")
    }
}
