import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Random sequences of schedule, cancel, fire-now, reschedule and advance, checked against a sorted-list model.
final class TimerModelTests: XCTestCase {
    /// The reference: pending timers in a list, fired in (deadline, sequence) order.
    struct Model {
        var now: UInt64 = 0
        var sequence = 0
        var pending: [(deadline: UInt64, sequence: Int, id: Int)] = []
        var fired: [String] = []

        mutating func schedule(id: Int, delay: UInt64) {
            pending.append((now + delay, sequence, id))
            sequence += 1
        }

        mutating func cancel(id: Int) -> Bool {
            guard let index = pending.firstIndex(where: { $0.id == id }) else { return false }
            pending.remove(at: index)
            return true
        }

        /// A moved timer takes a new place in the order, as if scheduled at the move.
        mutating func reschedule(id: Int, delay: UInt64) -> Bool {
            guard cancel(id: id) else { return false }
            pending.append((now + delay, sequence, id))
            sequence += 1
            return true
        }

        mutating func fire(id: Int) -> Bool {
            guard cancel(id: id) else { return false }
            fired.append("\(id)@\(now)")
            return true
        }

        mutating func advance(by delta: UInt64) {
            let target = now + delta
            pending.sort { ($0.deadline, $0.sequence) < ($1.deadline, $1.sequence) }
            while let first = pending.first, first.deadline <= target {
                pending.removeFirst()
                now = first.deadline
                fired.append("\(first.id)@\(now)")
            }
            now = target
        }
    }

    func testTenThousandRandomSequencesMatchTheModel() throws {
        // Coarse delays make equal deadlines common, to exercise the tie order.
        try replay(sequences: 10_000, seed: 0x5EED, finalAdvance: 100_000_000) { random in
            UInt64.random(in: 0...20, using: &random) * 1_000_000
        } advance: { random in
            UInt64.random(in: 0...15, using: &random) * 1_000_000
        }
    }

    /// Delays from nanoseconds to 36 years, so that timers land on every level of the timing wheel
    /// and move down through it; a third of them on a coarse grid, for ties far off.
    func testRandomSequencesOverEveryWheelLevelMatchTheModel() throws {
        func spread(_ random: inout SplitMix64) -> UInt64 {
            let magnitude = UInt64.random(in: 0...60, using: &random)
            let delay = UInt64.random(in: 0...(1 << magnitude), using: &random)
            return Int.random(in: 0..<3, using: &random) == 0 ? (delay >> 30) << 30 : delay
        }
        // A loop per sequence: its clock would run out of range over 2,000 such sequences.
        try replay(sequences: 2_000, seed: 0x5EED_1E7E, finalAdvance: 1 << 61, loopPerSequence: true, delay: spread, advance: spread)
    }

    private func replay(
        sequences: Int, seed: UInt64, finalAdvance: UInt64, loopPerSequence: Bool = false,
        delay: (inout SplitMix64) -> UInt64, advance: (inout SplitMix64) -> UInt64
    ) throws {
        var loop = try Loop.manual()
        var fired = LoopBound([String](), loop: loop)
        var generator = SplitMix64(state: seed)
        for sequenceIndex in 0..<sequences {
            if loopPerSequence && sequenceIndex > 0 {
                loop.shutdown()
                loop = try Loop.manual()
                fired = LoopBound([String](), loop: loop)
            }
            let seed = generator.next()
            var random = SplitMix64(state: seed)
            let base = loop.now.nanoseconds
            var model = Model(now: base)
            var timers: [Int: LoopTimer] = [:]
            fired.value.removeAll()
            var nextID = 0
            let operations = Int.random(in: 5...40, using: &random)
            for _ in 0..<operations {
                switch Int.random(in: 0..<12, using: &random) {
                case 0..<4:
                    let id = nextID
                    nextID += 1
                    let delay = delay(&random)
                    model.schedule(id: id, delay: delay)
                    timers[id] = try loop.schedule(after: .nanoseconds(Int64(delay))) { [fired, loop] in
                        fired.value.append("\(id)@\(loop.now.nanoseconds)")
                    }
                case 4..<6:
                    guard nextID > 0 else { continue }
                    let id = Int.random(in: 0..<nextID, using: &random)
                    XCTAssertEqual(timers[id]!.cancel(), model.cancel(id: id), "seed \(seed) (sequence \(sequenceIndex)): cancel \(id)")
                case 6..<7:
                    guard nextID > 0 else { continue }
                    let id = Int.random(in: 0..<nextID, using: &random)
                    XCTAssertEqual(timers[id]!.fire(), model.fire(id: id), "seed \(seed) (sequence \(sequenceIndex)): fire \(id)")
                case 7..<9:
                    guard nextID > 0 else { continue }
                    let id = Int.random(in: 0..<nextID, using: &random)
                    let delay = delay(&random)
                    XCTAssertEqual(
                        timers[id]!.reschedule(after: .nanoseconds(Int64(delay))), model.reschedule(id: id, delay: delay),
                        "seed \(seed) (sequence \(sequenceIndex)): reschedule \(id)")
                default:
                    let delta = advance(&random)
                    model.advance(by: delta)
                    try loop.advanceTime(by: .nanoseconds(Int64(delta)))
                }
            }
            model.advance(by: finalAdvance)
            try loop.advanceTime(by: .nanoseconds(Int64(finalAdvance)))
            if fired.value != model.fired {
                XCTFail("seed \(seed) (sequence \(sequenceIndex)): fired \(fired.value), model \(model.fired)")
                return
            }
            XCTAssertEqual(loop.scheduledTimerCount, 0, "seed \(seed)")
        }
    }
}
