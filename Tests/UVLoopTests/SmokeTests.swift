import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting

final class SmokeTests: XCTestCase {
    func testPostAndTimersOnManualClock() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.post { log.value.append("post") }
        try loop.postNextIteration { log.value.append("next") }
        try loop.schedule(after: .milliseconds(10)) { log.value.append("t10") }
        let cancelled = try loop.schedule(after: .milliseconds(5)) { log.value.append("t5") }
        XCTAssertTrue(cancelled.cancel())
        XCTAssertFalse(cancelled.cancel())
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["post", "next"])
        try loop.advanceTime(by: .milliseconds(10))
        XCTAssertEqual(log.value, ["post", "next", "t10"])
        loop.shutdown()
        XCTAssertThrowsError(try loop.post {})
    }

    func testThreadedLoopInvoke() throws {
        let thread = try Loop.startThread()
        let value = try thread.loop.invoke { 41 + 1 }
        XCTAssertEqual(value, 42)
        let count = Atomic<Int>(0)
        for _ in 0..<1000 { try thread.loop.post { count.add(1, ordering: .relaxed) } }
        try thread.shutdown()
        XCTAssertEqual(count.load(ordering: .relaxed), 1000)
    }
}
