import XCTest
import CLibUV
import Synchronization
@testable import UVLoop
import UVTestSupport

/// `Loop.setKeepsOwnerLoopAlive(_:)`: an owner whose loop has nothing of its own alive still gets
/// the work other threads post, when it asks for it.
final class OwnerKeepAliveTests: XCTestCase {
    /// The defect: with nothing of the owner's alive, libuv's `uv_run` returns without a turn, so
    /// work posted from other threads never ran (it ran only at detach).
    func testWithNothingOfTheOwnersAlivePostsWaitUntilTheOwnerKeepsItsLoopAlive() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let ran = Recorder<Int>()
        onThreads(1) { _ in try! loop.post { ran.append(1) } }
        for _ in 0..<1_000 { _ = uv_run(cLoop, UV_RUN_NOWAIT) }
        XCTAssertEqual(ran.values, [], "UVLoop's handles are unreferenced: no turn, no delivery")

        try loop.setKeepsOwnerLoopAlive(true)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(ran.values, [1], "kept alive, the owner's next turn runs it")

        // uv_run(DEFAULT) now runs until the work itself lets the loop go.
        onThreads(1) { _ in
            try! loop.post {
                ran.append(2)
                try! loop.setKeepsOwnerLoopAlive(false)
            }
        }
        XCTAssertEqual(uv_run(cLoop, UV_RUN_DEFAULT), 0)
        XCTAssertEqual(ran.values, [1, 2])
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnOwnerRunningUntilDetachGetsEveryPostFromOtherThreads() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        try loop.setKeepsOwnerLoopAlive(true)
        let count = LoopBound(0, loop: loop)
        let producers = 4
        let perProducer = 10_000
        let threads = (0..<producers).map { _ in
            JoinableThread {
                for _ in 0..<perProducer {
                    try! loop.post {
                        count.value += 1
                        if count.value == producers * perProducer { loop.detach() }
                    }
                }
            }
        }
        XCTAssertEqual(uv_run(cLoop, UV_RUN_DEFAULT), 0, "returns once the detach closed UVLoop's handles")
        for thread in threads { thread.join() }
        XCTAssertEqual(count.value, producers * perProducer)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    /// Turning it on for an owned loop, or from another thread, stops the program (the misuse
    /// cases keep-alive-owned-loop and keep-alive-off-thread); after detach it throws.
    func testAfterDetachItThrows() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        loop.detach()
        XCTAssertThrowsError(try loop.setKeepsOwnerLoopAlive(true)) { XCTAssertEqual($0 as? LoopError, .detached) }
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }
}
