// docs:begin retry-test
import UVLoop
import UVLoopTesting
import XCTest

final class RetryTests: XCTestCase {
    func testRetryFiresAfterBackoffUnlessCancelled() throws {
        let loop = try Loop.manual()
        let attempts = LoopBound([UInt64](), loop: loop)
        let retry = try loop.schedule(after: .milliseconds(250)) {
            attempts.value.append(loop.now.nanoseconds / 1_000_000)
        }
        try loop.advanceTime(by: .milliseconds(249))
        XCTAssertEqual(attempts.value, [])
        try loop.advanceTime(by: .milliseconds(1))
        XCTAssertEqual(attempts.value, [250])
        XCTAssertFalse(retry.cancel())   // it already ran
    }
}
// docs:end
