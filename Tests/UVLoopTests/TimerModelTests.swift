import XCTest
@testable import UVLoop
import UVLoopTesting

/// Random sequences of schedule, cancel, fire-now and advance, checked against a sorted-list model.
final class TimerModelTests: XCTestCase {
    struct SplitMix64: RandomNumberGenerator {
        var state: UInt64
        mutating func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
    }

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
        let sequences = 10_000
        let loop = try Loop.manual()
        let fired = LoopBound([String](), loop: loop)
        var generator = SplitMix64(state: 0x5EED)
        for sequenceIndex in 0..<sequences {
            let seed = generator.next()
            var random = SplitMix64(state: seed)
            let base = loop.now.nanoseconds
            var model = Model(now: base)
            var timers: [Int: LoopTimer] = [:]
            fired.value.removeAll()
            var nextID = 0
            let operations = Int.random(in: 5...40, using: &random)
            for _ in 0..<operations {
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<4:
                    let id = nextID
                    nextID += 1
                    // Coarse delays make equal deadlines common, to exercise the tie order.
                    let delay = UInt64.random(in: 0...20, using: &random) * 1_000_000
                    model.schedule(id: id, delay: delay)
                    timers[id] = try loop.schedule(after: .nanoseconds(Int64(delay))) {
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
                default:
                    let delta = UInt64.random(in: 0...15, using: &random) * 1_000_000
                    model.advance(by: delta)
                    try loop.advanceTime(by: .nanoseconds(Int64(delta)))
                }
            }
            model.advance(by: 100_000_000)
            try loop.advanceTime(by: .milliseconds(100))
            if fired.value != model.fired {
                XCTFail("seed \(seed) (sequence \(sequenceIndex)): fired \(fired.value), model \(model.fired)")
                return
            }
            XCTAssertEqual(loop.scheduledTimerCount, 0, "seed \(seed)")
        }
    }
}
