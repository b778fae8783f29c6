import CLibUV

extension LoopEngine {
    /// Ends a turn's accounting, just before the loop polls (after the prepare phase's own work): adds the turn's busy time (the time
    /// since the last turn ended, less the time the loop spent waiting in between), publishes the
    /// figures, and reports the turn to the stall handler when it was too long.
    func recordTurnEnd() {
        let now = monotonicNanoseconds()
        let idle = measuresOwnIdleTime ? metrics.idleNanoseconds : uv_metrics_idle_time(native.pointer)
        if metrics.lastTurnEnd != 0 {
            let elapsed = now &- metrics.lastTurnEnd
            let waited = idle &- metrics.lastIdle
            let busy = elapsed > waited ? elapsed - waited : 0
            metrics.busyNanoseconds &+= busy
            if let stallHandler = metrics.stallHandler, busy > stallHandler.threshold {
                let stall = LoopStall(
                    duration: .nanoseconds(Int64(clamping: busy)), postedJobs: metrics.postedJobs,
                    timersFired: metrics.timersFired, nextIterationJobs: metrics.nextIterationJobs,
                    chunks: metrics.chunks)
                metrics.resetTurn()
                reportStall(stall, to: stallHandler.handler)
            }
        }
        metrics.resetTurn()
        metrics.iterations &+= 1
        metrics.lastTurnEnd = now
        metrics.lastIdle = idle
        // A poll that may block: the time until the next callback is idle (`noteTurnStart`).
        if measuresOwnIdleTime, !self.idle.isActive { metrics.pollStart = now }
        metricsRecorder.publish(
            iterations: metrics.iterations, busy: metrics.busyNanoseconds, idle: idle,
            waiting: LoopWaitingWork(
                // Jobs from other threads are counted when read (`Loop.metrics()`), not here:
                // that count takes the post queue's lock, which producers contend for.
                posted: (batch.count - batchIndex) + ownJobs.value.count,
                nextIteration: nextIteration.count,
                timers: timers.count,
                chunkedLoops: chunkedLoops.count,
                inboxMessages: inboxes.waitingCount))
    }

    /// The first callback after a poll that may have blocked: the time since the poll began was
    /// idle. An owned loop counts its idle time this way instead of asking libuv to, which
    /// (`UV_METRICS_IDLE_TIME`) costs a non-blocking `epoll_wait` before every blocking one.
    @inline(__always)
    func noteTurnStart() {
        let pollStart = metrics.pollStart
        guard pollStart != 0 else { return }
        let now = monotonicNanoseconds()
        metrics.idleNanoseconds &+= now > pollStart ? now - pollStart : 0
        metrics.pollStart = 0
    }

    /// Runs the stall handler like any of the loop's callbacks: work it posts runs before the
    /// loop sleeps, and a shutdown or detach it asks for happens when it returns.
    private func reportStall(_ stall: LoopStall, to handler: @Sendable (LoopStall) -> Void) {
        guard !lifecycle.handlesClosed else { return }
        runAsCallback { handler(stall) }
    }
}
