import Synchronization
import UVLoop
import UVOperations
import UVTestSupport
import XCTest

final class SequenceOperationTests: LoopThreadTestCase {
    func testChildrenRunInOrderAndNamedOutcomesAreKept() throws {
        let log = Recorder<String>()
        func step(_ name: String?, _ value: Int) -> WorkerOperation<Int> {
            WorkerOperation(name: name, completion: { _ in log.append("completion \(value)") }) { () -> Int in
                log.append("worker \(value)")
                return value
            }
        }
        let sequence = try SequenceOperation(name: "sequence", [step("first", 1), step("second", 2), step(nil, 3)])
            .onCompletion { outcome in log.append("sequence done, cancelled: \(outcome.isCancelled)") }
        let outcome = try sequence.start(on: loop).wait()
        XCTAssertEqual(log.values, [
            "worker 1", "completion 1", "worker 2", "completion 2", "worker 3", "completion 3",
            "sequence done, cancelled: false",
        ])
        let results = try XCTUnwrap(outcome.value)
        XCTAssertEqual(results.names, ["first", "second"], "an unnamed child keeps no entry")
        XCTAssertEqual(results.outcome(named: "first", as: Int.self)?.value, 1)
        XCTAssertEqual(results["second"]?.value as? Int, 2)
        XCTAssertNil(results.outcome(named: "first", as: String.self), "a value of another type")
        XCTAssertNil(results["third"])
    }

    func testAFailingChildDoesNotStopTheSequence() throws {
        struct Broken: Error {}
        let sequence = try SequenceOperation([
            WorkerOperation<Int>(name: "broken") { throw Broken() },
            WorkerOperation(name: "after") { "ran" },
        ])
        let results = try XCTUnwrap(sequence.start(on: loop).wait().value)
        XCTAssertTrue(results["broken"]?.error is Broken)
        XCTAssertEqual(results.outcome(named: "after", as: String.self)?.value, "ran")
    }

    /// Cancelling a sequence: the running child finishes with the cancelled flag; the children
    /// after it, composites included, complete without running, each completion exactly once.
    func testCancelFinishesTheRunningChildAndSkipsTheRest() throws {
        let started = Gate()
        let proceed = Gate()
        let ran = Recorder<String>()
        let completions = Recorder<String>()
        func worker(_ name: String, block: Bool = false) -> WorkerOperation<String> {
            WorkerOperation(name: name, completion: { outcome in completions.append("\(name): \(outcome)") }) {
                ran.append(name)
                if block {
                    started.open()
                    proceed.pass()
                }
                return name
            }
        }
        let nested = try ConcurrentOperation(name: "nested", [worker("inner")])
            .onCompletion { outcome in completions.append("nested: \(outcome.result == nil ? "no result" : "results")") }
        let sequence = try SequenceOperation(name: "sequence", [worker("running", block: true), worker("later"), nested])
        let request = try sequence.start(on: loop)
        started.pass()
        XCTAssertTrue(request.cancel())
        proceed.open()
        let outcome = try request.wait()
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertEqual(ran.values, ["running"])
        XCTAssertEqual(completions.values, [
            "running: value running (cancelled)",
            "later: no result (cancelled)",
            "inner: no result (cancelled)",
            "nested: no result",
        ])
        let results = try XCTUnwrap(outcome.value)
        XCTAssertEqual(results.outcome(named: "running", as: String.self)?.value, "running")
        XCTAssertEqual(results["running"]?.isCancelled, true)
        XCTAssertNil(results["later"]?.result)
        XCTAssertEqual(results["later"]?.isCancelled, true)
        XCTAssertNil(results["nested"]?.result)
        XCTAssertNil(results.results(named: "nested"), "a composite that never started has no results")
    }

    func testDuplicateChildNamesAreRejected() {
        XCTAssertThrowsError(try SequenceOperation(name: "s", [WorkerOperation(name: "x") { 1 }, WorkerOperation(name: "x") { 2 }])) { error in
            guard case .invalidArgument(let message) = error as? LoopError else { return XCTFail("\(error)") }
            XCTAssertTrue(message.contains("'x'") && message.contains("'s'"), message)
        }
    }

    func testAnEmptySequenceCompletes() throws {
        let outcome = try SequenceOperation(name: "empty", []).start(on: loop).wait()
        XCTAssertEqual(outcome.value?.names, [])
        XCTAssertFalse(outcome.isCancelled)
    }

    /// Children that the loop refuses because it is shutting down complete with that error.
    func testChildrenRefusedByAShuttingDownLoopGetTheError() throws {
        let other = try Loop.startThread(name: "ops-closing")
        let started = Gate()
        let proceed = Gate()
        let ran = Counter()
        let completions = Counter()
        let sequence = try SequenceOperation([
            WorkerOperation(name: "first") { () -> Int in
                started.open()
                proceed.pass()
                return 1
            },
            WorkerOperation(name: "second", completion: { _ in completions.increment() }) { () -> Int in
                ran.increment()
                return 2
            },
        ])
        let request = try sequence.start(on: other.loop)
        started.pass()
        other.loop.shutdown()
        proceed.open()
        other.shutdown()
        let results = try XCTUnwrap(request.finishedOutcome?.value)
        XCTAssertEqual(results.outcome(named: "first", as: Int.self)?.value, 1)
        XCTAssertEqual(results["second"]?.error as? LoopError, .shutDown)
        XCTAssertEqual(ran.value, 0)
        XCTAssertEqual(completions.value, 1)
    }
}
