import XCTest
import CLibUV
import CUVLoop
import Synchronization
import UVLoop
import UVLoopC
import UVTestSupport

/// Which `uv_loop_t`s UVLoop is attached on, whichever side attached them, and one queue per loop
/// for all of C's handles on it.
final class AttachRegistryTests: XCTestCase {
    /// A loop detached from Swift leaves no trace in the C side's registry: a new `uv_loop_t` at
    /// the same address can be attached from C.
    func testALoopDetachedFromSwiftCanBeAttachedAgain() throws {
        let uv = makeCLoop()
        defer { uv.deallocate() }
        var handle: OpaquePointer?
        XCTAssertEqual(uvloop_attach(uv, &handle), 0)
        Loop.fromCHandle(handle)!.detach()
        uv_run(uv, UV_RUN_NOWAIT)
        XCTAssertEqual(uvloop_release(handle), 0)
        XCTAssertEqual(uv_loop_close(uv), 0)
        XCTAssertEqual(uv_loop_init(uv), 0, "a new loop in the same memory")
        XCTAssertEqual(uvloop_attach(uv, &handle), 0)
        XCTAssertEqual(uvloop_detach(handle), 0)
        uv_run(uv, UV_RUN_NOWAIT)
        XCTAssertEqual(uvloop_release(handle), 0)
        XCTAssertEqual(uv_loop_close(uv), 0)
    }

    /// A loop attached in Swift is known to `uvloop_attach`, and the other way round: attaching
    /// twice is refused on both sides instead of adding a second set of handles.
    func testAttachingTwiceIsRefusedOnBothSides() throws {
        let uv = makeCLoop()
        defer { uv.deallocate() }
        let loop = try Loop.attach(uv)
        var handle: OpaquePointer?
        XCTAssertEqual(uvloop_attach(uv, &handle), UVLOOP_EALREADY)
        XCTAssertThrowsError(try Loop.attach(uv)) { XCTAssertEqual($0 as? LoopError, .alreadyAttached) }
        loop.detach()
        uv_run(uv, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(uv), 0)
    }

    /// Every handle on one loop is the same queue: a thread's calls stay in order whichever
    /// handle they use (before, each handle had an inbox of its own).
    func testHandlesOnOneLoopShareOneQueue() throws {
        let thread = try Loop.startThread()
        defer { thread.shutdown() }
        let first = try thread.loop.makeCHandle()
        let second = try thread.loop.makeCHandle()
        XCTAssertEqual(first, second)
        XCTAssertEqual(uvloop_release(first), 0)
        XCTAssertEqual(uvloop_post(second, { _ in }, nil), 0, "one release per handle given out")
        XCTAssertEqual(uvloop_release(second), 0)
    }

    /// Before, uvloop_timer_fire from another thread turned every error into 0 ("it had ended").
    func testFireFromAThreadThatWouldCloseACycleReportsTheDeadlock() throws {
        let a = try Loop.startThread(name: "a")
        let b = try Loop.startThread(name: "b")
        defer {
            a.shutdown()
            b.shutdown()
        }
        let handle = try a.loop.makeCHandle()
        defer { uvloop_release(handle) }
        var timer: OpaquePointer?
        XCTAssertEqual(uvloop_timer_start(handle, 3_600_000_000_000, 0, { _ in }, nil, &timer), 0)
        let timerAddress = UInt(bitPattern: timer)
        // A's thread waits for B; B's work fires a timer of A's, which would wait for A's thread.
        let result = try a.loop.invoke {
            try b.loop.invoke { uvloop_timer_fire(OpaquePointer(bitPattern: timerAddress)) }
        }
        XCTAssertEqual(result, UVLOOP_EDEADLOCK)
        XCTAssertEqual(uvloop_timer_is_pending(timer), 1, "the timer did not run")
        XCTAssertEqual(uvloop_timer_cancel(timer), 1)
        uvloop_timer_release(timer)
    }
}
