import XCTest
@testable import UVLoop
import UVTestSupport

/// `InboxRing`, the bounded ring under an inbox, driven directly: what a close leaves in it.
final class InboxRingTests: XCTestCase {
    /// A producer that claims a cell after the close publishes a tombstone: the consumer skips it,
    /// and a producer that laps the ring onto it reads it as taken, not free.
    func testACellClaimedAfterCloseIsATombstoneTheConsumerSkips() {
        let ring = InboxRing<Int>(capacity: 2)
        XCTAssertEqual(ring.push(10), .pushed)
        ring.isClosed.pointee.store(true, ordering: .sequentiallyConsistent)
        XCTAssertEqual(ring.push(11), .closed)
        XCTAssertEqual(ring.push(12), .closed, "a full ring that is closed says closed")
        XCTAssertEqual(ring.pop(at: 0), .some(.some(10)))
        XCTAssertEqual(ring.pop(at: 1), .some(nil), "the tombstone")
        XCTAssertEqual(ring.pop(at: 2), nil, "nothing published there")
    }

    /// Messages still in the ring when it goes away (the loop never delivered them) are released
    /// with it, once each; delivered and tombstoned cells hold nothing.
    func testARingReleasesTheMessagesItStillHolds() {
        weak var delivered: Recorder<Int>?
        weak var pending: Recorder<Int>?
        do {
            let ring = InboxRing<Recorder<Int>>(capacity: 4)
            let first = Recorder<Int>()
            let second = Recorder<Int>()
            delivered = first
            pending = second
            XCTAssertEqual(ring.push(first), .pushed)
            XCTAssertEqual(ring.push(second), .pushed)
            if case .some(.some(let message)) = ring.pop(at: 0) {
                XCTAssertTrue(message === first)
            } else {
                XCTFail("the first message was published")
            }
            ring.isClosed.pointee.store(true, ordering: .sequentiallyConsistent)
            XCTAssertEqual(ring.push(Recorder<Int>()), .closed)
        }
        XCTAssertNil(delivered)
        XCTAssertNil(pending)
    }
}
