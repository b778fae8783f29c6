import CLibUV
import XCTest
@testable import UVLoop

extension Loop {
    /// Whether libuv's idle handle is active (it forces zero-timeout polls: must be off when idle).
    var idleHandleIsActive: Bool { confined.value.idle.isActive }
}

/// A `uv_loop_t` initialized the way a C daemon would, for tests of adopted loops. The caller
/// deallocates it (after `uv_loop_close`).
func makeCLoop() -> UnsafeMutablePointer<uv_loop_t> {
    let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
    XCTAssertEqual(uv_loop_init(cLoop), 0)
    return cLoop
}
