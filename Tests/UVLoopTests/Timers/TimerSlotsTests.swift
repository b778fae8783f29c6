import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Timer handles are slot numbers with a generation: reuse, retirement, the status table under
/// it, and scheduling and cancelling from many threads at once.
final class TimerSlotsTests: XCTestCase {
    func testAReusedSlotIsANewTimerThatAStaleHandleCannotTouch() throws {
        let loop = try Loop.manual()
        let ran = Atomic<Int>(0)
        let first = try loop.schedule(after: .seconds(1)) { ran.add(1, ordering: .relaxed) }
        try loop.advanceTime(by: .seconds(1))
        let second = try loop.schedule(after: .seconds(1)) { ran.add(10, ordering: .relaxed) }
        XCTAssertEqual(TimerSlots.slot(first.id), TimerSlots.slot(second.id), "the free slot is reused first")
        XCTAssertNotEqual(first, second)
        XCTAssertFalse(first.isPending)
        XCTAssertFalse(first.cancel(), "a stale handle cancels nothing")
        XCTAssertFalse(first.fire(), "nor fires anything")
        XCTAssertTrue(second.isPending)
        try loop.advanceTime(by: .seconds(1))
        XCTAssertEqual(ran.load(ordering: .relaxed), 11)
    }

    func testHandlesAreValuesThatCompareByTimer() throws {
        let loop = try Loop.manual()
        let timer = try loop.schedule(after: .seconds(1)) {}
        let copy = timer
        let other = try loop.schedule(after: .seconds(1)) {}
        XCTAssertEqual(timer, copy)
        XCTAssertNotEqual(timer, other)
        XCTAssertEqual(Set([timer, copy, other]).count, 2)
        XCTAssertTrue(copy.cancel())
        XCTAssertFalse(timer.isPending, "a copy is the same timer")
        XCTAssertTrue(other.isPending)
    }

    func testASlotIsRetiredBeforeItsGenerationCouldRepeat() throws {
        let loop = try Loop(native: NativeLoop.create(), clock: .manual, postBudget: 64, timerSlots: TimerSlots(generationLimit: 3))
        var handles: [LoopTimer] = []
        for _ in 0..<8 {
            handles.append(try loop.schedule(after: .zero) {})
            try loop.runUntilIdle()
        }
        let slots = handles.map { TimerSlots.slot($0.id) }
        XCTAssertEqual(Array(slots[0..<3]), [slots[0], slots[0], slots[0]], "reused while generations remain")
        XCTAssertFalse(slots[3...].contains(slots[0]), "then never again")
        XCTAssertEqual(Set(handles).count, 8)
        XCTAssertTrue(handles.allSatisfy { !$0.isPending && !$0.cancel() })
        loop.shutdown()
    }

    func testStatusWordsOnBothSidesOfChunkEdges() {
        let table = TimerStatusTable(initialWord: TimerSlots.unused)
        let edges: [UInt32] = [0, 4_095, 4_096, 12_287, 12_288, 28_671, 28_672]
        for slot in edges { table.prepare(slot) }
        table.prepare(4_096)
        for slot in edges { XCTAssertEqual(table.load(slot), TimerSlots.unused) }
        for (index, slot) in edges.enumerated() { table.store(slot, UInt64(index) << 32) }
        for (index, slot) in edges.enumerated() {
            XCTAssertEqual(table.load(slot), UInt64(index) << 32, "slot \(slot) kept its own word")
            XCTAssertFalse(table.compareExchange(slot, expected: 1, desired: 2))
            XCTAssertTrue(table.compareExchange(slot, expected: UInt64(index) << 32, desired: UInt64(index) << 32 | 2))
        }
    }

    func testFreeSlotsComeBackLowestFirst() throws {
        let loop = try Loop.manual()
        var timers: [LoopTimer] = []
        for _ in 0..<200 { timers.append(try loop.schedule(after: .seconds(1)) {}) }
        // Cancelled in a scrambled order; the 101st cancel leaves more dead entries than live
        // ones, and the compaction frees the 101 slots highest first.
        let order = (0..<200).map { ($0 * 67) % 200 }
        for index in order[..<101] { XCTAssertTrue(timers[index].cancel()) }
        XCTAssertEqual(loop.scheduledTimerCount, 99)
        var again: [UInt32] = []
        for _ in 0..<101 { again.append(TimerSlots.slot(try loop.schedule(after: .seconds(1)) {}.id)) }
        XCTAssertEqual(again, order[..<101].map { TimerSlots.slot(timers[$0].id) }.sorted(), "handed out again lowest first")
    }

    func testSchedulingAndCancellingFromManyThreadsAtOnce() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let perThread = 2_000
        let ran = Atomic<Int>(0)
        let cancelled = Atomic<Int>(0)
        onThreads(4) { index in
            var timers: [LoopTimer] = []
            for i in 0..<perThread {
                // Far off, so that only cancel and fire decide. Half are cancelled at once, while
                // their insertion may still be on its way to the loop.
                let timer = try! loop.schedule(after: .seconds(3600)) { ran.add(1, ordering: .relaxed) }
                timers.append(timer)
                if i % 2 == 1, timer.cancel() { cancelled.add(1, ordering: .relaxed) }
            }
            // The other half: every third is fired (which waits for the loop), the rest cancelled.
            for (i, timer) in timers.enumerated() where i % 2 == 0 {
                if (i + index) % 3 == 0 {
                    XCTAssertTrue(timer.fire())
                } else if timer.cancel() {
                    cancelled.add(1, ordering: .relaxed)
                }
            }
            for timer in timers { XCTAssertFalse(timer.isPending) }
        }
        let left = try loop.invoke { loop.scheduledTimerCount }
        XCTAssertEqual(left, 0)
        XCTAssertEqual(ran.load(ordering: .relaxed) + cancelled.load(ordering: .relaxed), 4 * perThread)
        thread.shutdown()
    }

    func testTimersScheduledFromAnotherThreadReuseSlots() throws {
        // A manual loop that runs only between rounds, so that the peak is the same every time.
        let loop = try Loop.manual()
        let highest = NativeMutex<UInt32>(0)
        for _ in 0..<20 {
            onThreads(1) { _ in
                for _ in 0..<1_000 {
                    let timer = try! loop.schedule(after: .seconds(3600)) {}
                    highest.withLock { $0 = max($0, TimerSlots.slot(timer.id)) }
                    XCTAssertTrue(timer.cancel())
                }
            }
            try loop.runUntilIdle()
            XCTAssertEqual(loop.scheduledTimerCount, 0)
        }
        // Slots freed on the loop's thread come back to this thread's schedules beyond the 4,096
        // the loop keeps for itself: at most that reserve plus a round of 1,000 in flight.
        XCTAssertLessThan(highest.withLock { $0 }, 4_096 + 1_000 + 1_000, "20,000 timers, but the table does not grow with them")
    }

    func testATimerCancelledBeforeItReachesTheLoopIsReleasedThere() throws {
        let loop = try Loop.manual()
        let releasedOnLoop = NativeMutex<Bool?>(nil)
        let result = NativeMutex<Bool?>(nil)
        onThreads(1) { _ in
            var tracked: Tracked? = Tracked { releasedOnLoop.withLock { $0 = loop.isOnLoopThread } }
            let timer = try! loop.schedule(after: .seconds(1)) { [tracked] in _ = tracked }
            tracked = nil
            result.withLock { $0 = timer.cancel() }
        }
        XCTAssertEqual(result.withLock { $0 }, true)
        XCTAssertNil(releasedOnLoop.withLock { $0 }, "the loop has not run: the closure is still queued")
        try loop.runUntilIdle()
        XCTAssertEqual(releasedOnLoop.withLock { $0 }, true)
        XCTAssertEqual(loop.scheduledTimerCount, 0)
    }

    func testSchedulingOnAShutDownLoopLeavesNoPendingTimer() throws {
        let loop = try Loop.manual()
        loop.shutdown()
        XCTAssertThrowsError(try loop.schedule(after: .seconds(1)) {})
        XCTAssertThrowsError(try loop.scheduleRepeating(every: .seconds(1)) {})
    }

    func testPerTimerBookkeepingStaysCompact() {
        // The memory budget per pending timer: at most 100 bytes besides captures.
        // No allocation for the handle: a value, the loop and the timer's slot and generation.
        XCTAssertEqual(MemoryLayout<LoopTimer>.size, 16)
        // Per pending timer: a status word, a slot and an entry (56 bytes, plus array growth).
        XCTAssertLessThanOrEqual(MemoryLayout<TimerQueue.Slot>.stride, 32)
        XCTAssertLessThanOrEqual(MemoryLayout<TimerEntry>.stride, 24)
    }
}
