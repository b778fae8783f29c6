import CLibUV
import Synchronization
import XCTest
@testable import UVLoop
import UVLoopTesting

private struct BodyFailure: Error, Equatable {
    let index: Int
}

/// A counter a body on the loop's thread and a test on another thread can share.
private final class Counter: Sendable {
    let value = Atomic<Int>(0)
}

/// Counts the loop's idle handles that are active: the ones that make libuv poll without sleeping.
private func activeIdleHandles(_ loop: Loop) -> Int {
    var count = 0
    uv_walk(loop.native.pointer, { handle, argument in
        guard let handle, let argument else { return }
        if handle.pointee.type == UV_IDLE, uv_is_active(handle) != 0 {
            argument.assumingMemoryBound(to: Int.self).pointee += 1
        }
    }, &count)
    return count
}

private func describe(_ completion: ChunkedLoopCompletion) -> String {
    "done \(completion.reason) \(completion.processed)/\(completion.total) at \(completion.stoppedAt.map(String.init) ?? "-")"
}

final class ChunkedLoopTests: XCTestCase {
    // MARK: the seed's order

    func testSeedOrderProgressThenOneChunkPerIterationThenCompletion() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.startChunkedLoop(count: 7, budget: .items(3)) { index in
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
        }
        XCTAssertEqual(log.value, [], "nothing runs inline in the start call")

        func step() throws -> [String] {
            log.value = []
            try loop.runOnce()
            return log.value
        }
        XCTAssertEqual(try step(), ["progress 0/7"])
        XCTAssertEqual(try step(), ["body 0", "body 1", "body 2", "progress 3/7"])
        XCTAssertEqual(try step(), ["body 3", "body 4", "body 5", "progress 6/7"])
        XCTAssertEqual(try step(), ["body 6", "progress 7/7", "done finished 7/7 at -"])
        XCTAssertFalse(try loop.runOnce())
        XCTAssertEqual(log.value, ["body 6", "progress 7/7", "done finished 7/7 at -"])
    }

    func testReadmeSeedExample() throws {
        let loop = try Loop.manual()
        // From docs/readme/chunked.md: the seed's example in Swift.
        let myArray = ["a", "b", "c", "d", "e"]
        let shown = LoopBound([String](), loop: loop)

        try loop.startChunkedLoop(count: myArray.count) { run in
            // Get an object from the array using the `run` variable as the index
            let object = myArray[run]
            // Do something with `object`
            shown.value.append(object.uppercased())
        } progress: { progress in
            // Update the UI to show progress
            shown.value.append("\(Int(progress.fractionCompleted * 100))%")
        } completion: { completion in
            // Update the UI to show processing complete
            shown.value.append("done: \(completion.processed) items")
        }

        try loop.runUntilIdle()
        XCTAssertEqual(shown.value, ["0%", "A", "B", "C", "D", "E", "100%", "done: 5 items"])
    }

    // MARK: fairness

    func testTwoChunkedLoopsTakeTurnsRoundRobin() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        for (name, count) in [("A", 6), ("B", 4)] {
            try loop.startChunkedLoop(count: count, budget: .items(2)) { index in
                log.value.append("\(name)\(index)")
            } progress: { progress in
                log.value.append("\(name) \(progress)")
            } completion: { completion in
                log.value.append("\(name) \(completion.reason)")
            }
        }
        var turns: [[String]] = []
        repeat {
            log.value = []
            _ = try loop.runOnce()
            turns.append(log.value)
        } while !log.value.isEmpty
        XCTAssertEqual(turns, [
            ["A 0/6", "B 0/4"],
            ["A0", "A1", "A 2/6"],
            ["B0", "B1", "B 2/4"],
            ["A2", "A3", "A 4/6"],
            ["B2", "B3", "B 4/4", "B finished"],
            ["A4", "A5", "A 6/6", "A finished"],
            [],
        ])
    }

    // MARK: cancel

    func testCancelBetweenChunksStopsBeforeTheNextItem() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let handle = try loop.startChunkedLoop(count: 100, budget: .items(3)) { index in
            log.value.append("body \(index)")
        } progress: { _ in
        } completion: { completion in
            log.value.append(describe(completion))
        }
        try loop.runOnce()
        try loop.runOnce()
        try loop.runOnce()
        XCTAssertEqual(log.value.last, "body 5")
        XCTAssertTrue(handle.isRunning)
        XCTAssertTrue(handle.cancel())
        XCTAssertFalse(handle.cancel(), "cancel is idempotent")
        XCTAssertFalse(handle.isRunning)
        try loop.runUntilIdle()
        XCTAssertEqual(log.value.suffix(2), ["body 5", "done cancelled 6/100 at 6"])
        XCTAssertFalse(try loop.runOnce())
    }

    func testCancelFromTheBodyIsExact() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let handle = NativeMutex<ChunkedLoop?>(nil)
        let ended = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        let started = try loop.startChunkedLoop(count: 100, budget: .items(10)) { index in
            log.value.append("body \(index)")
            if index == 4 { XCTAssertEqual(handle.withLock { $0 }?.cancel(), true) }
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
            ended.value = completion
        }
        handle.withLock { $0 = started }
        try loop.runUntilIdle()
        XCTAssertThrowsError(try ended.value?.get()) { XCTAssertTrue($0 is CancellationError) }
        XCTAssertEqual(log.value, [
            "progress 0/100", "body 0", "body 1", "body 2", "body 3", "body 4", "done cancelled 5/100 at 5",
        ])
        XCTAssertFalse(started.cancel(), "an ended chunked loop cannot be cancelled")
    }

    func testCancelBeforeItBeginsReportsInitialProgressThenCancelled() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let handle = try loop.startChunkedLoop(count: 10) { index in
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
        }
        XCTAssertTrue(handle.cancel())
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["progress 0/10", "done cancelled 0/10 at 0"])
    }

    // MARK: errors from the body

    func testThrowingBodyStopsTheLoopAndReportsTheErrorAndIndex() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let ended = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        let handle = try loop.startChunkedLoop(over: 10..<30, budget: .items(3)) { index in
            if index == 15 { throw BodyFailure(index: index) }
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
            ended.value = completion
        }
        try loop.runUntilIdle()
        guard case .failed(let error) = ended.value?.reason else { return XCTFail("\(String(describing: ended.value))") }
        XCTAssertEqual(error as? BodyFailure, BodyFailure(index: 15))
        XCTAssertThrowsError(try ended.value?.get()) { XCTAssertEqual($0 as? BodyFailure, BodyFailure(index: 15)) }
        XCTAssertEqual(log.value, [
            "progress 0/20", "body 10", "body 11", "body 12", "progress 3/20", "body 13", "body 14",
            "done failed(BodyFailure(index: 15)) 5/20 at 15",
        ])
        XCTAssertFalse(handle.isRunning)
        XCTAssertFalse(handle.cancel())
    }

    // MARK: empty loops and bad input

    func testZeroItemsReportsProgressThenCompletesWithoutCallingTheBody() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.startChunkedLoop(count: 0) { index in
            log.value.append("body \(index)")
        } progress: { progress in
            log.value.append("progress \(progress) \(progress.fractionCompleted)")
        } completion: { completion in
            log.value.append(describe(completion))
            XCTAssertEqual(try? completion.get(), 0)
        }
        XCTAssertFalse(try loop.runOnce())
        XCTAssertEqual(log.value, ["progress 0/0 1.0", "done finished 0/0 at -"])
        XCTAssertEqual(activeIdleHandles(loop), 0)
    }

    func testBadInputThrowsClearErrors() throws {
        let loop = try Loop.manual()
        func message(_ start: () throws(LoopError) -> ChunkedLoop) -> String {
            do {
                _ = try start()
                return "no error"
            } catch {
                return error.description
            }
        }
        XCTAssertEqual(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: -1) { _ in } },
            "invalid argument: a chunked loop's count must not be negative (got -1)")
        XCTAssertEqual(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .time(.zero)) { _ in } },
            "invalid argument: a chunked loop's time budget must be at least 1 nanosecond (got 0.0 seconds); use .items(n) to bound chunks by count")
        XCTAssertTrue(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .time(.milliseconds(-1))) { _ in } }
                .contains("time budget must be at least 1 nanosecond"))
        XCTAssertTrue(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .time(.nanoseconds(0.5))) { _ in } }
                .contains("time budget must be at least 1 nanosecond"))
        XCTAssertEqual(
            message { () throws(LoopError) in try loop.startChunkedLoop(count: 5, budget: .items(0)) { _ in } },
            "invalid argument: a chunked loop's chunk must hold at least 1 item (got .items(0))")
        XCTAssertTrue(
            message { () throws(LoopError) in try loop.startChunkedLoop(over: Int.min..<Int.max) { _ in } }
                .contains("holds more than Int.max integers"))
        XCTAssertFalse(try loop.runOnce(), "a refused start leaves nothing pending")
        loop.shutdown()
        XCTAssertThrowsError(try loop.startChunkedLoop(count: 1) { _ in }) {
            XCTAssertEqual($0 as? LoopError, .shutDown)
        }
    }

    // MARK: timers and the idle handle

    func testTimerDueDuringALongChunkedLoopFiresBetweenChunks() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(5)) {
            log.value.append("timer at \(loop.now.nanoseconds / 1_000_000) ms")
        }
        // Each item takes 1 ms of the manual clock; chunks have a 3 ms budget.
        try loop.startChunkedLoop(count: 12, budget: .time(.milliseconds(3))) { index in
            log.value.append("\(index)")
            try loop.advanceClockWithoutRunning(by: .milliseconds(1))
        } progress: { progress in
            log.value.append("| \(progress)")
        } completion: { completion in
            log.value.append(describe(completion))
        }
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, [
            "| 0/12", "0", "1", "2", "| 3/12",
            // The timer comes due at 5 ms: the chunk ends early, the timer fires before the next one.
            "3", "4", "| 5/12", "timer at 5 ms",
            "5", "6", "7", "| 8/12", "8", "9", "10", "| 11/12", "11", "| 12/12", "done finished 12/12 at -",
        ])
    }

    func testTimerFiresBetweenChunksUnderAnItemBudget() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.schedule(after: .milliseconds(5)) { log.value.append("timer") }
        try loop.startChunkedLoop(count: 6, budget: .items(2)) { index in
            log.value.append("\(index)")
        } progress: { progress in
            log.value.append("| \(progress)")
        }
        try loop.runOnce()
        try loop.runOnce()
        try loop.advanceClockWithoutRunning(by: .milliseconds(5))
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["| 0/6", "0", "1", "| 2/6", "timer", "2", "3", "| 4/6", "4", "5", "| 6/6"])
    }

    func testIdleHandleIsActiveOnlyWhileAChunkedLoopIsPending() throws {
        let loop = try Loop.manual()
        XCTAssertEqual(activeIdleHandles(loop), 0)
        let handle = try loop.startChunkedLoop(count: 3, budget: .items(1)) { _ in }
        XCTAssertEqual(activeIdleHandles(loop), 1)
        XCTAssertTrue(try loop.runOnce())
        XCTAssertTrue(try loop.runOnce())
        XCTAssertEqual(activeIdleHandles(loop), 1)
        XCTAssertTrue(handle.isRunning)
        try loop.runUntilIdle()
        XCTAssertFalse(handle.isRunning)
        XCTAssertEqual(activeIdleHandles(loop), 0, "the loop sleeps in the kernel again")
        XCTAssertFalse(loop.confined.value.hasReadyWork)
        XCTAssertFalse(try loop.runOnce())
    }

    // MARK: shutdown

    func testShutdownEndsPendingChunkedLoopsWithTheirCompletions() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        let ended = LoopBound([String: ChunkedLoopCompletion](), loop: loop)
        for name in ["begun", "cancelled", "waiting"] {
            let handle = try loop.startChunkedLoop(count: 10, budget: .items(2)) { _ in
            } progress: { progress in
                log.value.append("\(name) \(progress)")
            } completion: { completion in
                log.value.append("\(name) \(describe(completion))")
                ended.value[name] = completion
            }
            switch name {
            case "begun":
                try loop.runOnce()  // begins
                try loop.runOnce()  // items 0 and 1
            case "cancelled":
                try loop.runOnce()  // "begun" runs items 2 and 3; this one begins
                handle.cancel()     // seen by the shutdown before any chunk of it runs
            default:
                break               // never begins before the shutdown
            }
        }
        log.value = []
        loop.shutdown()
        XCTAssertEqual(log.value.sorted(), [
            "begun done loopShutDown 4/10 at 4",
            "cancelled done cancelled 0/10 at 0",
            "waiting 0/10",
            "waiting done loopShutDown 0/10 at 0",
        ].sorted())
        XCTAssertLessThan(
            log.value.firstIndex(of: "waiting 0/10")!, log.value.firstIndex(of: "waiting done loopShutDown 0/10 at 0")!)
        XCTAssertThrowsError(try ended.value["begun"]?.get()) { XCTAssertEqual($0 as? LoopError, .shutDown) }
    }

    // MARK: ranges and collections

    func testRangeArrayAndNonRandomAccessCollections() throws {
        let loop = try Loop.manual()
        let seen = LoopBound([String](), loop: loop)
        try loop.startChunkedLoop(over: 3..<6, budget: .items(2)) { seen.value.append("r\($0)") }
        try loop.startChunkedLoop(over: ["x", "y", "z"], budget: .items(2)) { seen.value.append($0) }
        let set: Set<Int> = [10, 20, 30, 40, 50]
        try loop.startChunkedLoop(over: set, budget: .items(2)) { seen.value.append("s\($0)") }
        let failed = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        try loop.startChunkedLoop(over: ["p", "q", "r"] as ArraySlice) { element in
            if element == "q" { throw BodyFailure(index: 1) }
        } completion: { failed.value = $0 }
        try loop.runUntilIdle()
        XCTAssertEqual(seen.value.filter { $0.hasPrefix("r") }, ["r3", "r4", "r5"])
        XCTAssertEqual(seen.value.filter { ["x", "y", "z"].contains($0) }, ["x", "y", "z"])
        XCTAssertEqual(seen.value.filter { $0.hasPrefix("s") }, set.map { "s\($0)" }, "a Set is walked in its own order")
        XCTAssertEqual(failed.value?.stoppedAt, 1, "a collection reports the offset where it stopped")
        XCTAssertEqual(failed.value?.processed, 1)
    }

    // MARK: async

    func testAwaitingTheCompletion() async throws {
        let thread = try Loop.startThread(name: "chunked-async")
        let sum = Counter()
        let processed = try await thread.loop.startChunkedLoop(count: 1000) { index in
            sum.value.add(index, ordering: .relaxed)
        }.completion.get()
        XCTAssertEqual(processed, 1000)
        XCTAssertEqual(sum.value.load(ordering: .relaxed), 999 * 1000 / 2)
        try thread.shutdown()
    }

    func testCancellingTheAwaitingTaskCancelsTheChunkedLoop() async throws {
        let thread = try Loop.startThread(name: "chunked-cancel")
        let calls = Counter()
        let handle = try thread.loop.startChunkedLoop(count: Int.max) { _ in
            calls.value.add(1, ordering: .relaxed)
        }
        let waiter = Task { await handle.completion }
        waiter.cancel()
        let completion = await waiter.value
        guard case .cancelled = completion.reason else { return XCTFail("\(completion)") }
        XCTAssertEqual(completion.stoppedAt, completion.processed)
        try thread.shutdown()
        XCTAssertEqual(calls.value.load(ordering: .relaxed), completion.processed, "no body call after the end")
    }

    // MARK: threads

    func testStartAndCancelFromOtherThreads() throws {
        let target = try Loop.startThread(name: "chunked-target")
        let producers = try (0..<2).map { try Loop.startThread(name: "producer-\($0)") }
        let perProducer = 12
        let total = perProducer * producers.count
        let counters = (0..<total).map { _ in Counter() }
        // NativeMutex, not Synchronization.Mutex: ThreadSanitizer cannot see the latter's contended hand-offs.
        let completions = NativeMutex<[Int: ChunkedLoopCompletion]>([:])
        let cancelledByCall = NativeMutex<Set<Int>>([])
        let allDone = ThreadEvent()
        for (p, producer) in producers.enumerated() {
            try producer.loop.post {
                for k in 0..<perProducer {
                    let id = p * perProducer + k
                    let counter = counters[id]
                    let started = try? target.loop.startChunkedLoop(count: 5_000, budget: .items(500)) { _ in
                        counter.value.add(1, ordering: .relaxed)
                    } completion: { completion in
                        let count = completions.withLock { $0[id] = completion; return $0.count }
                        if count == total { allDone.signal() }
                    }
                    guard let handle = started else { return XCTFail("start refused") }
                    if k % 2 == 0, handle.cancel() { cancelledByCall.withLock { _ = $0.insert(id) } }
                }
            }
        }
        allDone.wait()
        for producer in producers { try producer.shutdown() }
        try target.shutdown()
        let results = completions.withLock { $0 }
        let cancelled = cancelledByCall.withLock { $0 }
        XCTAssertEqual(results.count, total)
        for (id, completion) in results {
            XCTAssertEqual(completion.processed, counters[id].value.load(ordering: .relaxed), "every body call is counted")
            if cancelled.contains(id) {
                guard case .cancelled = completion.reason else { return XCTFail("\(id): \(completion)") }
            } else {
                XCTAssertTrue(completion.isFinished, "\(id): \(completion)")
                XCTAssertEqual(completion.processed, 5_000)
            }
        }
    }

    func testCancelFromTheLastProgressReportStopsNothingAndTheLoopFinishes() throws {
        let loop = try Loop.manual()
        let handle = LoopBound<ChunkedLoop?>(nil, loop: loop)
        let cancelled = LoopBound<Bool?>(nil, loop: loop)
        let ending = LoopBound<ChunkedLoopCompletion?>(nil, loop: loop)
        handle.value = try loop.startChunkedLoop(count: 3, budget: .items(10)) { _ in
        } progress: { progress in
            if progress.processed == progress.total { cancelled.value = handle.value!.cancel() }
        } completion: { ending.value = $0 }
        try loop.runUntilIdle()
        XCTAssertEqual(cancelled.value, false, "every item had run: there was nothing left to stop")
        let completion = try XCTUnwrap(ending.value)
        XCTAssertTrue(completion.isFinished)
        XCTAssertNil(completion.stoppedAt)
        XCTAssertEqual(try completion.get(), 3)
    }
}
