import CLibUV
import Glibc
import Synchronization
import XCTest

@testable import UVLoop
import UVTestSupport

/// Signal watches on owned and attached loops. The tests send signals to this very process
/// (`raise`, `kill(getpid(), ...)`) only while a watch of the signal is open, so the default
/// action (ending the process) never runs; `raise` delivers before it returns, and the loop's
/// next turn sees the delivery.
final class SignalWatchTests: XCTestCase {
    func testRefusesSignalsThatCannotBeWatchedAndSaysWhy() throws {
        let loop = try Loop()
        let cases: [(Int32, String)] = [
            (SIGKILL, "cannot be caught"), (SIGSTOP, "cannot be caught"),
            (SIGSEGV, "fault"), (SIGBUS, "fault"), (SIGFPE, "fault"), (SIGILL, "fault"),
            (32, "reserved by the C library"), (33, "reserved by the C library"),
            (0, "out of range"), (-1, "out of range"), (65, "out of range"),
        ]
        for (number, reason) in cases {
            XCTAssertThrowsError(try loop.watchSignal(Signal(number)) { _ in }) { error in
                guard case .invalidArgument(let message)? = error as? LoopError else {
                    return XCTFail("signal \(number): \(error)")
                }
                XCTAssertTrue(message.contains(reason), "signal \(number): \(message)")
            }
            XCTAssertThrowsError(try loop.signals(Signal(number)), "the async face refuses it too")
        }
        XCTAssertEqual(loop.openIOHandleCount, 0)
        XCTAssertTrue(hasDefaultAction(SIGKILL))
        // Real-time signals and the usual ones are accepted.
        for signal in [Signal.realtime(0), .realtime(30), .user2, .hangup, .windowSizeChanged] {
            XCTAssertTrue(try loop.watchSignal(signal) { _ in }.cancel(), "\(signal)")
        }
        XCTAssertEqual(Signal.terminate.description, "SIGTERM (15)")
        XCTAssertEqual(Signal.realtime(2).description, "SIGRTMIN+2 (36)")
    }

    func testDeliveryRunsTheHandlerOnTheLoopThread() throws {
        let loop = try Loop()
        let deliveries = LoopBound([Signal](), loop: loop)
        let watch = try loop.watchSignal(.user1) { watch in
            loop.preconditionOnLoopThread()
            deliveries.value.append(watch.signal)
        }
        XCTAssertTrue(watch.isActive)
        XCTAssertFalse(watch.isOneShot)
        raise(SIGUSR1)
        try step(loop) { deliveries.value.count == 1 }
        raise(SIGUSR1)
        try step(loop) { deliveries.value.count == 2 }
        XCTAssertEqual(deliveries.value, [.user1, .user1])
        XCTAssertTrue(watch.cancel())
        XCTAssertFalse(watch.cancel(), "idempotent")
        XCTAssertFalse(watch.isActive)
    }

    func testWatchingReplacesTheDefaultActionUntilTheLastWatchEnds() throws {
        let loop = try Loop()
        let other = try Loop()
        XCTAssertTrue(hasDefaultAction(SIGUSR2))
        let first = try loop.watchSignal(.user2) { _ in }
        XCTAssertFalse(hasDefaultAction(SIGUSR2), "watched: SIGUSR2 no longer ends the process")
        let second = try other.watchSignal(.user2) { _ in }
        first.cancel()
        XCTAssertFalse(hasDefaultAction(SIGUSR2), "another loop still watches it")
        second.cancel()
        XCTAssertTrue(hasDefaultAction(SIGUSR2), "the last watch ended: the default action is back")
    }

    func testTheDefaultActionComesBackEvenWhenTheProcessHadIgnoredTheSignal() throws {
        let loop = try Loop()
        signal(SIGUSR2, SIG_IGN)
        defer { signal(SIGUSR2, nil) }
        try loop.watchSignal(.user2) { _ in }.cancel()
        XCTAssertTrue(hasDefaultAction(SIGUSR2), "libuv restores SIG_DFL, not the earlier action")
    }

    func testCancelBeforeTheLoopSeesTheDeliveryMeansNoCall() throws {
        let loop = try Loop()
        let calls = Counter()
        let watch = try loop.watchSignal(.user1) { _ in calls.increment() }
        raise(SIGUSR1)  // caught: waits in the loop's signal pipe
        XCTAssertTrue(watch.cancel())
        try loop.runUntilIdle()
        try loop.runOnce()
        XCTAssertEqual(calls.value, 0, "cancelled before the loop read the delivery: no call")
        XCTAssertTrue(hasDefaultAction(SIGUSR1))
        XCTAssertEqual(loop.openIOHandleCount, 0)
    }

    func testCancelOnTheLoopThreadReleasesTheHandlerAtOnce() throws {
        let loop = try Loop()
        let released = Atomic<Bool>(false)
        var tracked: Tracked? = Tracked { released.store(true, ordering: .relaxed) }
        let watch = try loop.watchSignal(.user1) { [tracked] _ in _ = tracked }
        tracked = nil
        XCTAssertFalse(released.load(ordering: .relaxed))
        watch.cancel()
        XCTAssertTrue(released.load(ordering: .relaxed))
    }

    func testOneShotEndsAtTheFirstDeliveryAndRestoresTheDefaultAction() throws {
        let loop = try Loop()
        let calls = LoopBound([Bool](), loop: loop)
        let watch = try loop.watchSignal(.user1, oneShot: true) { watch in
            calls.value.append(watch.isActive)
        }
        XCTAssertTrue(watch.isOneShot)
        raise(SIGUSR1)
        try step(loop) { !calls.value.isEmpty }
        XCTAssertEqual(calls.value, [false], "called once; inside the handler the watch has ended")
        XCTAssertFalse(watch.isActive)
        XCTAssertFalse(watch.cancel())
        XCTAssertTrue(hasDefaultAction(SIGUSR1), "a second SIGUSR1 would now end the process")
        XCTAssertEqual(loop.openIOHandleCount, 0)
    }

    func testEveryWatchOnEveryLoopGetsEachDelivery() throws {
        let loop = try Loop()
        let other = try Loop()
        let log = Recorder<String>()
        let a = try loop.watchSignal(.user1) { _ in log.append("a") }
        let b = try loop.watchSignal(.user1) { _ in log.append("b") }
        let c = try other.watchSignal(.user1) { _ in log.append("c") }
        raise(SIGUSR1)
        try step(loop) { log.values.count == 2 }
        try step(other) { log.values.count == 3 }
        XCTAssertEqual(Set(log.values), ["a", "b", "c"])
        a.cancel()
        raise(SIGUSR1)
        try step(loop) { log.values.count == 4 }
        try step(other) { log.values.count == 5 }
        XCTAssertEqual(log.values.suffix(2).sorted(), ["b", "c"])
        b.cancel()
        c.cancel()
    }

    func testWatchAndCancelFromAnotherThreadOfARunningLoop() throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let delivered = Gate()
        let onLoopThread = Atomic<Bool>(false)
        let watch = try loop.watchSignal(.user2) { _ in
            onLoopThread.store(loop.isOnLoopThread, ordering: .relaxed)
            delivered.open()
        }
        XCTAssertFalse(hasDefaultAction(SIGUSR2), "started before watchSignal returned")
        kill(getpid(), SIGUSR2)
        delivered.pass()
        XCTAssertTrue(onLoopThread.load(ordering: .relaxed))
        XCTAssertTrue(watch.cancel())
        // The close travels to the loop like a post; an invoke after it runs after it.
        try loop.invoke {}
        XCTAssertTrue(hasDefaultAction(SIGUSR2))
        thread.shutdown()
    }

    func testWorkTheHandlerPostsRuns() throws {
        let loop = try Loop()
        let log = LoopBound([String](), loop: loop)
        try loop.watchSignal(.user1, oneShot: true) { _ in
            log.value.append("handler")
            try! loop.post { log.value.append("posted") }
            try! loop.postNextIteration { log.value.append("next iteration") }
        }
        raise(SIGUSR1)
        try step(loop) { log.value.count == 3 }
        XCTAssertEqual(log.value, ["handler", "posted", "next iteration"])
    }

    // MARK: graceful shutdown on SIGTERM

    func testSIGTERMShutsAnOwnedLoopDownGracefully() throws {
        let loop = try Loop()
        let log = LoopBound([String](), loop: loop)
        let watch = try loop.watchSignal(.terminate) { _ in
            log.value.append("SIGTERM")
            loop.shutdown()
        }
        try loop.post { log.value.append("posted before") }
        guard watch.isActive, !hasDefaultAction(SIGTERM) else { return XCTFail("not watching SIGTERM") }
        raise(SIGTERM)
        try loop.run()  // returns once the handler's shutdown has closed the loop
        XCTAssertEqual(log.value, ["posted before", "SIGTERM"])
        XCTAssertFalse(loop.isAcceptingWork)
        XCTAssertFalse(watch.isActive)
        XCTAssertTrue(hasDefaultAction(SIGTERM), "the default action is back")
        XCTAssertEqual(loop.openIOHandleCount, 0)
        XCTAssertThrowsError(try loop.runOnce()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testSIGTERMDetachesAnAttachedLoopAndTheOwnerClosesIt() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let owners = OwnersHandle(cLoop)  // the daemon's own work keeps its loop turning
        let loop = try Loop.attach(cLoop)
        let handled = Atomic<Bool>(false)
        let watch = try loop.watchSignal(.terminate) { _ in
            handled.store(true, ordering: .relaxed)
            loop.detach()
        }
        guard watch.isActive, !hasDefaultAction(SIGTERM) else { return XCTFail("not watching SIGTERM") }
        raise(SIGTERM)
        turn(cLoop) { handled.load(ordering: .relaxed) }
        XCTAssertFalse(loop.isAcceptingWork)
        XCTAssertFalse(watch.isActive)
        XCTAssertTrue(hasDefaultAction(SIGTERM))
        owners.close()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0, "no handle of UVLoop's left in the owner's loop")
    }

    // MARK: shutdown and detach with watches open

    func testShutdownClosesOpenWatches() throws {
        let loop = try Loop()
        let released = Atomic<Int>(0)
        let tracked = Tracked { released.add(1, ordering: .relaxed) }
        let watches = try [Signal.user1, .user2, .hangup].map { signal in
            try loop.watchSignal(signal) { _ in _ = tracked }
        }
        let pointers = watches.map(\.handlePointer)
        XCTAssertTrue(pointers.allSatisfy { Loop.ownsHandle($0!) })
        loop.shutdown()
        XCTAssertTrue(watches.allSatisfy { !$0.isActive })
        XCTAssertTrue([SIGUSR1, SIGUSR2, SIGHUP].allSatisfy(hasDefaultAction))
        XCTAssertTrue(pointers.allSatisfy { !Loop.ownsHandle($0!) }, "freed by their close callbacks")
        XCTAssertFalse(watches[0].cancel())
        XCTAssertThrowsError(try loop.watchSignal(.user1) { _ in }) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    func testDetachClosesOpenWatchesAndTheOwnersLoopCloses() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let watch = try loop.watchSignal(.user1) { _ in }
        let pending = try loop.watchSignal(.user2) { _ in XCTFail("detached before the loop read it") }
        raise(SIGUSR2)  // caught, not yet read by the loop
        loop.detach()
        XCTAssertFalse(watch.isActive)
        XCTAssertFalse(pending.isActive)
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
        XCTAssertThrowsError(try loop.watchSignal(.user1) { _ in }) { XCTAssertEqual($0 as? LoopError, .detached) }
    }

    func testOnAnAttachedLoopAWatchKeepsTheOwnersLoopAliveOnlyWhenAsked() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let loop = try Loop.attach(cLoop)
        let quiet = try loop.watchSignal(.user1) { _ in }
        XCTAssertEqual(uv_loop_alive(cLoop), 0, "by default a watch does not keep the owner's uv_run going")
        let keeping = try loop.watchSignal(.user2, keepsOwnerLoopAlive: true) { _ in }
        XCTAssertNotEqual(uv_loop_alive(cLoop), 0)
        keeping.cancel()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)  // the closing handle counts until its close callback
        XCTAssertEqual(uv_loop_alive(cLoop), 0)
        quiet.cancel()
        loop.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    func testAnAttachedLoopDeliversWhileItsOwnerRunsIt() throws {
        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let owners = OwnersHandle(cLoop)
        let loop = try Loop.attach(cLoop)
        let count = Counter()
        let watch = try loop.watchSignal(.user1) { _ in count.increment() }
        raise(SIGUSR1)
        turn(cLoop) { count.value == 1 }
        watch.cancel()
        loop.detach()
        owners.close()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
    }

    // MARK: the async face

    func testDeliveriesAsASequenceEndWhenTheLoopBreaks() throws {
        let loop = try Loop()
        let received = LoopBound(0, loop: loop)
        let done = LoopBound(false, loop: loop)
        let sequence = try loop.signals(.user1)
        let watch = sequence.watch
        Task(executorPreference: loop) {
            for await signal in sequence {
                XCTAssertEqual(signal, .user1)
                received.value += 1
                if received.value == 2 { break }
            }
            done.value = true
        }
        try loop.runUntilIdle()
        raise(SIGUSR1)
        try step(loop) { received.value == 1 }
        raise(SIGUSR1)
        try step(loop) { done.value }
        XCTAssertEqual(received.value, 2)
        XCTAssertFalse(watch.isActive, "leaving the loop cancelled the watch")
        XCTAssertTrue(hasDefaultAction(SIGUSR1))
    }

    func testDeliveriesBeforeTheFirstNextAreKeptAndMerged() throws {
        let loop = try Loop()
        let sequence = try loop.signals(.user2)
        raise(SIGUSR2)
        try loop.runUntilIdle()
        raise(SIGUSR2)
        try loop.runUntilIdle()
        let received = LoopBound(0, loop: loop)
        Task(executorPreference: loop) {
            for await _ in sequence { received.value += 1 }
        }
        try loop.runUntilIdle()
        XCTAssertEqual(received.value, 1, "two deliveries while nobody waited: one element")
        sequence.watch.cancel()
        try loop.runUntilIdle()
    }

    func testCancellingTheTaskCancelsTheWatch() throws {
        let loop = try Loop()
        let ended = LoopBound(false, loop: loop)
        let sequence = try loop.signals(.user1)
        let consumer = Task(executorPreference: loop) {
            for await _ in sequence {}
            ended.value = true
        }
        try loop.runUntilIdle()
        XCTAssertTrue(sequence.watch.isActive)
        consumer.cancel()
        XCTAssertFalse(sequence.watch.isActive, "cancelled with the task")
        try loop.runUntilIdle()
        XCTAssertTrue(ended.value)
        XCTAssertTrue(hasDefaultAction(SIGUSR1))
    }

    func testShutdownEndsTheSequence() throws {
        let loop = try Loop()
        let ended = LoopBound(false, loop: loop)
        let sequence = try loop.signals(.user1)
        Task(executorPreference: loop) {
            for await _ in sequence {}
            ended.value = true
        }
        try loop.runUntilIdle()
        XCTAssertFalse(ended.value)
        loop.shutdown()
        XCTAssertTrue(ended.value, "the waiting consumer got nil during the shutdown")
        XCTAssertTrue(hasDefaultAction(SIGUSR1))
    }

    func testDroppingAnUnusedSequenceCancelsTheWatch() throws {
        let loop = try Loop()
        var sequence: SignalDeliveries? = try loop.signals(.user1)
        let watch = sequence!.watch
        XCTAssertTrue(watch.isActive)
        sequence = nil
        XCTAssertFalse(watch.isActive)
        XCTAssertTrue(hasDefaultAction(SIGUSR1))
    }
}

extension SignalWatch {
    /// The libuv handle's address while the watch is open (for `Loop.ownsHandle`).
    var handlePointer: UnsafeRawPointer? {
        core.value.map { UnsafeRawPointer($0.handle.handle.pointer) }
    }
}
