import UVLoop
import UVOperations
import XCTest

/// The examples of UVOperations.docc, run for real.
final class OperationsExamples: XCTestCase {
    func testOperations() async throws {
        let loopThread = try Loop.startThread()
        let loop = loopThread.loop
        // docs:begin operation
        // A worker that returns a value or throws, a transform that may change the outcome, a completion.
        let operation = WorkerOperation(name: "double") { 21 }
            .transform { outcome in outcome.value = outcome.value.map { $0 * 2 } }
            .onCompletion { outcome in
                print("value: \(String(describing: outcome.value)), cancelled: \(outcome.isCancelled)")
            }
        let request = try operation.start(on: loop)
        let outcome = try request.wait()              // from any thread but the loop's: value 42
        // docs:end
        XCTAssertEqual(outcome.value, 42)

        // docs:begin composites
        let load = WorkerOperation(name: "load") { "the quick brown fox" }
        let words = WorkerOperation(name: "words") { 4 }
        let letters = WorkerOperation(name: "letters") { 16 }
        let analyse = try ConcurrentOperation(name: "analyse", [words, letters])   // all at once
        let pipeline = try SequenceOperation(name: "pipeline", [load, analyse])   // one after another

        let results = try pipeline.start(on: loop).wait().value!
        let text = results.outcome(named: "load", as: String.self)?.value          // "the quick brown fox"
        let count = results.results(named: "analyse")?.outcome(named: "words", as: Int.self)?.value   // 4
        // docs:end
        XCTAssertEqual(text, "the quick brown fox")
        XCTAssertEqual(count, 4)

        // docs:begin cancel-and-wait
        let running = try pipeline.start(on: loop)
        running.cancel()                                       // any thread; true if still cancellable
        let waited = try running.wait(timeout: .seconds(2))    // throws LoopError.timedOut; the request goes on
        let awaited = await running.outcome                    // from async code; task cancellation cancels it
        // docs:end
        XCTAssertEqual(waited.isCancelled, awaited.isCancelled)

        // docs:begin sessions
        let session = OperationSession()
        try operation.start(on: loop, session: session)
        session.cancelAll()                      // cancels what is in flight in this session
        OperationSession.shared.cancelAll()      // every request started without a session of its own
        // docs:end

        loopThread.shutdown()
        XCTAssertEqual(session.requestCount, 0)
    }
}
