import XCTest
import CUVLoop
import UVLoop
import UVLoopC

// docs:begin Loop-fromCHandle
@c func stats_component_start(_ handle: OpaquePointer?) -> Int32 {
    guard let loop = Loop.fromCHandle(handle) else { return UVLOOP_EINVAL }
    do {
        try loop.scheduleRepeating(every: .seconds(10)) { print("stats component: alive") }
        return 0
    } catch {
        return error.cErrorCode
    }
}
// docs:end

/// The doc comment examples of `Loop.fromCHandle(_:)` and `makeCHandle()`.
final class CHandleExamples: XCTestCase {
    func testAComponentEntryPointGetsTheLoopBehindItsHandle() throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let handle = try thread.loop.makeCHandle()
        XCTAssertEqual(stats_component_start(handle), 0)
        XCTAssertEqual(stats_component_start(nil), UVLOOP_EINVAL)
        XCTAssertEqual(uvloop_release(handle), 0)
    }
}
