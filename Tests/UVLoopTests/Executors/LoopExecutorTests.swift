import XCTest
import Synchronization
@testable import UVLoop
import UVLoopTesting
import UVTestSupport

final class LoopExecutorTests: XCTestCase {
    // MARK: actors on the loop

    func testActorMethodsRunOnTheLoopThreadInCallOrder() async throws {
        let thread = try Loop.startThread()
        let recorder = LoopRecorder(loop: thread.loop)
        for index in 0..<100 { await recorder.record("\(index)") }
        let onLoopThread = await recorder.isOnLoopThread()
        let entries = await recorder.entries
        XCTAssertTrue(onLoopThread)
        XCTAssertEqual(entries, (0..<100).map { "\($0)" })
        thread.shutdown()
    }

    func testActorStepsAreQueuedInFIFOOrderWithPostsFromTheSameThread() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let recorder = LoopRecorder(loop: loop)
        let log = LoopBound([String](), loop: loop)
        for round in 0..<3 {
            // The hop onto the actor is enqueued by this thread right after the post.
            try loop.post { log.value.append("post \(round)") }
            await recorder.record("actor \(round)", into: log)
        }
        let entries = try await loop.invoke { log.value }
        XCTAssertEqual(entries, ["post 0", "actor 0", "post 1", "actor 1", "post 2", "actor 2"])
        thread.shutdown()
    }

    /// A job enqueued on the loop's own thread is queued like a post, never run inline.
    func testJobsEnqueuedOnTheLoopThreadGoThroughTheQueue() throws {
        let loop = try Loop.manual()
        let recorder = LoopRecorder(loop: loop)
        let log = LoopBound([String](), loop: loop)
        let finished = LoopBound(false, loop: loop)
        Task(executorPreference: loop) {
            try await recorder.interleave(into: log)
            finished.value = true
        }
        XCTAssertEqual(log.value, [], "creating the task must not run it inline")
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["method start", "method end", "post before", "task on actor", "post after"])
        XCTAssertTrue(finished.value)
    }

    func testManyTasksOnOneActorStaySerial() async throws {
        let thread = try Loop.startThread()
        let recorder = LoopRecorder(loop: thread.loop)
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<250 { await recorder.increment() } }
            }
        }
        let count = await recorder.count
        XCTAssertEqual(count, 1000)
        thread.shutdown()
    }

    // MARK: task executor preference

    func testTaskExecutorPreferenceRunsNonisolatedCodeOnTheLoopThread() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let results = await withTaskExecutorPreference(loop) {
            async let child = runsOnLoopThread(loop)
            let first = await runsOnLoopThread(loop)
            let second = await runsOnLoopThread(loop)
            return [first, second, await child]
        }
        XCTAssertEqual(results, [true, true, true])
        let unstructured = await Task(executorPreference: loop) { await runsOnLoopThread(loop) }.value
        XCTAssertTrue(unstructured)
        let withoutPreference = await Task.detached { await runsOnLoopThread(loop) }.value
        XCTAssertFalse(withoutPreference)
        thread.shutdown()
    }

    func testTaskExecutorIdentityIsStable() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let preferred = await Task(executorPreference: loop) {
            withUnsafeCurrentTask { $0?.unownedTaskExecutor }
        }.value
        XCTAssertEqual(preferred, loop.asUnownedTaskExecutor())
        thread.shutdown()
    }

    /// `Task(executorPreference:)` retains the loop and releases it when the task ends: the loop
    /// is freed once nothing else holds it.
    func testTasksPreferringTheLoopDoNotLeakIt() async throws {
        weak var weakLoop: Loop?
        do {
            let thread = try Loop.startThread()
            weakLoop = thread.loop
            for _ in 0..<20 {
                let onLoop = await Task(executorPreference: thread.loop) { [loop = thread.loop] in
                    loop.isOnLoopThread
                }.value
                XCTAssertTrue(onLoop)
            }
            thread.shutdown()
        }
        XCTAssertNil(weakLoop)
    }

    func testTaskStepsAreOrderedWithPosts() throws {
        let loop = try Loop.manual()
        let log = LoopBound([String](), loop: loop)
        try loop.post { log.value.append("post 1") }
        Task(executorPreference: loop) { log.value.append("task") }
        try loop.post { log.value.append("post 2") }
        try loop.runUntilIdle()
        XCTAssertEqual(log.value, ["post 1", "task", "post 2"])
    }

    // MARK: isolation checks

    func testAssumeIsolatedWorksInPostedWorkAndTimerCallbacks() throws {
        let loop = try Loop.manual()
        let recorder = LoopRecorder(loop: loop)
        try loop.post {
            recorder.assumeIsolated { $0.record("posted") }
        }
        try loop.postNextIteration {
            recorder.preconditionIsolated()
            recorder.assumeIsolated { $0.record("next iteration") }
        }
        try loop.schedule(after: .milliseconds(5)) {
            recorder.assumeIsolated { $0.record("timer") }
        }
        let invoked = try loop.invoke { recorder.assumeIsolated { $0.entries.count } }
        XCTAssertEqual(invoked, 0)
        try loop.runUntilIdle()
        try loop.advanceTime(by: .milliseconds(5))
        let entries = recorder.assumeIsolated { $0.entries }
        XCTAssertEqual(entries, ["posted", "next iteration", "timer"])
    }

    func testIsolationAnswers() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        XCTAssertEqual(loop.isIsolatingCurrentContext(), false, "the test's thread is not the loop's")
        let onLoop = try await loop.invoke { loop.isIsolatingCurrentContext() }
        XCTAssertEqual(onLoop, true)
        let fromActor = await LoopRecorder(loop: loop).isolationAnswer()
        XCTAssertEqual(fromActor, true)
        let other = try Loop.startThread()
        let onOtherLoop = try await other.loop.invoke { loop.isIsolatingCurrentContext() }
        XCTAssertEqual(onOtherLoop, false, "another loop's thread")
        XCTAssertTrue(loop.isSameExclusiveExecutionContext(other: loop))
        XCTAssertFalse(loop.isSameExclusiveExecutionContext(other: other.loop))
        other.shutdown()
        thread.shutdown()
    }

    func testLoopThreadIsNoLongerIsolatedAfterShutdown() throws {
        let loop = try Loop.manual()
        XCTAssertEqual(loop.isIsolatingCurrentContext(), true)
        loop.shutdown()
        XCTAssertEqual(loop.isIsolatingCurrentContext(), false)
    }

    // MARK: shutdown

    /// Jobs enqueued while the loop shuts down (here by posted work that the shutdown drain runs)
    /// still run on the loop's thread, before it closes.
    func testShutdownDrainRunsJobsEnqueuedWhileShuttingDown() throws {
        let loop = try Loop.manual()
        let recorder = LoopRecorder(loop: loop)
        let log = Recorder<String>()
        try loop.post {
            XCTAssertFalse(loop.isAcceptingWork)
            Task(executorPreference: loop) { log.append("task on loop thread: \(loop.isOnLoopThread)") }
            _ = recorder.assumeIsolated { recorder in
                Task { recorder.note("actor", in: log) }
            }
        }
        loop.shutdown()
        XCTAssertEqual(log.values, ["task on loop thread: true", "actor on loop thread: true"])
    }

    /// A task sleeping on an actor of the loop is resumed with `LoopError.shutDown`, never left
    /// suspended.
    func testShutdownResumesASleepingActorTask() async throws {
        let thread = try Loop.startThread()
        let recorder = LoopRecorder(loop: thread.loop)
        let (sleeper, pending) = await recorder.startLongSleep()
        XCTAssertEqual(pending, 1)
        thread.shutdown()
        let outcome = await sleeper.value
        XCTAssertEqual(outcome, "\(LoopError.shutDown)")
    }

    /// Once closed, the loop has no thread; jobs run on the thread that enqueues them, one at a
    /// time, and whatever needs the loop throws.
    func testJobsAfterCloseRunOnTheCallerOneAtATime() async throws {
        let thread = try Loop.startThread()
        let loop = thread.loop
        let recorder = LoopRecorder(loop: loop)
        await recorder.record("before")
        thread.shutdown()

        await recorder.record("after")
        let entries = await recorder.entries
        XCTAssertEqual(entries, ["before", "after"])
        let onLoopThread = await recorder.isOnLoopThread()
        XCTAssertFalse(onLoopThread)
        let isolated = await recorder.isolationAnswer()
        XCTAssertEqual(isolated, true, "the thread running a late job is isolated to the loop")
        XCTAssertEqual(loop.isIsolatingCurrentContext(), false, "other threads are not")
        let postFails = await recorder.postFails()
        XCTAssertTrue(postFails)

        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask { for _ in 0..<250 { await recorder.increment() } }
            }
        }
        let count = await recorder.count
        XCTAssertEqual(count, 1000)
        let preferred = await Task(executorPreference: loop) { await runsOnLoopThread(loop) }.value
        XCTAssertFalse(preferred, "a task preferring a closed loop still runs, on the caller")
    }

    func testTaskOnAClosedManualLoopRunsInlineAtCreation() throws {
        let loop = try Loop.manual()
        loop.shutdown()
        let log = Recorder<String>()
        Task(executorPreference: loop) { log.append("ran") }
        XCTAssertEqual(log.values, ["ran"], "no loop will ever run it, so the enqueuing thread does")
    }
}
