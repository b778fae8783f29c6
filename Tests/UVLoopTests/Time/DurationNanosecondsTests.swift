import XCTest
@testable import UVLoop
import UVTestSupport

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

    func testAgreesWithA128BitDivisionAcrossTheWholeRange() {
        var random = SplitMix64(state: 0xD0_2A71)
        for _ in 0..<200_000 {
            // Attosecond counts of every magnitude, both signs.
            let bits = Int.random(in: 0...127, using: &random)
            let wide = Int128(truncatingIfNeeded: UInt128(random.next()) << 64 | UInt128(random.next()))
            let attoseconds = bits == 127 ? wide : wide >> (127 - bits)
            let duration = Duration(_high: Int64(truncatingIfNeeded: attoseconds >> 64), low: UInt64(truncatingIfNeeded: attoseconds))
            XCTAssertEqual(duration.saturatingNanoseconds, Int64(clamping: attoseconds / 1_000_000_000), "\(attoseconds) as")
        }
    }

    func testOutOfRangeDurationsClampInsteadOfTrapping() {
        XCTAssertEqual(Duration.nanoseconds(Int64.max).saturatingNanoseconds, .max)
        XCTAssertEqual(Duration.nanoseconds(Int64.min).saturatingNanoseconds, .min)
        XCTAssertEqual(Duration.seconds(9_223_372_036).saturatingNanoseconds, 9_223_372_036_000_000_000)
        XCTAssertEqual(Duration.seconds(9_223_372_037).saturatingNanoseconds, .max)
        XCTAssertEqual(Duration.seconds(-9_223_372_037).saturatingNanoseconds, .min)
        XCTAssertEqual(Duration.seconds(Int64.max).saturatingNanoseconds, .max)
        XCTAssertEqual(Duration.seconds(Int64.min).saturatingNanoseconds, .min)
        // The edges of Int64's range, one attosecond either side.
        let max = Int128(Int64.max) * 1_000_000_000
        let min = Int128(Int64.min) * 1_000_000_000
        for (attoseconds, expected) in [
            (max + 999_999_999, Int64.max), (max + 1_000_000_000, .max), (min - 999_999_999, .min), (min - 1_000_000_000, .min),
            (min + 1, Int64.min + 1), (max - 1, Int64.max - 1),
        ] {
            let duration = Duration(_high: Int64(truncatingIfNeeded: attoseconds >> 64), low: UInt64(truncatingIfNeeded: attoseconds))
            XCTAssertEqual(duration.saturatingNanoseconds, expected, "\(attoseconds) as")
        }
    }
}
