import XCTest
import UVLoop

/// A busy-poll window is bounded: a window of years would keep a core spinning after every drain.
final class BusyPollWindowTests: XCTestCase {
    func testAWindowLongerThanTheMaximumIsAnInvalidArgumentAndChangesNothing() throws {
        let loop = try Loop()
        try loop.setBusyPoll(.microseconds(200))
        for window in [Duration.seconds(Int64.max), .seconds(2), Loop.maximumBusyPoll + .nanoseconds(1)] {
            XCTAssertThrowsError(try loop.setBusyPoll(window)) { error in
                guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("maximum"), message)
            }
        }
        XCTAssertEqual(loop.busyPoll, .microseconds(200), "a refused window leaves the old one")
        try loop.setBusyPoll(Loop.maximumBusyPoll)
        XCTAssertEqual(loop.busyPoll, Loop.maximumBusyPoll)
        try loop.setBusyPoll(.zero)
        loop.shutdown()
    }
}
