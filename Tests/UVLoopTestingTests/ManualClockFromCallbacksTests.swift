import UVLoop
import UVLoopTesting
import XCTest

final class ManualClockFromCallbacksTests: XCTestCase {
    func testMovesTheClockFromACallbackWithoutRunningAnything() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(3)) { log.value.append("timer") }
        try loop.post {
            try? loop.advanceClockWithoutRunning(by: .milliseconds(5))
            log.value.append("posted at \(loop.now.nanoseconds / 1_000_000) ms")
        }
        try loop.runOnce()
        XCTAssertEqual(log.value, ["posted at 5 ms"], "the due timer waits for the loop to run")
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["posted at 5 ms", "timer"])
    }

    func testMisuseThrows() throws {
        let manual = try Loop.manual()
        XCTAssertThrowsError(try manual.advanceClockWithoutRunning(by: .milliseconds(-1))) {
            XCTAssertTrue("\($0)".contains("non-negative"))
        }
        // Moving a system clock, or a manual clock from another thread, stops the program: the
        // misuse program's cases advance-clock-system-clock and advance-clock-off-thread.
    }
}
