import XCTest
@testable import UVLoop

/// `SlotBitmap`, the timer queue's record of scheduled and dead slots.
final class SlotBitmapTests: XCTestCase {
    func testInsertRemoveAndDrainHighestFirst() {
        var bitmap = SlotBitmap()
        bitmap.reserve(200)
        for slot: UInt32 in [0, 63, 64, 127, 128, 199] { bitmap.insert(slot) }
        bitmap.remove(127)
        XCTAssertTrue(bitmap.contains(64))
        XCTAssertFalse(bitmap.contains(127))
        XCTAssertFalse(bitmap.contains(1))
        var drained = NoncopyableArray<UInt32>()
        drained.append(7)
        bitmap.removeAll(into: &drained)
        XCTAssertEqual((0..<drained.count).map { drained[$0] }, [7, 199, 128, 64, 63, 0], "appended, highest first")
        XCTAssertFalse(bitmap.contains(199))
        bitmap.removeAll(into: &drained)
        XCTAssertEqual(drained.count, 6, "empty after draining")
    }
}
