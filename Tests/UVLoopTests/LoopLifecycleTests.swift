import XCTest
import Dispatch
import Synchronization
import CLibUV
@testable import UVLoop
import UVLoopTesting

final class LoopLifecycleTests: XCTestCase {
    func testRunKeepsRunningWithoutWorkUntilStopped() throws {
        let thread = try Loop.startThread()
        // The loop has had no work for a while yet still accepts and runs posts.
        for _ in 0..<3 { XCTAssertEqual(try thread.loop.invoke { 1 }, 1) }
        try thread.shutdown()
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

    func testRunningAnAlreadyRunningLoopThrows() throws {
        let loop = try Loop.manual()
        let caught = NativeMutex<LoopError?>(nil)
        try loop.post {
            do throws(LoopError) { try loop.run() } catch { caught.withLock { $0 = $0 ?? error } }
            do throws(LoopError) { try loop.runOnce() } catch { caught.withLock { $0 = $0 ?? error } }
        }
        try loop.runUntilIdle()
        XCTAssertEqual(caught.withLock { $0 }, .alreadyRunning)
        XCTAssertTrue(LoopError.alreadyRunning.description.contains("not re-entrant"))
    }

    func testRunningFromAnotherThreadThrows() throws {
        let loop = try Loop.manual()
        let caught = NativeMutex<LoopError?>(nil)
        onThreads(1) { _ in
            do throws(LoopError) { try loop.run() } catch { caught.withLock { $0 = error } }
        }
        XCTAssertEqual(caught.withLock { $0 }, .notOnLoopThread(operation: "run()"))
        loop.shutdown()
    }

    func testLoopThreadShutdownFromItsOwnThreadThrows() throws {
        let thread = try Loop.startThread()
        let result = try thread.loop.invoke { () -> LoopError? in
            do throws(LoopError) { try thread.shutdown(); return nil } catch { return error }
        }
        XCTAssertEqual(result, .wouldDeadlock(operation: "LoopThread.shutdown()"))
        try thread.shutdown()
    }

    func testIdentity() throws {
        let loop = try Loop.manual()
        XCTAssertTrue(loop.isOnLoopThread)
        let elsewhere = Atomic<Bool>(true)
        onThreads(1) { _ in elsewhere.store(loop.isOnLoopThread, ordering: .relaxed) }
        XCTAssertFalse(elsewhere.load(ordering: .relaxed))
        loop.preconditionOnLoopThread()
    }

    // MARK: adopting a loop that C code owns

    func testAdoptRunsWorkOnTheOwnersTurnsAndDetachLetsTheOwnerClose() throws {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        defer { cLoop.deallocate() }
        XCTAssertEqual(uv_loop_init(cLoop), 0)
        let loop = try Loop.adopt(cLoop)
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
        XCTAssertThrowsError(try loop.run()) { XCTAssertEqual($0 as? LoopError, .adoptedLoop(operation: "run()")) }
        XCTAssertThrowsError(try loop.runOnce())

        try loop.post { log.append("before detach") }
        try loop.detach()
        XCTAssertEqual(log.values.last, "before detach", "detach runs what was posted before it")
        _ = uv_run(cLoop, UV_RUN_NOWAIT)   // close callbacks free UVLoop's handles
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no UV_EBUSY after detach")

        XCTAssertThrowsError(try loop.post {}) { XCTAssertEqual($0 as? LoopError, .detached) }
        XCTAssertThrowsError(try loop.detach()) { XCTAssertEqual($0 as? LoopError, .detached) }
    }

    func testLoopsInboxesAndAdoptedLoopsGiveBackTheirWakeDescriptors() throws {
        // Each wake handle is an eventfd: shutting down, closing an inbox and detaching must close it.
        func openDescriptors() throws -> Int { try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count }
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
        let adopted = try Loop.adopt(cLoop)
        _ = try adopted.makeInbox(of: Int.self, capacity: 16) { _ in }
        try adopted.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)   // close callbacks close the descriptors
        XCTAssertEqual(try openDescriptors(), withOwner, "an adopted loop, once detached")
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testDetachOnAnOwnedLoopIsRejected() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.detach()) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("shutdown()"))
        }
        loop.shutdown()
    }
}

final class BusyPollTests: XCTestCase {
    /// After a drain that ran work, a busy-polling loop keeps its idle handle active (so libuv
    /// polls without blocking); without busy polling an idle loop lets it go and sleeps.
    func testAfterWorkABusyPollingLoopKeepsPollingAndAPlainOneSleeps() throws {
        // Stepped on this thread with the system clock: no other thread posts, so what the idle
        // handle does after the drain depends on the window alone.
        let loop = try Loop()
        try loop.post {}
        try loop.runOnce()
        XCTAssertFalse(loop.idleHandleIsActive, "no busy poll: the idle handle is off after the drain")
        try loop.setBusyPoll(.seconds(30))
        XCTAssertEqual(loop.busyPoll, .seconds(30))
        try loop.post {}
        try loop.runOnce()
        XCTAssertTrue(loop.idleHandleIsActive, "the window opened by the last drain is still open")
        loop.shutdown()
    }

    func testANegativeWindowIsRejectedAndAManualLoopIgnoresTheWindow() throws {
        let loop = try Loop.manual()
        XCTAssertThrowsError(try loop.setBusyPoll(.milliseconds(-1))) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("use .zero"), message)
        }
        try loop.setBusyPoll(.seconds(30))
        try loop.post {}
        try loop.runUntilIdle()
        XCTAssertFalse(loop.idleHandleIsActive, "a manual clock never busy-polls")
        loop.shutdown()
    }
}
