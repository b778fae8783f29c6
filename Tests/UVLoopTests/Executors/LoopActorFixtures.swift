@testable import UVLoop
import UVLoopTesting
import UVTestSupport

/// An actor pinned to a loop: every method runs on the loop's thread.
actor LoopRecorder {
    let loop: Loop
    private(set) var entries: [String] = []
    private(set) var count = 0

    init(loop: Loop) {
        self.loop = loop
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }

    func record(_ entry: String) {
        entries.append(entry)
    }

    /// Appends to a log that posts also write, from the loop's thread.
    func record(_ entry: String, into log: LoopBound<[String]>) {
        log.value.append(entry)
    }

    /// Notes where it ran, in a log that any thread may read.
    func note(_ entry: String, in log: Recorder<String>) {
        log.append("\(entry) on loop thread: \(loop.isOnLoopThread)")
    }

    func increment() {
        count += 1
    }

    func isOnLoopThread() -> Bool { loop.isOnLoopThread }

    func isolationAnswer() -> Bool? { loop.isIsolatingCurrentContext() }

    /// Posts, starts a task on this actor, and posts again, all from the loop's thread: the task's
    /// first step is queued between the two posts, after this method returns.
    func interleave(into log: LoopBound<[String]>) throws {
        log.value.append("method start")
        try loop.post { log.value.append("post before") }
        Task { self.record("task on actor", into: log) }
        try loop.post { log.value.append("post after") }
        log.value.append("method end")
    }

    /// Starts a task on this actor that sleeps on the loop for an hour and reports how it ended;
    /// returns it with the loop's timer count once its sleep has begun.
    func startLongSleep() async -> (sleeper: Task<String, Never>, pendingTimers: Int) {
        let sleeper = Task {
            do {
                try await loop.sleep(for: .seconds(3600))
                return "slept"
            } catch {
                return "\(error)"
            }
        }
        // The sleeper's first step was queued from the loop's thread; work this thread posts now
        // runs after it (one thread's jobs and posts run in order), so once the post has run the
        // sleep has begun. (A `Task.yield()` would re-queue this task from another thread, in no
        // set order with the sleeper.)
        await withCheckedContinuation { (posted: CheckedContinuation<Void, Never>) in
            do { try loop.post { posted.resume() } } catch { posted.resume() }
        }
        return (sleeper, loop.scheduledTimerCount)
    }

    /// `await loop.invoke` from an actor on the loop runs inline: work posted just before it has
    /// not run yet when the invoked closure runs.
    func invokeInline() async -> String {
        let posted = LoopBound(false, loop: loop)
        try? loop.post { posted.value = true }
        let postRanFirst = try? await loop.invoke { posted.value }
        return postRanFirst == false ? "inline on loop thread" : "queued behind the post"
    }

    func postFails() -> Bool {
        do {
            try loop.post {}
            return false
        } catch {
            return error == .shutDown
        }
    }
}

/// Nonisolated async code: where does it run?
nonisolated func runsOnLoopThread(_ loop: Loop) async -> Bool {
    loop.isOnLoopThread
}
