import CLibUV
import UVLoop
import UVTestSupport
import XCTest

/// The examples of Embedding.md, run for real on a uv_loop_t that the test owns, as a C daemon would.
final class EmbeddingExamples: XCTestCase {
    func testAttachAndDetach() throws {
        let daemonLoop = makeCLoop()
        defer { daemonLoop.deallocate() }
        // docs:begin attach
        // On the thread that runs the daemon's uv_loop_t:
        let loop = try Loop.attach(daemonLoop)   // adds UVLoop's handles; never calls uv_run
        let runs = LoopBound(0, loop: loop)
        try loop.post { runs.value += 1 }       // runs during the daemon's own uv_run turns
        uv_run(daemonLoop, UV_RUN_NOWAIT)       // ... the daemon keeps running its loop ...
        loop.detach()                           // runs what was posted, closes UVLoop's handles
        uv_run(daemonLoop, UV_RUN_NOWAIT)       // lets the close callbacks free them
        let status = uv_loop_close(daemonLoop)  // 0: no UV_EBUSY
        // docs:end
        XCTAssertEqual(status, 0)
        XCTAssertEqual(runs.value, 1)
    }

    func testDetachFromACallback() throws {
        let daemonLoop = makeCLoop()
        defer { daemonLoop.deallocate() }
        let loop = try Loop.attach(daemonLoop)
        // docs:begin detach-inside
        try loop.post {
            loop.detach()                  // finishes when this closure returns, this turn
        }
        uv_run(daemonLoop, UV_RUN_DEFAULT)      // returns: nothing of UVLoop's is left
        // docs:end
        XCTAssertEqual(uv_loop_close(daemonLoop), 0)
        XCTAssertThrowsError(try loop.post {}) { error in
            XCTAssertEqual(error as? LoopError, .detached)
        }
    }

    func testKeepingTheOwnersLoopAlive() throws {
        let daemonLoop = makeCLoop()
        defer { daemonLoop.deallocate() }
        let loop = try Loop.attach(daemonLoop)
        // docs:begin keep-alive
        try loop.setKeepsOwnerLoopAlive(true)   // posts from other threads always get a turn
        try loop.post {
            try? loop.setKeepsOwnerLoopAlive(false)
        }
        uv_run(daemonLoop, UV_RUN_DEFAULT)      // returns once the switch is off
        // docs:end
        loop.detach()
        uv_run(daemonLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(daemonLoop), 0)
    }
}
