import Synchronization

/// Where a loop publishes its figures for ``Loop/metrics()``: written once per turn by the loop's
/// thread (the one writer), read by any thread. Each figure is its own atomic, so a reader may
/// see one turn's busy time beside the previous turn's idle time; every figure is one the loop
/// really had.
final class LoopMetricsRecorder: Sendable {
    private let iterations = Atomic<UInt64>(0)
    private let busyNanoseconds = Atomic<UInt64>(0)
    private let idleNanoseconds = Atomic<UInt64>(0)
    private let posted = Atomic<Int>(0)
    private let nextIteration = Atomic<Int>(0)
    private let timers = Atomic<Int>(0)
    private let chunkedLoops = Atomic<Int>(0)
    private let inboxMessages = Atomic<Int>(0)

    /// Publishes one turn's figures. Loop thread only.
    func publish(iterations: UInt64, busy: UInt64, idle: UInt64, waiting: LoopWaitingWork) {
        self.iterations.store(iterations, ordering: .relaxed)
        busyNanoseconds.store(busy, ordering: .relaxed)
        idleNanoseconds.store(idle, ordering: .relaxed)
        posted.store(waiting.posted, ordering: .relaxed)
        nextIteration.store(waiting.nextIteration, ordering: .relaxed)
        timers.store(waiting.timers, ordering: .relaxed)
        chunkedLoops.store(waiting.chunkedLoops, ordering: .relaxed)
        inboxMessages.store(waiting.inboxMessages, ordering: .relaxed)
    }

    /// The figures last published. Any thread.
    func reading() -> LoopMetrics {
        LoopMetrics(
            iterations: iterations.load(ordering: .relaxed),
            busyTime: .nanoseconds(Int64(clamping: busyNanoseconds.load(ordering: .relaxed))),
            idleTime: .nanoseconds(Int64(clamping: idleNanoseconds.load(ordering: .relaxed))),
            waiting: LoopWaitingWork(
                posted: posted.load(ordering: .relaxed),
                nextIteration: nextIteration.load(ordering: .relaxed),
                timers: timers.load(ordering: .relaxed),
                chunkedLoops: chunkedLoops.load(ordering: .relaxed),
                inboxMessages: inboxMessages.load(ordering: .relaxed)))
    }
}
