import UVLoop
import UVOperations
import XCTest

/// The code of docs/readme/operations.md, run for real.
final class ReadmeExamplesTests: XCTestCase {
    func testTheReadmeExamples() async throws {
        let loopThread = try Loop.startThread()
        let loop = loopThread.loop

        let printed = Log()
        let operation = WorkerOperation(name: "Any name") { 1 }
            .transform { outcome in outcome.value = outcome.value.map { $0 * 2 } }
            .onCompletion { outcome in
                printed.append("value: \(String(describing: outcome.value)), error: \(String(describing: outcome.error)), cancelled: \(outcome.isCancelled)")
            }
        let request = try operation.start(on: loop)
        let outcome = try request.wait()
        XCTAssertEqual(outcome.value, 2)
        XCTAssertEqual(printed.all, ["value: Optional(2), error: nil, cancelled: false"])

        let load = WorkerOperation(name: "load") { "the quick brown fox" }
        let words = WorkerOperation(name: "words") { 4 }
        let letters = WorkerOperation(name: "letters") { 16 }
        let analyse = try ConcurrentOperation(name: "analyse", [words, letters])
        let pipeline = try SequenceOperation(name: "pipeline", [load, analyse])

        let results = try pipeline.start(on: loop).wait().value!
        XCTAssertEqual(results.outcome(named: "load", as: String.self)?.value, "the quick brown fox")
        XCTAssertEqual(results.results(named: "analyse")?.outcome(named: "words", as: Int.self)?.value, 4)

        let cancellable = try pipeline.start(on: loop)
        cancellable.cancel()
        let waited = try cancellable.wait(timeout: .seconds(2))
        let awaited = await cancellable.outcome
        XCTAssertEqual(waited.isCancelled, awaited.isCancelled)

        let session = OperationSession()
        try operation.start(on: loop, session: session)
        session.cancelAll()
        OperationSession.shared.cancelAll()

        try loopThread.shutdown()
        XCTAssertEqual(session.requestCount, 0)
    }
}
