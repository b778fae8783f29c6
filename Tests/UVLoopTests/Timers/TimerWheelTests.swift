import XCTest
@testable import UVLoop
import UVTestSupport

/// `TimerWheel` on its own: entries at every level come out at their tick, in tick order, however
/// they cascade, and empty stretches of time are skipped.
final class TimerWheelTests: XCTestCase {
    /// Drives the wheel the way `TimerQueue` does: takes buckets due by `target`, collects the
    /// entries due by the wheel's current tick (checking that none comes out early) and inserts
    /// the others again.
    private func advance(_ wheel: inout TimerWheel, to target: UInt64, into due: inout [TimerEntry]) {
        while let bucket = wheel.takeNextBucket(notAfter: target) {
            for position in 0..<bucket.count {
                let entry = bucket[position]
                if !wheel.insert(entry) {
                    XCTAssertEqual(TimerWheel.tick(of: entry.deadline), wheel.now, "an entry leaves the wheel at its tick")
                    due.append(entry)
                }
            }
        }
    }

    private func entry(tick: UInt64, offset: UInt64 = 0, sequence: UInt64 = 0) -> TimerEntry {
        TimerEntry(deadline: tick << TimerWheel.tickShift | offset, sequence: sequence, slot: UInt32(truncatingIfNeeded: sequence))
    }

    func testEntriesOnEveryLevelComeOutAtTheirTickInOrder() {
        var wheel = TimerWheel()
        // Bucket edges of every level, their neighbours, and the last tick a deadline can have.
        var ticks: [UInt64] = [1, 2, 62, 63, 64, 65, 4_095, 4_096, 4_097, 262_143, 262_144]
        for level in 3...7 { ticks += [1 << (6 * level) - 1, 1 << (6 * level), 1 << (6 * level) + 1] }
        ticks.append(UInt64.max >> TimerWheel.tickShift)
        var generator = SplitMix64(state: 0x71CC)
        for _ in 0..<500 { ticks.append(UInt64.random(in: 1...(1 << 30), using: &generator)) }
        for (sequence, tick) in ticks.shuffled(using: &generator).enumerated() {
            XCTAssertTrue(wheel.insert(entry(tick: tick, sequence: UInt64(sequence))))
        }
        XCTAssertEqual(wheel.count, ticks.count)

        var due: [TimerEntry] = []
        while let next = wheel.nextTick {
            let before = due.count
            advance(&wheel, to: next, into: &due)
            XCTAssertEqual(wheel.now, next, "the wheel moves to the bucket it takes out")
            // Every entry still in the wheel is due later.
            if let after = wheel.nextTick { XCTAssertGreaterThan(after, next) }
            for taken in due[before...] { XCTAssertEqual(TimerWheel.tick(of: taken.deadline), next) }
        }
        XCTAssertEqual(wheel.count, 0)
        XCTAssertEqual(due.map { TimerWheel.tick(of: $0.deadline) }, ticks.sorted())
    }

    func testNextTickIsALowerBoundAndExactOnTheLowestLevel() {
        var wheel = TimerWheel()
        XCTAssertNil(wheel.nextTick)
        XCTAssertTrue(wheel.insert(entry(tick: 5_000)))
        let bound = wheel.nextTick!
        XCTAssertLessThanOrEqual(bound, 5_000)
        XCTAssertGreaterThan(bound, 0)
        XCTAssertTrue(wheel.insert(entry(tick: 7, sequence: 1)))
        XCTAssertEqual(wheel.nextTick, 7, "a level-0 bucket starts at its entries' tick")
    }

    func testAdvancingPastEmptyTimeSkipsToTheTargetAndNewEntriesLandRelativeToIt() {
        var wheel = TimerWheel()
        XCTAssertTrue(wheel.insert(entry(tick: 1 << 30)))
        var tookBucket = false
        if wheel.takeNextBucket(notAfter: 100) != nil { tookBucket = true }
        XCTAssertFalse(tookBucket, "nothing due by tick 100")
        XCTAssertEqual(wheel.now, 100)
        XCTAssertFalse(wheel.insert(entry(tick: 100, sequence: 1)), "due by the current tick: not the wheel's")
        XCTAssertFalse(wheel.insert(entry(tick: 3, sequence: 2)), "in the past: not the wheel's")
        XCTAssertTrue(wheel.insert(entry(tick: 101, sequence: 3)))
        XCTAssertEqual(wheel.nextTick, 101)
        var due: [TimerEntry] = []
        advance(&wheel, to: .max, into: &due)
        XCTAssertEqual(due.map(\.sequence), [3, 0])
    }

    func testEntriesOfOneTickComeOutInInsertionOrder() {
        var wheel = TimerWheel()
        for sequence in 0..<100 as Range<UInt64> {
            // Two ticks, interleaved, with offsets inside the tick out of order.
            XCTAssertTrue(wheel.insert(entry(tick: 9_000 + sequence % 2, offset: 99 - sequence, sequence: sequence)))
        }
        var due: [TimerEntry] = []
        advance(&wheel, to: .max, into: &due)
        let even: [UInt64] = (0..<100).filter { $0 % 2 == 0 }
        let odd: [UInt64] = (0..<100).filter { $0 % 2 == 1 }
        XCTAssertEqual(due.map(\.sequence), even + odd)
    }

    func testCatchUpFollowsTheClockOnlyWhileNothingIsDueBeforeIt() {
        var wheel = TimerWheel()
        wheel.catchUp(to: 1_000)
        XCTAssertEqual(wheel.now, 1_000)
        XCTAssertTrue(wheel.insert(entry(tick: 1_010)))
        wheel.catchUp(to: 2_000)
        XCTAssertEqual(wheel.now, 1_000, "an entry is due before: it must be taken out first")
        wheel.catchUp(to: 1_005)
        XCTAssertEqual(wheel.now, 1_005)
        wheel.catchUp(to: 3)
        XCTAssertEqual(wheel.now, 1_005, "never backward")
    }

    func testKeepOnlyKeepsOnlyTheChosenEntries() {
        var wheel = TimerWheel()
        for slot in 0..<1_000 as Range<UInt64> {
            XCTAssertTrue(wheel.insert(entry(tick: 1 + slot * 977, sequence: slot)))
        }
        wheel.keepOnly { $0.slot % 3 == 0 }
        XCTAssertEqual(wheel.count, 334)
        var due: [TimerEntry] = []
        advance(&wheel, to: .max, into: &due)
        XCTAssertEqual(due.map(\.slot), (0..<1_000).filter { $0 % 3 == 0 }.map(UInt32.init))
        XCTAssertNil(wheel.nextTick)
    }

    func testRemoveAllEmptiesEveryLevel() {
        var wheel = TimerWheel()
        for shift in 0..<44 as Range<UInt64> { XCTAssertTrue(wheel.insert(entry(tick: 1 << shift, sequence: shift))) }
        var all: [TimerEntry] = []
        wheel.removeAll(into: &all)
        XCTAssertEqual(all.count, 44)
        XCTAssertEqual(wheel.count, 0)
        XCTAssertNil(wheel.nextTick)
    }
}
