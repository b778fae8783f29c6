import XCTest
import Synchronization
import CLibUV
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

final class LoopLifecycleTests: XCTestCase {
    func testRunKeepsRunningWithoutWorkUntilStopped() throws {
        let thread = try Loop.startThread()
        // The loop has had no work for a while yet still accepts and runs posts.
        for _ in 0..<3 { XCTAssertEqual(try thread.loop.invoke { 1 }, 1) }
        thread.shutdown()
    }

    func testStopMakesRunReturnAndTheLoopCanRunAgain() throws {
        let loop = try Loop()
        let ran = Atomic<Int>(0)
        try loop.post { ran.add(1, ordering: .relaxed); loop.stop() }
        try loop.run()
        XCTAssertEqual(ran.load(ordering: .relaxed), 1)
        XCTAssertTrue(loop.isAcceptingWork)
        try loop.post { ran.add(1, ordering: .relaxed); loop.shutdown() }
        try loop.run()
        XCTAssertEqual(ran.load(ordering: .relaxed), 2)
        XCTAssertFalse(loop.isAcceptingWork)
    }

    func testShutdownFromAnotherThreadDrainsThenRunReturns() throws {
        let loop = try Loop()
        let ran = Atomic<Int>(0)
        let refused = Atomic<Bool>(false)
        onThreads(1) { _ in
            for _ in 0..<1000 { try! loop.post { ran.add(1, ordering: .relaxed) } }
            loop.shutdown()
            do throws(LoopError) { try loop.post {} } catch { refused.store(error == .shutDown, ordering: .relaxed) }
        }
        XCTAssertTrue(refused.load(ordering: .relaxed))
        try loop.run()
        XCTAssertEqual(ran.load(ordering: .relaxed), 1000)
        XCTAssertThrowsError(try loop.run()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testShutdownCancelsPendingTimersAndReleasesTheirClosures() throws {
        let loop = try Loop.manual()
        let released = Atomic<Bool>(false)
        let tracked = Tracked { released.store(true, ordering: .relaxed) }
        let timer = try loop.schedule(after: .seconds(5)) { _ = tracked }
        _ = consume tracked
        loop.shutdown()
        XCTAssertTrue(released.load(ordering: .relaxed))
        XCTAssertFalse(timer.isPending)
        XCTAssertFalse(timer.cancel(), "shutdown already cancelled it")
        XCTAssertFalse(timer.fire())
    }

    // Running a loop re-entrantly, from another thread, or shutting a LoopThread down from its
    // own thread stops the program: see the misuse cases run-reentrant, run-off-thread and
    // loop-thread-shutdown-on-its-thread (scripts/check-misuse-messages).

    func testIdentity() throws {
        let loop = try Loop.manual()
        XCTAssertTrue(loop.isOnLoopThread)
        let elsewhere = Atomic<Bool>(true)
        onThreads(1) { _ in elsewhere.store(loop.isOnLoopThread, ordering: .relaxed) }
        XCTAssertFalse(elsewhere.load(ordering: .relaxed))
        loop.preconditionOnLoopThread()
    }
}
