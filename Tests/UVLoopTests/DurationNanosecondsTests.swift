import XCTest
@testable import UVLoop

/// `Duration.saturatingNanoseconds`, which every timer delay goes through.
final class DurationNanosecondsTests: XCTestCase {
    func testWholeNanosecondsTruncateTowardZero() {
        XCTAssertEqual(Duration.zero.saturatingNanoseconds, 0)
        XCTAssertEqual(Duration.milliseconds(5).saturatingNanoseconds, 5_000_000)
        XCTAssertEqual(Duration.seconds(-7200).saturatingNanoseconds, -7_200_000_000_000)
        XCTAssertEqual(Duration(secondsComponent: 0, attosecondsComponent: 999_999_999).saturatingNanoseconds, 0)
        XCTAssertEqual(Duration(secondsComponent: 0, attosecondsComponent: -999_999_999).saturatingNanoseconds, 0)
        XCTAssertEqual(Duration(secondsComponent: 0, attosecondsComponent: 2_500_000_000).saturatingNanoseconds, 2)
        XCTAssertEqual(Duration(secondsComponent: -1, attosecondsComponent: 1).saturatingNanoseconds, -999_999_999)
    }

    func testOutOfRangeDurationsClampInsteadOfTrapping() {
        XCTAssertEqual(Duration.nanoseconds(Int64.max).saturatingNanoseconds, .max)
        XCTAssertEqual(Duration.nanoseconds(Int64.min).saturatingNanoseconds, .min)
        XCTAssertEqual(Duration.seconds(9_223_372_036).saturatingNanoseconds, 9_223_372_036_000_000_000)
        XCTAssertEqual(Duration.seconds(9_223_372_037).saturatingNanoseconds, .max)
        XCTAssertEqual(Duration.seconds(-9_223_372_037).saturatingNanoseconds, .min)
        XCTAssertEqual(Duration.seconds(Int64.max).saturatingNanoseconds, .max)
        XCTAssertEqual(Duration.seconds(Int64.min).saturatingNanoseconds, .min)
    }
}
