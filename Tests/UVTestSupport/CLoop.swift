import CLibUV
import XCTest

/// A `uv_loop_t` initialized the way a C daemon would, for tests of attached loops: the test owns
/// it, runs it with `uv_run`, closes it (`uv_loop_close`) and then deallocates it.
public func makeCLoop(file: StaticString = #filePath, line: UInt = #line) -> UnsafeMutablePointer<uv_loop_t> {
    let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    XCTAssertEqual(uv_loop_init(cLoop), 0, file: file, line: line)
    return cLoop
}
