import Synchronization
import UVLoop
import UVOperations
import UVTestSupport
import XCTest

final class StressTests: LoopThreadTestCase {
    /// 10,000 operations started from two threads, cancelled at random from a third thread and
    /// from the loop's thread (first while the pool is held, then while workers run), with a
    /// session-wide cancel in the middle: each completes exactly once, runs its worker at most
    /// once, and reports what happened consistently.
    func testTenThousandOperationsWithRandomCancelsCompleteExactlyOnce() throws {
        let count = 10_000
        let loop = self.loop
        let session = OperationSession()
        let completions = NativeMutex([UInt8](repeating: 0, count: count))
        let runs = NativeMutex([UInt8](repeating: 0, count: count))
        let acceptedCancels = NativeMutex([UInt8](repeating: 0, count: count))
        let requests = NativeMutex([OperationRequest<Int>?](repeating: nil, count: count))

        // The pool is held while the first cancels land, so some of them certainly find
        // requests still queued; then it is released and cancels race with running workers.
        let blockers = try PoolBlockers(loop: loop)
        let warmedUp = Gate()
        let starters = (0..<2).map { starter in
            JoinableThread {
                for index in stride(from: starter, to: count, by: 2) {
                    let operation = WorkerOperation(completion: { _ in completions.withLock { $0[index] += 1 } }) { () -> Int in
                        runs.withLock { $0[index] += 1 }
                        return index
                    }
                    guard let request = try? operation.start(on: loop, session: session) else { continue }
                    requests.withLock { $0[index] = request }
                    if index / 2 == 500 { warmedUp.open() }
                }
            }
        }
        let canceller = JoinableThread {
            var random = SplitMix64(state: 42)
            warmedUp.pass()
            warmedUp.pass()
            for attempt in 0..<5_000 {
                if attempt == 1_000 { try? blockers.release() }
                if attempt == 3_000 { session.cancelAll() }
                let index = Int(random.next() % UInt64(count))
                guard let request = requests.withLock({ $0[index] }) else { continue }
                if attempt % 4 == 0 {
                    try? loop.post {
                        if request.cancel() { acceptedCancels.withLock { $0[index] += 1 } }
                    }
                } else if request.cancel() {
                    acceptedCancels.withLock { $0[index] += 1 }
                }
            }
        }
        for starter in starters { starter.join() }
        canceller.join()
        try blockers.release()

        let all = requests.withLock { $0 }
        var cancelled = 0
        for index in 0..<count {
            let request = try XCTUnwrap(all[index], "request \(index) did not start")
            let outcome = try request.wait()
            if outcome.isCancelled { cancelled += 1 }
            XCTAssertEqual(outcome.isCancelled, request.isCancelled, "request \(index)")
            if let result = outcome.result {
                XCTAssertEqual(try result.get(), index)
                XCTAssertEqual(runs.withLock { $0[index] }, 1, "request \(index) ran once")
            } else {
                XCTAssertTrue(outcome.isCancelled, "only a cancel keeps a worker from running (\(index))")
                XCTAssertEqual(runs.withLock { $0[index] }, 0, "request \(index) never ran")
            }
        }
        // The completion runs before waiters wake, so every completion has run by now.
        XCTAssertEqual(completions.withLock { $0 }, [UInt8](repeating: 1, count: count))
        XCTAssertTrue(acceptedCancels.withLock { $0.allSatisfy { $0 <= 1 } }, "a cancel is accepted at most once")
        for index in 0..<count where acceptedCancels.withLock({ $0[index] }) == 1 {
            XCTAssertTrue(all[index]!.finishedOutcome!.isCancelled)
        }
        XCTAssertEqual(session.requestCount, 0)
        XCTAssertGreaterThan(cancelled, 0)
    }

    /// Composites under random cancels: every child's completion runs exactly once, and a child
    /// without a result never ran.
    func testCompositesWithRandomCancelsCompleteEveryChildExactlyOnce() throws {
        let composites = 300
        let childrenPer = 4
        let total = composites * childrenPer
        let loop = self.loop
        let completions = NativeMutex([UInt8](repeating: 0, count: total))
        let runs = NativeMutex([UInt8](repeating: 0, count: total))
        var requests: [OperationRequest<CompositeResults>] = []
        for composite in 0..<composites {
            let children = (0..<childrenPer).map { child in
                let index = composite * childrenPer + child
                return WorkerOperation(name: "\(child)", completion: { _ in completions.withLock { $0[index] += 1 } }) { () -> Int in
                    runs.withLock { $0[index] += 1 }
                    return index
                }
            }
            let operation: any LoopOperation<CompositeResults> = composite % 2 == 0
                ? try SequenceOperation(name: "s\(composite)", children)
                : try ConcurrentOperation(name: "c\(composite)", children)
            requests.append(try operation.start(on: loop, session: nil))
        }
        var random = SplitMix64(state: 7)
        for _ in 0..<composites / 2 {
            requests[Int(random.next() % UInt64(composites))].cancel()
        }
        for (composite, request) in requests.enumerated() {
            let outcome = try request.wait()
            let results = try XCTUnwrap(outcome.value)
            for child in 0..<childrenPer {
                let index = composite * childrenPer + child
                let childOutcome = try XCTUnwrap(results.outcome(named: "\(child)", as: Int.self))
                if childOutcome.result == nil {
                    XCTAssertTrue(outcome.isCancelled)
                    XCTAssertEqual(runs.withLock { $0[index] }, 0)
                } else {
                    XCTAssertEqual(childOutcome.value, index)
                    XCTAssertEqual(runs.withLock { $0[index] }, 1)
                }
            }
        }
        XCTAssertEqual(completions.withLock { $0 }, [UInt8](repeating: 1, count: total))
    }
}
