import XCTest
import Foundation
import CLibUV
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// Attaching a `uv_loop_t` that C code owns and runs: work runs on the owner's turns, and detaching
/// gives back every handle and descriptor so that the owner can close its loop.
final class AttachedLoopTests: XCTestCase {
    func testAttachRunsWorkOnTheOwnersTurnsAndDetachLetsTheOwnerClose() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let log = Recorder<String>()
        try loop.post { log.append("post") }
        try loop.postNextIteration { log.append("next") }
        try loop.schedule(after: .zero) { log.append("timer") }
        // The owner runs its loop: UVLoop never calls uv_run on it.
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(Set(log.values), ["post", "next", "timer"])
        // The posting handle is unreferenced: an owner's default run returns when it has nothing.
        XCTAssertEqual(uv_run(cLoop, UV_RUN_DEFAULT), 0)
        // run() and runOnce() on an attached loop stop the program (misuse case run-attached-loop).

        try loop.post { log.append("before detach") }
        loop.detach()
        XCTAssertEqual(log.values.last, "before detach", "detach runs what was posted before it")
        _ = uv_run(cLoop, UV_RUN_NOWAIT)   // close callbacks free UVLoop's handles
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no UV_EBUSY after detach")

        XCTAssertThrowsError(try loop.post {}) { XCTAssertEqual($0 as? LoopError, .detached) }
        XCTAssertFalse(loop.detach(), "detaching again does nothing")
    }

    func testLoopsInboxesAndAttachedLoopsGiveBackTheirWakeDescriptors() throws {
        // Each wake handle is an eventfd: shutting down, closing an inbox and detaching must close it.
        func openDescriptors() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
        // libuv opens process-wide descriptors once, with the first loop (its signal pipe): open
        // them before counting, in case this test runs first.
        try Loop.manual().shutdown()
        let before = try openDescriptors()
        for _ in 0..<20 {
            let loop = try Loop.manual()
            let received = LoopBound(0, loop: loop)
            let kept = try loop.makeInbox(of: Int.self, capacity: 16) { received.value += $0 }
            let closed = try loop.makeInbox(of: Int.self, capacity: 16) { _ in }
            try kept.send(1)
            try loop.runUntilIdle()
            closed.close()
            try loop.runUntilIdle()
            XCTAssertEqual(received.value, 1)
            loop.shutdown()
        }
        XCTAssertEqual(try openDescriptors(), before, "owned loops and their inboxes")

        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let withOwner = try openDescriptors()
        let attached = try Loop.attach(cLoop)
        _ = try attached.makeInbox(of: Int.self, capacity: 16) { _ in }
        attached.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)   // close callbacks close the descriptors
        XCTAssertEqual(try openDescriptors(), withOwner, "an attached loop, once detached")
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    /// A package that gets its `uv_loop_t *` from its own C code (and does not import libuv's
    /// Swift module) attaches it through an untyped pointer.
    func testAttachingThroughAnUntypedPointerReachesTheSameLoop() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(UnsafeMutableRawPointer(cLoop))
        let log = Recorder<String>()
        try loop.post { log.append("post") }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(log.values, ["post"], "the owner's turn ran the work")
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    // detach() on an owned loop stops the program: misuse case detach-owned-loop.
}
