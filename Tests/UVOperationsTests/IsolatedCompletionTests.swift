import UVLoop
import UVOperations
import XCTest

/// Loop-thread state that is not Sendable: a `@Sendable` completion cannot capture it.
private final class Cache {
    var entries: [String: Int] = [:]
    var completions = 0
}

/// `LoopOperation.start(on: loop.assumeIsolated(), onCompletion:)`: a completion that captures
/// loop-thread state. That the tests compile is half of what they check.
final class IsolatedCompletionTests: XCTestCase {
    func testTheCompletionCapturesLoopThreadStateAndRunsAfterTheOperationsOwn() throws {
        let loop = try Loop()
        let cache = Cache()
        let order = LoopBound([String](), loop: loop)
        let request = try WorkerOperation { 6 * 7 }
            .transform { outcome in order.value.append("transform") }
            .onCompletion { _ in order.value.append("completion") }
            .start(on: loop.assumeIsolated()) { outcome in
                XCTAssertTrue(loop.isOnLoopThread)
                order.value.append("isolated completion")
                cache.entries["answer"] = outcome.value
                cache.completions += 1
            }
        while cache.completions == 0 { try loop.runOnce() }
        XCTAssertEqual(cache.entries, ["answer": 42])
        XCTAssertEqual(order.value, ["transform", "completion", "isolated completion"])
        XCTAssertTrue(request.isFinished)
        loop.shutdown()
        XCTAssertEqual(cache.completions, 1)
    }

    func testACancelledOperationStillCompletesOnce() throws {
        let loop = try Loop()
        let cache = Cache()
        let request = try WorkerOperation { 1 }
            .start(on: loop.assumeIsolated()) { outcome in
                cache.completions += 1
                cache.entries["cancelled"] = outcome.isCancelled ? 1 : 0
            }
        XCTAssertTrue(request.cancel(), "the completion runs on this thread, later: nothing has finished")
        while cache.completions == 0 { try loop.runOnce() }
        XCTAssertEqual(cache.entries["cancelled"], 1)
        loop.shutdown()
        XCTAssertEqual(cache.completions, 1)
    }

    func testALoopThatRefusesWorkThrowsAndNeverCallsTheCompletion() throws {
        let loop = try Loop()
        let isolated = loop.assumeIsolated()
        loop.shutdown()
        let cache = Cache()
        XCTAssertThrowsError(try WorkerOperation { 1 }.start(on: isolated) { _ in cache.completions += 1 }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
        XCTAssertEqual(cache.completions, 0)
    }
}
