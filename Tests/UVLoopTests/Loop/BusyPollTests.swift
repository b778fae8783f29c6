import XCTest
@testable import UVLoop
import UVLoopTesting

/// Busy polling: after a drain, the idle handle keeps libuv polling without blocking for a window.
final class BusyPollTests: XCTestCase {
    /// After a drain that ran work, a busy-polling loop keeps its idle handle active (so libuv
    /// polls without blocking); without busy polling an idle loop lets it go and sleeps.
    func testAfterWorkABusyPollingLoopKeepsPollingAndAPlainOneSleeps() throws {
        // Stepped on this thread with the system clock: no other thread posts, so what the idle
        // handle does after the drain depends on the window alone.
        let loop = try Loop()
        try loop.post {}
        try loop.runOnce()
        XCTAssertFalse(loop.idleHandleIsActive, "no busy poll: the idle handle is off after the drain")
        try loop.setBusyPoll(Loop.maximumBusyPoll)
        XCTAssertEqual(loop.busyPoll, Loop.maximumBusyPoll)
        try loop.post {}
        try loop.runOnce()
        XCTAssertTrue(loop.idleHandleIsActive, "the window opened by the last drain is still open")
        loop.shutdown()
    }

    func testANegativeWindowIsRejectedAndAManualLoopIgnoresTheWindow() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.setBusyPoll(.milliseconds(-1))) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("use .zero"), message)
        }
        try loop.setBusyPoll(Loop.maximumBusyPoll)
        try loop.post {}
        try loop.runUntilIdle()
        XCTAssertFalse(loop.idleHandleIsActive, "a manual clock never busy-polls")
        loop.shutdown()
    }
}
