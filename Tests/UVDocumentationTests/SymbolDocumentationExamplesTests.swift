import Synchronization
import UVEvents
import UVLoop
import UVLoopTesting
import UVOperations
import XCTest

/// The code shown in the doc comments of public symbols (Sources/*/), run for real: every
/// ```swift block of a doc comment is, verbatim, one marked region below (`// docs:begin NAME`
/// ... `// docs:end`). Loops are stepped by the test (manual clock, `runUntilIdle`) or joined
/// (`LoopThread.shutdown()`, `OperationRequest.wait()`); nothing sleeps.
final class SymbolDocumentationExamplesTests: XCTestCase {
    // MARK: types the examples use (nested, so that they do not clash with other examples)

    final class TableModel {
        var rows: [String] = []
        func insert(_ row: String) { rows.append(row) }
    }

    // docs:begin Loop-unownedExecutor-1
    actor Counter {
        let loop: Loop                  // the actor keeps its loop alive
        private(set) var value = 0
        init(loop: Loop) { self.loop = loop }
        nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }
        func increment() -> Int { value += 1; return value }
    }
    // docs:end

    // docs:begin MainLoopActor-1
    @MainLoopActor final class Session {
        var requests = 0
        func handle() { requests += 1 }   // always on the main loop's thread
    }
    // docs:end

    final class Logger {
        var values: [Int] = []
        func record(_ value: Int) { values.append(value) }
    }

    final class Total {
        var sum = 0
        func add(_ value: Int) { sum += value }
    }

    enum ValueEvent {
        static let changed = EventKey<Int>("changed")
    }

    // docs:begin EventKey-1
    enum PickerEvent {
        static let reset = EventKey<Void>("reset")        // no argument
        static let lock = EventKey<Bool>("lock")          // a Bool
        static let pick = EventKey<String>("pick")        // any other Sendable type
    }
    // docs:end

    final class Counted: Sendable {
        let value = Mutex<Int?>(nil)
    }

    final class Picker {
        var isLocked = false
        var picked: [String] = []
        func reset() { isLocked = false; picked = [] }
        func lock(_ locked: Bool) { isLocked = locked }
        func pick(_ item: String) { picked.append(item) }
    }

    // MARK: UVLoop

    func testActorOnALoop() async throws {
        let thread = try Loop.startThread(name: "doc-counter")
        let counter = Counter(loop: thread.loop)
        let first = await counter.increment()
        let second = await counter.increment()
        XCTAssertEqual([first, second], [1, 2])
        thread.shutdown()
    }

    func testMainLoopActor() async throws {
        let session = Session()
        await session.handle()
        let requests = await session.requests
        XCTAssertEqual(requests, 1)
    }

    func testInbox() throws {
        let loop = try Loop()                  // this thread is the loop's thread: the test steps it
        // docs:begin Inbox-1
        let total = LoopBound(0, loop: loop)
        let inbox = try loop.makeInbox(of: Int.self) { value in total.value += value }
        try inbox.send(40)          // any thread: no allocation, no lock
        try inbox.send(2)           // received after 40, on the loop's thread
        // docs:end
        try loop.runUntilIdle()
        XCTAssertEqual(total.value, 42)
        inbox.close()
        XCTAssertThrowsError(try inbox.send(1))
        loop.shutdown()
    }

    func testLoopBound() throws {
        let thread = try Loop.startThread(name: "doc-bound")
        let loop = thread.loop
        // docs:begin LoopBound-1
        let table = LoopBound(TableModel(), loop: loop)
        try table.post { $0.insert("soon") }                 // later, on the loop's thread
        let count = try table.invoke { $0.rows.count }       // waits for the loop's thread: 1
        try table.postNextIteration { $0.insert("next turn") }
        // docs:end
        XCTAssertEqual(count, 1)
        XCTAssertEqual(try table.invoke { $0.rows.first }, "soon")
        thread.shutdown()
    }

    func testTicks() throws {
        let loop = try Loop.manual()           // the test's thread steps the loop and moves its clock
        let counted = Counted()
        Task(executorPreference: loop) {
            // docs:begin Loop-ticks-1
            var count = 0
            for await tick in try loop.ticks(every: .milliseconds(100)) {
                print("tick at", tick)
                count += 1
                if count == 3 { break }          // leaving the loop cancels the timer
            }
            // docs:end
            counted.value.withLock { $0 = count }
        }
        try loop.runUntilIdle()                // the task starts and waits for its first tick
        XCTAssertEqual(loop.scheduledTimerCount, 1)
        try loop.advanceTime(by: .milliseconds(300))
        XCTAssertEqual(counted.value.withLock { $0 }, 3)
        XCTAssertEqual(loop.scheduledTimerCount, 0, "leaving the for-await loop cancelled the timer")
        loop.shutdown()
    }

    // MARK: UVLoopTesting

    func testManualLoop() throws {
        // docs:begin Loop-manual-1
        let loop = try Loop.manual()
        let fired = LoopBound(false, loop: loop)
        try loop.schedule(after: .seconds(5)) { fired.value = true }
        try loop.advanceTime(by: .seconds(4))     // nothing due yet
        try loop.advanceTime(by: .seconds(1))     // the timer fires, inside this call
        // docs:end
        XCTAssertTrue(fired.value)
        XCTAssertEqual(loop.now, LoopInstant(nanoseconds: 5_000_000_000))
        loop.shutdown()
    }

    func testAssumeIsolated() throws {
        let loop = try Loop.manual()
        // docs:begin Loop-assumeIsolated-1
        final class Session {                       // not Sendable: lives on the loop's thread
            var idleTicks = 0
        }
        let session = Session()
        try loop.assumeIsolated().scheduleRepeating(every: .seconds(1)) { _ in
            session.idleTicks += 1                  // no "capture of non-Sendable" error
        }
        // docs:end
        try loop.advanceTime(by: .seconds(3))
        XCTAssertEqual(session.idleTicks, 3)
        loop.shutdown()
    }

    // MARK: UVOperations

    func testStartWithAnIsolatedCompletion() throws {
        let loop = try Loop()
        // docs:begin LoopOperation-start-isolated-1
        final class Cache { var entries: [String: Int] = [:] }   // lives on the loop's thread
        let cache = Cache()
        try WorkerOperation { 6 * 7 }
            .start(on: loop.assumeIsolated()) { outcome in cache.entries["answer"] = outcome.value }
        // docs:end
        while cache.entries.isEmpty { try loop.runOnce() }
        XCTAssertEqual(cache.entries, ["answer": 42])
        loop.shutdown()
    }

    func testWorkerOperation() throws {
        let thread = try Loop.startThread(name: "doc-worker")
        let loop = thread.loop
        // docs:begin WorkerOperation-1
        let operation = WorkerOperation(name: "double") { 21 }
            .transform { outcome in outcome.value = outcome.value.map { $0 * 2 } }
            .onCompletion { outcome in print("completed:", outcome) }   // on the loop's thread
        let request = try operation.start(on: loop)
        let outcome = try request.wait()              // from another thread: value 42
        // docs:end
        XCTAssertEqual(outcome.value, 42)
        XCTAssertFalse(outcome.isCancelled)
        thread.shutdown()
    }

    func testSequenceOperation() throws {
        let thread = try Loop.startThread(name: "doc-sequence")
        let loop = thread.loop
        // docs:begin SequenceOperation-1
        let load = WorkerOperation(name: "load") { "the quick brown fox" }
        let count = WorkerOperation(name: "count") { 4 }
        let sequence = try SequenceOperation(name: "sequence", [load, count])   // load, then count
        let results = try sequence.start(on: loop).wait().value!
        let words = results.outcome(named: "count", as: Int.self)?.value        // 4
        // docs:end
        XCTAssertEqual(words, 4)
        XCTAssertEqual(results.names, ["load", "count"])
        XCTAssertEqual(results.outcome(named: "load", as: String.self)?.value, "the quick brown fox")
        thread.shutdown()
    }

    func testConcurrentOperation() throws {
        let thread = try Loop.startThread(name: "doc-group")
        let loop = thread.loop
        // docs:begin ConcurrentOperation-1
        let words = WorkerOperation(name: "words") { 4 }
        let letters = WorkerOperation(name: "letters") { 16 }
        let group = try ConcurrentOperation(name: "group", [words, letters])   // both at once
        let results = try group.start(on: loop).wait().value!
        let letterCount = results.outcome(named: "letters", as: Int.self)?.value   // 16
        // docs:end
        XCTAssertEqual(letterCount, 16)
        XCTAssertEqual(results.outcome(named: "words", as: Int.self)?.value, 4)
        thread.shutdown()
    }

    func testCompositeResults() throws {
        let thread = try Loop.startThread(name: "doc-results")
        let loop = thread.loop
        let fetch = WorkerOperation(name: "fetch") { "data" }
        let group = try ConcurrentOperation(name: "inner", [fetch])
        let request = try SequenceOperation([WorkerOperation(name: "double") { 2 * 21 }, group]).start(on: loop)
        // docs:begin CompositeResults-1
        let outcome = try request.wait()
        let doubled = outcome.value?.outcome(named: "double", as: Int.self)?.value
        let inner = outcome.value?.results(named: "inner")?["fetch"]
        // docs:end
        XCTAssertEqual(doubled, 42)
        XCTAssertEqual(inner?.value as? String, "data")
        thread.shutdown()
    }

    func testOperationSession() throws {
        let loop = try Loop()                  // stepped by this thread: nothing runs until it does
        let operation = WorkerOperation(name: "work") { 1 }
        // docs:begin OperationSession-1
        let session = OperationSession()
        let request = try operation.start(on: loop, session: session)
        session.cancelAll()             // cancels every request of this session still in flight
        // docs:end
        try loop.runUntilIdle()                // the request completes, cancelled before it reached the pool
        XCTAssertTrue(request.isFinished)
        XCTAssertEqual(request.finishedOutcome?.isCancelled, true)
        XCTAssertNil(request.finishedOutcome?.result, "withdrawn before a pool thread took it")
        XCTAssertEqual(session.requestCount, 0)
        loop.shutdown()
    }

    // MARK: UVEvents

    func testEventControl() throws {
        let loop = try Loop()                  // targets that are not Sendable: on the loop's thread
        let logger = Logger()
        let total = Total()
        // docs:begin EventControl-1
        let control = EventControl(loop: loop)
        let log = try control.addTarget(logger, action: Logger.record, for: ValueEvent.changed)
        try control.addTarget(total, action: Total.add, for: ValueEvent.changed)
        try control.send(ValueEvent.changed, 5)   // logger.record(5), then total.add(5)
        try log.remove()                           // or: try control.removeTarget(logger)
        // docs:end
        try control.send(ValueEvent.changed, 1)
        XCTAssertEqual(logger.values, [5])
        XCTAssertEqual(total.sum, 6)
        loop.shutdown()
    }

    func testEventKeyAndRegistry() throws {
        XCTAssertEqual(PickerEvent.lock.description, "EventKey<Bool>(lock)")
        let loop = try Loop()                  // the target is not Sendable: set it on the loop's thread
        let picker = Picker()
        // docs:begin EventRegistry-1
        let registry = EventRegistry(loop: loop)
        try registry.setTarget(picker)                            // held weakly
        try registry.register(Picker.reset, for: PickerEvent.reset)
        try registry.register(Picker.lock, for: PickerEvent.lock)
        try registry.register(Picker.pick, for: PickerEvent.pick)
        try registry.send(PickerEvent.reset)                      // picker.reset()
        try registry.send(PickerEvent.lock, true)                 // picker.lock(true)
        try registry.send(PickerEvent.pick, "something")          // picker.pick("something")
        // docs:end
        XCTAssertTrue(picker.isLocked)
        XCTAssertEqual(picker.picked, ["something"])
        loop.shutdown()
    }

    func testAnIdleTimeoutIsPushedBack() throws {
        let loop = try Loop.manual()
        // docs:begin LoopTimer-reschedule
        let closed = LoopBound(false, loop: loop)
        let idle = try loop.schedule(after: .seconds(30)) { closed.value = true }
        // Each message received pushes the idle timeout back:
        idle.reschedule(after: .seconds(30))
        // docs:end
        try loop.advanceTime(by: .seconds(29))
        XCTAssertFalse(closed.value)
        try loop.advanceTime(by: .seconds(1))
        XCTAssertTrue(closed.value)
        loop.shutdown()
    }

    func testARepeatingTimerCancelsItselfThroughTheHandleItIsGiven() throws {
        let loop = try Loop.manual()
        // docs:begin Loop-scheduleRepeating-handle-1
        let countdown = LoopBound(3, loop: loop)
        try loop.scheduleRepeating(every: .seconds(1)) { timer in
            countdown.value -= 1
            if countdown.value == 0 { timer.cancel() }
        }
        // docs:end
        try loop.advanceTime(by: .seconds(10))
        XCTAssertEqual(countdown.value, 0, "three runs, then the callback cancelled its own timer")
        XCTAssertEqual(loop.scheduledTimerCount, 0)
        loop.shutdown()
    }
}
