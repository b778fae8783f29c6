import Synchronization
import UVLoop
import UVLoopTesting
import UVOperations
import UVTestSupport
import XCTest

final class OperationRequestTests: LoopThreadTestCase {
    func testWaitWithATimeoutThatExpiresThrowsAndTheRequestGoesOn() throws {
        let proceed = Gate()
        let completions = Counter()
        let request = try WorkerOperation(completion: { _ in completions.increment() }) { () -> Int in
            proceed.pass()
            return 4
        }.start(on: loop)
        XCTAssertThrowsError(try request.wait(timeout: .milliseconds(1))) { error in
            XCTAssertEqual(error as? LoopError, .timedOut)
        }
        XCTAssertThrowsError(try request.wait(timeout: .zero)) { error in
            XCTAssertEqual(error as? LoopError, .timedOut)
        }
        XCTAssertFalse(request.isFinished)
        XCTAssertNil(request.finishedOutcome)
        proceed.open()
        XCTAssertEqual(try request.wait().value, 4, "the timeout did not end the request")
        XCTAssertEqual(completions.value, 1)
        XCTAssertFalse(request.finishedOutcome?.isCancelled ?? true)
    }

    func testWaitWithATimeoutThatDoesNotExpireReturnsTheOutcome() throws {
        let started = Gate()
        let proceed = Gate()
        let request = try WorkerOperation { () -> Int in
            started.open()
            proceed.pass()
            return 6
        }.start(on: loop)
        started.pass()
        // Another thread waits with a timeout while the worker is held; the test then lets it go.
        let waited = NativeMutex<Int?>(nil)
        let waiter = JoinableThread {
            let value = try? request.wait(timeout: .seconds(3600)).value
            waited.withLock { $0 = value }
        }
        proceed.open()
        waiter.join()
        XCTAssertEqual(waited.withLock { $0 }, 6)
        XCTAssertEqual(try request.wait(timeout: .zero).value, 6, "a completed request returns at once")
    }

    /// A request that no one holds once it has completed drops its outcome; one that its own
    /// completion takes hold of again (through a weak reference, after the caller let it go) is
    /// held when that is decided, so it keeps its outcome like any other.
    func testARequestItsCompletionTakesHoldOfKeepsItsOutcome() throws {
        struct References: Sendable {
            weak var weak: OperationRequest<Int>?
            var kept: OperationRequest<Int>?
        }
        let references = NativeMutex(References())
        let proceed = Gate()
        let completed = Gate()
        var request: OperationRequest<Int>? = try WorkerOperation(completion: { _ in
            references.withLock { $0.kept = $0.weak }
            completed.open()
        }) { () -> Int in
            proceed.pass()
            return 7
        }.start(on: loop, session: nil)
        references.withLock { $0.weak = request }
        request = nil
        proceed.open()
        completed.pass()
        let kept = try XCTUnwrap(references.withLock { $0.kept })
        XCTAssertEqual(try kept.wait().value, 7)
        XCTAssertEqual(kept.finishedOutcome?.value, 7)
        XCTAssertTrue(kept.isFinished)
    }

    func testNegativeTimeoutIsAnInvalidArgument() throws {
        let request = try WorkerOperation { 1 }.start(on: loop)
        XCTAssertThrowsError(try request.wait(timeout: .milliseconds(-1))) { error in
            guard case .invalidArgument = error as? LoopError else { return XCTFail("\(error)") }
        }
        _ = try request.wait()
    }

    /// Waiting on the loop's thread would block the thread the completion needs: a thrown error.
    func testWaitOnTheLoopThreadThrowsWouldDeadlock() throws {
        let request = try WorkerOperation { 1 }.start(on: loop)
        let errors = try loop.invoke { () -> [LoopError] in
            var errors: [LoopError] = []
            do { _ = try request.wait() } catch let error as LoopError { errors.append(error) } catch {}
            do { _ = try request.wait(timeout: .seconds(1)) } catch let error as LoopError { errors.append(error) } catch {}
            return errors
        }
        XCTAssertEqual(errors, [
            .wouldDeadlock(operation: "OperationRequest.wait()"),
            .wouldDeadlock(operation: "OperationRequest.wait(timeout:)"),
        ])
        XCTAssertTrue(errors[0].description.contains("deadlock"))
        XCTAssertEqual(try request.wait().value, 1)
    }

    func testAwaitTheOutcome() async throws {
        let request = try WorkerOperation { "done" }.start(on: loop)
        let outcome = await request.outcome
        XCTAssertEqual(outcome.value, "done")
        let again = await request.outcome
        XCTAssertEqual(again.value, "done", "awaiting a completed request returns at once")
        let run = try await WorkerOperation { 21 * 2 }.run(on: loop)
        XCTAssertEqual(run.value, 42)
    }

    /// Several tasks awaiting one request (whether they begin before or after it completes) all
    /// get its outcome.
    func testSeveralAwaitingTasksAllGetTheOutcome() async throws {
        let proceed = Gate()
        let request = try WorkerOperation { () -> Int in
            proceed.pass()
            return 5
        }.start(on: loop)
        let values = await withTaskGroup(of: Int?.self) { group in
            for _ in 0..<3 { group.addTask { await request.outcome.value } }
            proceed.open()
            var values: [Int?] = []
            for await value in group { values.append(value) }
            return values
        }
        XCTAssertEqual(values, [5, 5, 5])
        XCTAssertEqual(request.finishedOutcome?.value, 5)
    }

    func testCancellingTheAwaitingTaskCancelsTheRequest() async throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let ran = Counter()
        let request = try WorkerOperation { () -> Int in ran.increment(); return 8 }.start(on: loop)
        let task = Task {
            // Cancelled before awaiting: the cancellation handler runs as the await begins.
            withUnsafeCurrentTask { $0?.cancel() }
            return await request.outcome
        }
        let outcome = await task.value
        XCTAssertTrue(request.isCancelled)
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertNil(outcome.result, "withdrawn from the pool's queue: it never ran")
        try blockers.release()
        XCTAssertEqual(ran.value, 0)
    }

    func testManyWaitersAllWake() throws {
        let proceed = Gate()
        let request = try WorkerOperation { () -> Int in
            proceed.pass()
            return 2
        }.start(on: loop)
        let results = NativeMutex<[Int]>([])
        let waiters = (0..<4).map { _ in
            JoinableThread {
                if let value = try? request.wait().value { results.withLock { $0.append(value) } }
            }
        }
        proceed.open()
        for waiter in waiters { waiter.join() }
        XCTAssertEqual(results.withLock { $0 }, [2, 2, 2, 2])
    }
}

/// The loop-thread wait error on a stepped loop whose thread is the test's own.
final class OperationRequestManualLoopTests: XCTestCase {
    func testWaitOnTheLoopThreadOfAManualLoopThrowsAndTheLoopStillCompletesIt() throws {
        let loop = try Loop.manual()
        let request = try WorkerOperation(completion: { _ in loop.stop() }) { 3 }.start(on: loop)
        XCTAssertThrowsError(try request.wait()) { error in
            XCTAssertEqual(error as? LoopError, .wouldDeadlock(operation: "OperationRequest.wait()"))
        }
        try loop.run()
        XCTAssertEqual(request.finishedOutcome?.value, 3)
        loop.shutdown()
    }
}
