import Synchronization
import UVLoop
import UVOperations
import UVTestSupport
import XCTest

private struct WorkerFailure: Error {}

final class WorkerOperationTests: LoopThreadTestCase {
    /// A worker, a transform, a completion and a name, each running where the docs say.
    func testWorkerTransformAndCompletionRunWhereDocumented() throws {
        let loop = self.loop
        let log = Recorder<String>()
        let operation = WorkerOperation(name: "Any name") { () -> Int in
            log.append("worker on loop thread: \(loop.isOnLoopThread)")
            return 1
        }
        .transform { outcome in
            log.append("transform on loop thread: \(loop.isOnLoopThread)")
            outcome.value = outcome.value.map { $0 * 2 }
        }
        .onCompletion { outcome in
            log.append("completion on loop thread: \(loop.isOnLoopThread), \(outcome)")
        }
        let request = try operation.start(on: loop)
        XCTAssertEqual(request.name, "Any name")
        let outcome = try request.wait()
        XCTAssertEqual(outcome.value, 2)
        XCTAssertNil(outcome.error)
        XCTAssertFalse(outcome.isCancelled)
        XCTAssertTrue(request.isFinished)
        XCTAssertEqual(log.values, [
            "worker on loop thread: false",
            "transform on loop thread: true",
            "completion on loop thread: true, value 2",
        ])
    }

    /// An object that keeps its request and is captured by the request's closures makes no
    /// lasting cycle: the request lets go of its closures once the completion has run, before
    /// waiters wake.
    func testAFinishedRequestReleasesWhatItsClosuresCaptured() throws {
        final class Owner: Sendable {
            let request = Mutex<OperationRequest<Int>?>(nil)
        }
        weak var weakOwner: Owner?
        // The worker is held until the test has looked: an instant worker could finish, and its
        // request let go of the owner, before the first assertion.
        let proceed = Gate()
        let request = try { () throws -> OperationRequest<Int> in
            let owner = Owner()
            weakOwner = owner
            let request = try WorkerOperation { () -> Int in
                proceed.pass()
                return 21
            }
                .transform { [owner] outcome in
                    withExtendedLifetime(owner) { outcome.value = outcome.value.map { $0 * 2 } }
                }
                .onCompletion { [owner] _ in withExtendedLifetime(owner) {} }
                .start(on: loop)
            owner.request.withLock { $0 = request } // owner -> request -> closures -> owner
            return request
        }()
        XCTAssertNotNil(weakOwner, "the running request keeps its closures")
        proceed.open()
        XCTAssertEqual(try request.wait().value, 42)
        XCTAssertNil(weakOwner, "the finished request released its closures, and with them the owner")
    }

    /// The worker is let go of once it has run, on the pool thread: what only the worker captured
    /// is released before the completion runs.
    func testWhatOnlyTheWorkerCapturedIsReleasedBeforeTheCompletionRuns() throws {
        final class Captured: Sendable {}
        struct WeakReference { weak var captured: Captured? }
        let weakCaptured = Mutex(WeakReference())
        let releasedBeforeCompletion = Mutex<Bool?>(nil)
        let request = try { () throws -> OperationRequest<Int> in
            let captured = Captured()
            weakCaptured.withLock { $0.captured = captured }
            return try WorkerOperation { () -> Int in withExtendedLifetime(captured) { 1 } }
                .onCompletion { _ in
                    let released = weakCaptured.withLock { $0.captured == nil }
                    releasedBeforeCompletion.withLock { $0 = released }
                }
                .start(on: loop)
        }()
        XCTAssertEqual(try request.wait().value, 1)
        XCTAssertEqual(releasedBeforeCompletion.withLock { $0 }, true)
    }

    func testWorkerThatThrowsGivesAnOutcomeWithTheError() throws {
        let completions = Counter()
        let request = try WorkerOperation<Int>(completion: { _ in completions.increment() }) {
            throw WorkerFailure()
        }.start(on: loop)
        let outcome = try request.wait()
        XCTAssertTrue(outcome.error is WorkerFailure)
        XCTAssertNil(outcome.value)
        XCTAssertFalse(outcome.isCancelled)
        XCTAssertEqual(completions.value, 1)
    }

    /// From the loop's thread, as from any other, the worker reaches the pool when the loop next
    /// drains its posted work, after the callback that started it.
    func testStartFromTheLoopThreadQueuesWhenTheLoopNextDrains() throws {
        let loop = self.loop
        let operation = WorkerOperation { 7 }
        let (request, queuedDuringTheCallback) = try loop.invoke {
            let request = try operation.start(on: loop)
            return (request, loop.threadPoolJobsInFlight)
        }
        XCTAssertEqual(queuedDuringTheCallback, 0)
        XCTAssertEqual(try request.wait().value, 7)
    }

    /// Not started: the worker never runs, its pool slot is freed (the outcome arrives while every
    /// pool thread is still blocked), the outcome is empty and cancelled, the completion still runs.
    func testCancelBeforeStartNeverRunsTheWorker() throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let ran = Counter()
        let completions = Counter()
        let request = try WorkerOperation(completion: { _ in completions.increment() }) { () -> Int in
            ran.increment()
            return 1
        }.start(on: loop)
        XCTAssertTrue(request.cancel())
        XCTAssertFalse(request.cancel(), "a second cancel is refused")
        let outcome = try request.wait()
        XCTAssertNil(outcome.result)
        XCTAssertNil(outcome.value)
        XCTAssertNil(outcome.error)
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertTrue(request.isCancelled)
        XCTAssertEqual(completions.value, 1)
        try blockers.release()
        XCTAssertEqual(ran.value, 0, "the worker never ran")
    }

    /// Cancelled on the loop's thread while in the pool's queue: `uv_cancel` runs inside `cancel()`.
    func testCancelBeforeStartFromTheLoopThread() throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let ran = Counter()
        let loop = self.loop
        let request = try WorkerOperation { () -> Int in ran.increment(); return 1 }.start(on: loop)
        // This invoke was posted after the start, so the loop has queued the worker by now.
        let (accepted, inFlight) = try loop.invoke { () -> (Bool, Int) in
            let inFlight = loop.threadPoolJobsInFlight
            return (request.cancel(), inFlight)
        }
        XCTAssertTrue(accepted)
        XCTAssertEqual(inFlight, threadPoolSize + 1, "the worker was in the pool's queue")
        let outcome = try request.wait()
        XCTAssertNil(outcome.result)
        XCTAssertTrue(outcome.isCancelled)
        try blockers.release()
        XCTAssertEqual(ran.value, 0)
    }

    /// Cancelled in the loop callback that started it: the worker never reaches the pool.
    func testCancelInTheCallbackThatStartedItNeverQueuesTheWorker() throws {
        let ran = Counter()
        let completions = Counter()
        let loop = self.loop
        let operation = WorkerOperation(completion: { _ in completions.increment() }) { () -> Int in
            ran.increment()
            return 1
        }
        let request = try loop.invoke { () throws -> OperationRequest<Int> in
            let request = try operation.start(on: loop)
            XCTAssertTrue(request.cancel())
            return request
        }
        let outcome = try request.wait()
        XCTAssertNil(outcome.result)
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertEqual(completions.value, 1)
        XCTAssertEqual(ran.value, 0)
        XCTAssertEqual(try loop.invoke { loop.threadPoolJobsInFlight }, 0)
    }

    /// Running: the worker finishes and the completion gets its value with the cancelled flag.
    func testCancelWhileRunningReportsTheValueWithTheCancelledFlag() throws {
        let started = Gate()
        let proceed = Gate()
        let completed = NativeMutex<Outcome<Int>?>(nil)
        let request = try WorkerOperation(completion: { outcome in completed.withLock { $0 = outcome } }) { () -> Int in
            started.open()
            proceed.pass()
            return 5
        }.start(on: loop)
        started.pass()
        XCTAssertTrue(request.cancel())
        proceed.open()
        let outcome = try request.wait()
        XCTAssertEqual(outcome.value, 5)
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertEqual(completed.withLock { $0?.value }, 5)
        XCTAssertEqual(completed.withLock { $0?.isCancelled }, true)
    }

    /// A value too large for the thread-pool job's result space crosses to the loop's thread
    /// another way; value, error and cancelled flag arrive all the same.
    func testALargeValueArrivesLikeASmallOne() throws {
        typealias Large = (Int, Int, Int, Int, Int, String)
        let large: Large = (1, 2, 3, 4, 5, "six")
        let completed = NativeMutex<Large?>(nil)
        let request = try WorkerOperation(completion: { outcome in completed.withLock { $0 = outcome.value } }) { large }
            .start(on: loop)
        let outcome = try request.wait()
        XCTAssertEqual(outcome.value.map { [$0.0, $0.1, $0.2, $0.3, $0.4] }, [1, 2, 3, 4, 5])
        XCTAssertEqual(outcome.value?.5, "six")
        XCTAssertEqual(completed.withLock { $0?.5 }, "six")
        XCTAssertFalse(outcome.isCancelled)

        let failing = try WorkerOperation<Large> { throw WorkerFailure() }.start(on: loop)
        XCTAssertTrue(try failing.wait().error is WorkerFailure)

        let started = Gate()
        let proceed = Gate()
        let cancelled = try WorkerOperation { () -> Large in
            started.open()
            proceed.pass()
            return large
        }.start(on: loop)
        started.pass()
        XCTAssertTrue(cancelled.cancel())
        proceed.open()
        let cancelledOutcome = try cancelled.wait()
        XCTAssertEqual(cancelledOutcome.value?.5, "six")
        XCTAssertTrue(cancelledOutcome.isCancelled)
    }

    func testCancelWhileRunningKeepsTheWorkersError() throws {
        let started = Gate()
        let proceed = Gate()
        let request = try WorkerOperation<Int> {
            started.open()
            proceed.pass()
            throw WorkerFailure()
        }.start(on: loop)
        started.pass()
        XCTAssertTrue(request.cancel())
        proceed.open()
        let outcome = try request.wait()
        XCTAssertTrue(outcome.error is WorkerFailure)
        XCTAssertTrue(outcome.isCancelled)
    }

    func testCancelAfterCompletionIsRefusedAndChangesNothing() throws {
        let request = try WorkerOperation { 3 }.start(on: loop)
        _ = try request.wait()
        XCTAssertFalse(request.cancel())
        XCTAssertFalse(request.isCancelled)
        XCTAssertEqual(request.finishedOutcome?.value, 3)
        XCTAssertFalse(request.finishedOutcome?.isCancelled ?? true)
    }

    func testTransformMaySetAnErrorAndCancelledOutcomesStillPassThroughIt() throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let failing = WorkerOperation { 1 }.transform { $0.error = WorkerFailure() }
        let cancelled = WorkerOperation { 1 }.transform { outcome in
            if outcome.result == nil { outcome.value = -1 }
        }
        let failingRequest = try failing.start(on: loop)
        let cancelledRequest = try cancelled.start(on: loop)
        cancelledRequest.cancel()
        let cancelledOutcome = try cancelledRequest.wait()
        XCTAssertEqual(cancelledOutcome.value, -1, "the transform saw the empty cancelled outcome")
        XCTAssertTrue(cancelledOutcome.isCancelled)
        try blockers.release()
        let failedOutcome = try failingRequest.wait()
        XCTAssertNil(failedOutcome.value)
        XCTAssertTrue(failedOutcome.error is WorkerFailure)
    }

    func testStartOnAShutDownLoopThrowsAndRunsNothing() throws {
        let other = try Loop.startThread(name: "ops-closed")
        other.shutdown()
        let completions = Counter()
        let session = OperationSession()
        let operation = WorkerOperation(completion: { _ in completions.increment() }) { 1 }
        XCTAssertThrowsError(try operation.start(on: other.loop, session: session)) { error in
            XCTAssertEqual(error as? LoopError, .shutDown)
        }
        XCTAssertEqual(completions.value, 0)
        XCTAssertEqual(session.requestCount, 0, "a refused request does not stay in the session")
    }

    /// Work queued before shutdown began still completes: shutdown waits for the pool.
    func testShutdownWaitsForQueuedWork() throws {
        let other = try Loop.startThread(name: "ops-draining")
        let started = Gate()
        let proceed = Gate()
        let request = try WorkerOperation { () -> Int in
            started.open()
            proceed.pass()
            return 9
        }.start(on: other.loop)
        started.pass()
        other.loop.shutdown()
        proceed.open()
        other.shutdown()
        XCTAssertEqual(request.finishedOutcome?.value, 9)
    }
}
