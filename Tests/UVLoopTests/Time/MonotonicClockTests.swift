import XCTest
import CLibUV
@testable import UVLoop

/// The system clock UVLoop reads is libuv's: the same origin and units as `uv_hrtime()`.
final class MonotonicClockTests: XCTestCase {
    func testReadsTheClockBehindUVHrtime() {
        for _ in 0..<1_000 {
            let before = uv_hrtime()
            let reading = monotonicNanoseconds()
            let after = uv_hrtime()
            XCTAssertLessThanOrEqual(before, reading)
            XCTAssertLessThanOrEqual(reading, after)
        }
    }
}
