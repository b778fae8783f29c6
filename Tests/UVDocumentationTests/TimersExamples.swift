import UVLoop
import UVLoopTesting
import XCTest

/// The examples of TimersAndVirtualTime.md, run for real on a manual clock.
final class TimersExamples: XCTestCase {
    func testCancelAndFire() throws {
        let loop = try Loop.manual()
        // docs:begin timer-handle
        let pings = LoopBound(0, loop: loop)
        let timer = try loop.schedule(after: .seconds(2)) { pings.value += 1 }
        let cancelled = timer.cancel()   // true: this call prevented the run
        let fired = timer.fire()         // false: a cancelled timer never runs
        let pending = timer.isPending    // false

        let reminder = try loop.schedule(after: .seconds(60)) { pings.value += 1 }
        reminder.fire()                  // runs it now, once; pings.value == 1
        // docs:end
        XCTAssertTrue(cancelled)
        XCTAssertFalse(fired)
        XCTAssertFalse(pending)
        XCTAssertEqual(pings.value, 1)
        XCTAssertFalse(reminder.isPending)
        loop.shutdown()
    }

    func testPushingATimeoutBack() throws {
        let loop = try Loop.manual()
        // docs:begin reschedule
        let timedOut = LoopBound(false, loop: loop)
        let idle = try loop.schedule(after: .seconds(30)) { timedOut.value = true }
        try loop.advanceTime(by: .seconds(20))
        idle.reschedule(after: .seconds(30))         // a message arrived: due at 50 s now
        try loop.advanceTime(by: .seconds(20))       // 40 s: still pending
        try loop.advanceTime(by: .seconds(10))       // 50 s: timedOut.value == true
        // docs:end
        XCTAssertTrue(timedOut.value)
        XCTAssertFalse(idle.isPending)
        loop.shutdown()
    }

    func testRepeating() throws {
        let loop = try Loop.manual()
        // docs:begin repeating
        let beats = LoopBound([LoopInstant](), loop: loop)
        let heartbeat = try loop.scheduleRepeating(every: .milliseconds(100), policy: .fixedRate) {
            beats.value.append(loop.now)
        }
        try loop.advanceTime(by: .milliseconds(350))   // fires at 100, 200 and 300 ms
        heartbeat.cancel()
        // docs:end
        XCTAssertEqual(beats.value.map { $0.nanoseconds / 1_000_000 }, [100, 200, 300])
        loop.shutdown()
    }

    func testSleepAndTicks() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        // docs:begin sleep-and-ticks
        try await loop.sleep(for: .milliseconds(5))   // cancelling the task cancels the timer
        var ticks: [LoopInstant] = []
        for await tick in try loop.ticks(every: .milliseconds(5)) {   // the loop's time at each tick
            ticks.append(tick)
            if ticks.count == 3 { break }              // leaving the loop cancels the timer
        }
        // docs:end
        XCTAssertEqual(ticks.count, 3)
        XCTAssertEqual(ticks, ticks.sorted())
        thread.shutdown()
    }

    func testVirtualTimeInATest() throws {
        // docs:begin virtual-time
        let loop = try Loop.manual()                   // the real loop, on a clock only the test moves
        let attempts = LoopBound([UInt64](), loop: loop)
        let retry = try loop.schedule(after: .milliseconds(250)) {
            attempts.value.append(loop.now.nanoseconds / 1_000_000)
        }
        try loop.advanceTime(by: .milliseconds(249))
        XCTAssertEqual(attempts.value, [])
        try loop.advanceTime(by: .milliseconds(1))   // fires now, synchronously, with now == 250 ms
        XCTAssertEqual(attempts.value, [250])
        XCTAssertFalse(retry.cancel())               // it already ran
        // docs:end
        loop.shutdown()
    }

    func testLoopClockUnderAManualClock() throws {
        // docs:begin loop-clock-manual
        let loop = try Loop.manual()
        let woke = LoopBound(false, loop: loop)
        Task(executorPreference: loop) {
            try await Task.sleep(for: .seconds(30), clock: loop.clock)
            woke.value = true
        }
        try loop.runUntilIdle()                         // the task sleeps on one of the loop's timers
        try loop.advanceTime(by: .seconds(30))          // 30 s of loop time, at once
        try loop.runUntilIdle()                         // the task resumes on the loop
        XCTAssertTrue(woke.value)
        // docs:end
        loop.shutdown()
    }

    func testLoopClockOnAThread() async throws {
        // docs:begin loop-clock
        let thread = try Loop.startThread()
        let clock = thread.loop.clock
        let start = clock.now
        try await Task.sleep(for: .milliseconds(5), clock: clock)
        print(start.duration(to: clock.now) >= .milliseconds(5))    // true
        // docs:end
        XCTAssertGreaterThanOrEqual(start.duration(to: clock.now), .milliseconds(5))
        thread.shutdown()
    }
}
