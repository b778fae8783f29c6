import UVLoop

/// An actor pinned to a loop: every method runs on the loop's thread, queued with the loop's posts.
actor RequestCounter {
    let loop: Loop
    private var count = 0

    init(loop: Loop) {
        self.loop = loop
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }

    @discardableResult
    func record(_ source: String) -> Int {
        count += 1
        print("  actor:   request #\(count) from \(source) (on the loop's thread: \(loop.isOnLoopThread))")
        return count
    }
}

/// An actor pinned to a loop that only counts: the target of the busy-polling comparison.
actor PingTarget {
    let loop: Loop
    private var pings = 0

    init(loop: Loop) {
        self.loop = loop
    }

    nonisolated var unownedExecutor: UnownedSerialExecutor { loop.unownedExecutor }

    func ping() -> Int {
        pings += 1
        return pings
    }
}

/// Code annotated to run on the process-wide loop, as `@MainActor` code runs on the main thread.
@MainLoopActor
func describeMainLoop() -> String {
    "@MainLoopActor code runs on the main loop's thread: \(MainLoop.shared.isOnLoopThread)"
}

/// Nonisolated async code: it runs wherever its task prefers.
nonisolated func nonisolatedStep(_ loop: Loop) async -> String {
    "nonisolated async code on the loop's thread: \(loop.isOnLoopThread)"
}

/// Actors, task executors, async sequences and the global actor, on loops that a thread runs.
func runConcurrencySection() throws {
    print("== Swift concurrency on the loop")
    // This thread creates the loop, so it is the loop's thread; `run()` below runs it here.
    let loop = try Loop()
    let counter = RequestCounter(loop: loop)
    let hits = LoopBound(0, loop: loop)
    print("A loop run by this thread, an actor pinned to it, and LoopBound state for the closure API.")

    Task(executorPreference: loop) {
        do {
            try await narrate(loop: loop, counter: counter, hits: hits)
        } catch {
            print("  the section failed: \(error)")
        }
        loop.shutdown()
    }
    try loop.run()
    print("run() returned: the loop shut down.")
}

private func narrate(loop: Loop, counter: RequestCounter, hits: LoopBound<Int>) async throws {
    print("1. The closure API and the actor, side by side, in one queue (first in, first out):")
    try loop.post {
        hits.value += 1
        print("  closure: hit #\(hits.value) (on the loop's thread: \(loop.isOnLoopThread))")
    }
    await counter.record("a task that prefers the loop")

    print("2. From the global pool, an await hops onto the loop and back:")
    let count = await Task.detached { await counter.record("a detached task on the global pool") }.value
    print("  the awaiting task, back on the loop, got: \(count)")

    print("3. A task executor preference runs nonisolated code on the loop's thread:")
    let step = await Task.detached {
        await withTaskExecutorPreference(loop) { await nonisolatedStep(loop) }
    }.value
    print("  \(step)")

    print("4. A timer callback enters the actor synchronously with assumeIsolated:")
    try loop.schedule(after: .milliseconds(5)) {
        counter.assumeIsolated { _ = $0.record("a timer callback, via assumeIsolated") }
    }
    try await loop.sleep(for: .milliseconds(10))

    print("5. Ticks as an AsyncSequence (three, then break: the timer is cancelled):")
    let start = loop.now
    var received = 0
    for await tick in try loop.ticks(every: .milliseconds(20)) {
        received += 1
        print("  tick \(received), \((tick.nanoseconds - start.nanoseconds) / 1_000_000) ms after the start")
        if received == 3 { break }
    }

    print("6. Cancelling a task cancels its sleep (and the loop's timer):")
    let sleeper = Task(executorPreference: loop) { try await loop.sleep(for: .seconds(60)) }
    sleeper.cancel()
    do {
        try await sleeper.value
    } catch {
        print("  the sleep ended with \(type(of: error))")
    }

    print("7. @MainLoopActor, from a thread of the global pool (the main loop: its own thread, chosen by first use):")
    let description = await Task.detached { await describeMainLoop() }.value
    print("  \(description)")

    print("8. An actor whose loop has shut down still runs, on the caller's thread, never dropped:")
    let other = try Loop.startThread(name: "demo-closed")
    let orphan = RequestCounter(loop: other.loop)
    await orphan.record("a task, before that loop shut down")
    other.shutdown()
    await orphan.record("a task, after that loop shut down")

    print("9. Busy polling (opt-in): after work, the loop polls for a while before sleeping, so a hop back finds it awake:")
    let pinged = try Loop.startThread(name: "demo-ping")
    let target = PingTarget(loop: pinged.loop)
    for window in [Duration.zero, .microseconds(200)] {
        try pinged.loop.setBusyPoll(window)
        let perHop = await Task.detached { () -> Duration in
            _ = await target.ping()
            let start = ContinuousClock.now
            for _ in 0..<2_000 { _ = await target.ping() }
            return (ContinuousClock.now - start) / 2_000
        }.value
        let microseconds = Double(perHop.components.seconds) * 1e6 + Double(perHop.components.attoseconds) / 1e12
        let label = window == .zero ? "off   " : "200 us"
        print("  busy poll \(label): \(Int(microseconds.rounded())) us per hop from the global pool onto the loop and back (timing varies)")
    }
    pinged.shutdown()
}
