import AsyncAlgorithms
import UVLoop
import UVLoopTesting
import XCTest

final class AsyncAlgorithmsExamples: XCTestCase {
    func testTimerSequenceExample() throws {
        // docs:begin async-algorithms-timer
        let loop = try Loop.manual()
        let ticks = LoopBound([LoopInstant](), loop: loop)
        let clock = loop.clock
        Task(executorPreference: loop) {
            for await tick in AsyncTimerSequence(interval: .seconds(1), clock: clock).prefix(3) {
                ticks.value.append(tick)
            }
        }
        try loop.advanceTime(by: .seconds(2))   // two ticks, at 1 s and 2 s, inside this call
        XCTAssertEqual(ticks.value, [.zero.advanced(by: .seconds(1)), .zero.advanced(by: .seconds(2))])
        // docs:end
    }
}
