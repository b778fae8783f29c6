import Synchronization
import UVLoop
import UVOperations
import UVTestSupport
import XCTest

final class ConcurrentOperationTests: LoopThreadTestCase {
    /// Two children that can only finish if they run at the same time.
    func testChildrenRunAtTheSameTime() throws {
        try XCTSkipIf(threadPoolSize < 2, "needs two pool threads")
        let leftArrived = Gate()
        let rightArrived = Gate()
        let group = try ConcurrentOperation(name: "group", [
            WorkerOperation(name: "left") { () -> String in
                leftArrived.open()
                rightArrived.pass()
                return "L"
            },
            WorkerOperation(name: "right") { () -> String in
                rightArrived.open()
                leftArrived.pass()
                return "R"
            },
        ])
        let results = try XCTUnwrap(group.start(on: loop).wait().value)
        XCTAssertEqual(results.names, ["left", "right"], "names in the order of the children")
        XCTAssertEqual(results.outcome(named: "left", as: String.self)?.value, "L")
        XCTAssertEqual(results.outcome(named: "right", as: String.self)?.value, "R")
    }

    /// Named results reach through nested composites, one level per lookup.
    func testNestedCompositesExposeNamedResults() throws {
        let inner = try ConcurrentOperation(name: "inner", [
            WorkerOperation(name: "x") { 10 },
            WorkerOperation(name: "y") { "why" },
        ])
        let middle = try SequenceOperation(name: "middle", [inner, WorkerOperation(name: "z") { 3.5 }])
        let outer = try ConcurrentOperation(name: "outer", [middle, WorkerOperation(name: "w") { true }])
        let completions = Recorder<String>()
        let outcome = try outer
            .onCompletion { _ in completions.append("outer") }
            .start(on: loop).wait()
        let results = try XCTUnwrap(outcome.value)
        XCTAssertEqual(results.names, ["middle", "w"])
        XCTAssertEqual(results.outcome(named: "w", as: Bool.self)?.value, true)
        let middleResults = try XCTUnwrap(results.results(named: "middle"))
        XCTAssertEqual(middleResults.outcome(named: "z", as: Double.self)?.value, 3.5)
        let innerResults = try XCTUnwrap(middleResults.results(named: "inner"))
        XCTAssertEqual(innerResults.outcome(named: "x", as: Int.self)?.value, 10)
        XCTAssertEqual(innerResults.outcome(named: "y", as: String.self)?.value, "why")
        XCTAssertEqual(results.outcome(named: "middle", as: CompositeResults.self)?.value?.names, ["inner", "z"])
        XCTAssertEqual(completions.values, ["outer"])
    }

    /// Cancelling a group: running children finish with the cancelled flag; children still in the
    /// pool's queue are withdrawn and never run.
    func testCancelFinishesRunningChildrenAndWithdrawsQueuedOnes() throws {
        let started = Gate()
        let proceed = Gate()
        let queuedDone = Gate()
        let ran = Counter()
        let running = (0..<threadPoolSize).map { index in
            WorkerOperation(name: "running \(index)") { () -> Int in
                started.open()
                proceed.pass()
                return index
            }
        }
        let queued = (0..<2).map { index in
            WorkerOperation(name: "queued \(index)", completion: { _ in queuedDone.open() }) { () -> Int in
                ran.increment()
                return index
            }
        }
        let group = try ConcurrentOperation(name: "group", running + queued)
        let request = try group.start(on: loop)
        for _ in 0..<threadPoolSize { started.pass() }
        XCTAssertTrue(request.cancel())
        // The withdrawn children complete while every pool thread is still held.
        queuedDone.pass()
        queuedDone.pass()
        proceed.open(threadPoolSize)
        let outcome = try request.wait()
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertEqual(ran.value, 0)
        let results = try XCTUnwrap(outcome.value)
        for index in 0..<threadPoolSize {
            let child = results.outcome(named: "running \(index)", as: Int.self)
            XCTAssertEqual(child?.value, index)
            XCTAssertEqual(child?.isCancelled, true)
        }
        for index in 0..<2 {
            XCTAssertNil(results["queued \(index)"]?.result)
            XCTAssertEqual(results["queued \(index)"]?.isCancelled, true)
        }
    }

    /// Cancelled before any child could start (the pool is full): no worker ever runs, whether
    /// the cancel reaches the group before or after it handed its children to the pool.
    func testCancelBeforeAnyChildStarted() throws {
        let blockers = try PoolBlockers(loop: loop)
        defer { try? blockers.release() }
        let ran = Counter()
        let completions = Counter()
        let group = try ConcurrentOperation(name: "group", (0..<3).map { index in
            WorkerOperation(name: "\(index)", completion: { _ in completions.increment() }) { () -> Int in
                ran.increment()
                return index
            }
        })
        let request = try group.start(on: loop)
        XCTAssertTrue(request.cancel())
        let outcome = try request.wait()
        XCTAssertTrue(outcome.isCancelled)
        XCTAssertEqual(completions.value, 3)
        XCTAssertEqual(outcome.value?.names.compactMap { outcome.value?[$0]?.result }.count, 0)
        try blockers.release()
        XCTAssertEqual(ran.value, 0)
    }

    func testAnEmptyGroupCompletes() throws {
        let outcome = try ConcurrentOperation([]).start(on: loop).wait()
        XCTAssertEqual(outcome.value?.names, [])
    }
}
