import Synchronization
import UVLoop
import UVOperations
import UVTestSupport
import XCTest

final class OperationSessionTests: LoopThreadTestCase {
    /// cancelAll with requests done, running and queued: the done one is untouched, the running
    /// ones finish with the cancelled flag, the queued ones never run; the session ends empty.
    func testCancelAllWithQueuedRunningAndDoneRequests() throws {
        let session = OperationSession()
        let done = try WorkerOperation { "done" }.start(on: loop, session: session)
        _ = try done.wait()
        XCTAssertEqual(session.requestCount, 0, "a finished request leaves its session")

        let started = Gate()
        let proceed = Gate()
        let running = try (0..<threadPoolSize).map { index in
            try WorkerOperation { () -> String in
                started.open()
                proceed.pass()
                return "running \(index)"
            }.start(on: loop, session: session)
        }
        for _ in 0..<threadPoolSize { started.pass() }
        let ran = Counter()
        let queued = try (0..<3).map { index in
            try WorkerOperation { () -> String in
                ran.increment()
                return "queued \(index)"
            }.start(on: loop, session: session)
        }
        let queuedSequence = try SequenceOperation([WorkerOperation(name: "child") { () -> Int in ran.increment(); return 0 }])
            .start(on: loop, session: session)
        XCTAssertEqual(session.requestCount, threadPoolSize + 4)

        XCTAssertEqual(session.cancelAll(), threadPoolSize + 4)
        XCTAssertEqual(session.cancelAll(), 0, "nothing left to cancel")
        for request in queued {
            let outcome = try request.wait()
            XCTAssertNil(outcome.result)
            XCTAssertTrue(outcome.isCancelled)
        }
        let sequenceOutcome = try queuedSequence.wait()
        XCTAssertTrue(sequenceOutcome.isCancelled)
        XCTAssertNil(sequenceOutcome.value?["child"]?.result)

        proceed.open(threadPoolSize)
        for (index, request) in running.enumerated() {
            let outcome = try request.wait()
            XCTAssertEqual(outcome.value, "running \(index)")
            XCTAssertTrue(outcome.isCancelled)
        }
        XCTAssertEqual(ran.value, 0)
        XCTAssertFalse(try done.wait().isCancelled)
        XCTAssertEqual(session.requestCount, 0)
    }

    func testTheSharedSessionIsTheDefaultAndNilMeansNone() throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let before = OperationSession.shared.requestCount
        let shared = try WorkerOperation { 1 }.start(on: loop)
        let unlisted = try WorkerOperation { 2 }.start(on: loop, session: nil)
        XCTAssertEqual(OperationSession.shared.requestCount, before + 1)
        XCTAssertGreaterThanOrEqual(OperationSession.shared.cancelAll(), 1)
        XCTAssertTrue(try shared.wait().isCancelled)
        XCTAssertFalse(unlisted.isCancelled, "a request in no session is out of cancelAll's reach")
        try blockers.release()
        XCTAssertEqual(try unlisted.wait().value, 2)
        XCTAssertEqual(OperationSession.shared.requestCount, before)
    }

    func testSessionsAreIndependent() throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let first = OperationSession()
        let second = OperationSession()
        let a = try WorkerOperation { 1 }.start(on: loop, session: first)
        let b = try WorkerOperation { 2 }.start(on: loop, session: second)
        XCTAssertEqual(first.cancelAll(), 1)
        XCTAssertTrue(try a.wait().isCancelled)
        try blockers.release()
        XCTAssertEqual(try b.wait().value, 2)
        XCTAssertFalse(b.isCancelled)
        XCTAssertEqual(first.requestCount + second.requestCount, 0)
    }
}
