extension LoopEngine {
    /// Queues a chunked loop started on (or posted to) the loop's thread; it begins in the next
    /// idle phase.
    func admitChunkedLoop(_ run: ChunkedLoopRun) {
        chunkedLoops.admit(run)
        startIdle()
    }

    /// Runs one chunk. A chunk stops early when a timer comes due; that timer then fires in the
    /// next iteration's idle phase, after one poll for I/O.
    func runChunk() {
        metrics.chunks &+= 1
        chunkedLoops.runTurn(self)
        if timers.hasDue(at: now) { timersDue = true }
    }
}
