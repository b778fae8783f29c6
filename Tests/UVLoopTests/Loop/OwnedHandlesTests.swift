import XCTest
import CLibUV
@testable import UVLoop
import UVTestSupport

/// `Loop.ownsHandle(_:)`: an owner walking its loop tells UVLoop's handles from its own.
final class OwnedHandlesTests: XCTestCase {
    /// The handles `uv_walk` finds on `cLoop`, split into UVLoop's and the owner's.
    private func walk(_ cLoop: UnsafeMutablePointer<uv_loop_t>) -> (uvloop: Int, owner: Int) {
        final class Tally { var uvloop = 0; var owner = 0 }
        let tally = Tally()
        withExtendedLifetime(tally) {
            uv_walk(cLoop, { handle, context in
                let tally = Unmanaged<Tally>.fromOpaque(context!).takeUnretainedValue()
                if Loop.ownsHandle(UnsafeRawPointer(handle!)) { tally.uvloop += 1 } else { tally.owner += 1 }
            }, Unmanaged.passUnretained(tally).toOpaque())
        }
        return (tally.uvloop, tally.owner)
    }

    func testAForgottenDetachShowsOnlyUVLoopsHandlesAndDetachClearsThem() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let ownerIdle = UnsafeMutablePointer<uv_idle_t>.allocate(capacity: 1)
        defer { ownerIdle.deallocate() }
        uv_idle_init(cLoop, ownerIdle)
        let loop = try Loop.attach(cLoop)
        let inbox = try loop.makeInbox(of: Int.self) { _ in }
        let before = walk(cLoop)
        XCTAssertEqual(before.owner, 1, "the owner's idle handle")
        XCTAssertGreaterThanOrEqual(before.uvloop, 6, "the loop's own handles and the inbox's")
        uv_close(UnsafeMutableRawPointer(ownerIdle).assumingMemoryBound(to: uv_handle_t.self), nil)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), UV_EBUSY.rawValue, "forgetting to detach keeps the loop busy")
        XCTAssertEqual(walk(cLoop).owner, 0, "every handle left is UVLoop's")

        inbox.close()
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(walk(cLoop).uvloop, 0)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnOwnersHandleIsNotUVLoops() {
        var timer = uv_timer_t()
        XCTAssertFalse(Loop.ownsHandle(&timer))
    }
}
