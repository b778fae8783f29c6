import XCTest
import UVLoop

/// An inbox's ring is bounded by memory, not only by count: a capacity whose ring would take more
/// than ``Loop/maximumInboxBytes`` is an error that says what capacity fits, never a crash when
/// the allocation fails.
final class InboxCapacityLimitTests: XCTestCase {
    func testACapacityWhoseRingWouldTakeMoreThanTheMaximumIsAnInvalidArgument() throws {
        let loop = try Loop.manual()
        for capacity in [1 << 30, 1 << 27, 1 << 62] {
            XCTAssertThrowsError(try loop.makeInbox(of: Int.self, capacity: capacity) { _ in }) { error in
                guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
                XCTAssertTrue(message.contains("at most 67108864"), message)
            }
        }
        XCTAssertThrowsError(try loop.makeInbox(of: (Int, Int, Int).self, capacity: 1 << 26) { _ in })
        loop.shutdown()
    }

    func testACapacityWithinTheLimitIsAccepted() throws {
        let loop = try Loop.manual()
        // An Int takes a 16-byte cell: 2^26 cells would be exactly 1 GiB; 2^16 take 1 MiB.
        let inbox = try loop.makeInbox(of: Int.self, capacity: 1 << 16) { _ in }
        try inbox.send(1)
        try loop.runUntilIdle()
        inbox.close()
        loop.shutdown()
    }
}
