import XCTest
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// The per-turn timer budget only moves where a burst is cut between turns: it never changes the
/// order in which timers fire, even when callbacks schedule, fire and cancel other timers.
final class TimerBudgetOrderTests: XCTestCase {
    func testTheBudgetDoesNotChangeTheFiringOrder() throws {
        for seed in 0..<100 as Range<UInt64> {
            let reference = try firingLog(seed: seed, budget: 4096)
            for budget in [1, 2, 3, 7] {
                let split = try firingLog(seed: seed, budget: budget)
                guard split != reference else { continue }
                let at = zip(split, reference).prefix { $0 != $1 }.count
                XCTFail("seed \(seed), budget \(budget): the logs first differ at entry \(at): \(split[at...].prefix(4)) against \(reference[at...].prefix(4))")
                return
            }
        }
    }

    /// 60 timers (one in five repeating) over 10 ms of manual time, whose callbacks schedule
    /// children, fire or cancel other timers, or cancel themselves; the clock moves in random steps.
    private func firingLog(seed: UInt64, budget: Int) throws -> [String] {
        let loop = try Loop.manual(postBudget: budget)
        let log = LoopBound([String](), loop: loop)
        let timers = LoopBound([Int: LoopTimer](), loop: loop)
        var random = SplitMix64(state: seed)
        for id in 0..<60 {
            let action = Int.random(in: 0..<6, using: &random)
            let target = Int.random(in: 0..<max(1, id), using: &random)
            let childDelay = Duration.milliseconds(Int.random(in: 0...2, using: &random))
            let body: @Sendable () -> Void = {
                log.value.append("\(id)@\(loop.now.nanoseconds)")
                switch action {
                case 0:
                    let child = id * 1000 + log.value.count
                    timers.value[child] = try? loop.schedule(after: childDelay) {
                        log.value.append("child \(child)@\(loop.now.nanoseconds)")
                    }
                case 1: _ = timers.value[target]?.fire()
                case 2: _ = timers.value[target]?.cancel()
                case 3: if log.value.count % 5 == 0 { _ = timers.value[id]?.cancel() }
                default: break
                }
            }
            let delay = Duration.milliseconds(Int.random(in: 0...10, using: &random))
            if Int.random(in: 0..<5, using: &random) == 0 {
                let interval = Duration.milliseconds(Int.random(in: 1...4, using: &random))
                timers.value[id] = try loop.scheduleRepeating(every: interval, after: delay, body)
            } else {
                timers.value[id] = try loop.schedule(after: delay, body)
            }
        }
        for _ in 0..<6 {
            try loop.advanceClockWithoutRunning(by: .milliseconds(Int.random(in: 0...8, using: &random)))
            try loop.runUntilIdle()
            log.value.append("|")
        }
        let result = log.value
        loop.shutdown()
        return result
    }
}
