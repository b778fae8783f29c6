extension LoopTimer {
    /// Whether the timer keeps the loop alive while it is pending, as libuv's `uv_ref` and
    /// `uv_unref` set it for a libuv timer: a timer is referenced when it is scheduled, and one
    /// set unreferenced here still runs on time while the loop runs, but does not keep it running.
    ///
    /// It matters where the owner of an attached loop runs it with `uv_run(UV_RUN_DEFAULT)`,
    /// which returns once nothing referenced is left: a repeating statistics timer that should
    /// not keep a program alive is set unreferenced. (A loop UVLoop owns runs until
    /// ``Loop/stop()`` or ``Loop/shutdown()`` whatever its timers.) Being due does not keep the
    /// loop alive either: an unreferenced timer that is due runs when the loop turns for
    /// something else.
    ///
    /// ```swift
    /// let stats = try loop.scheduleRepeating(every: .seconds(10)) { reportStatistics() }
    /// stats.setReferenced(false)   // the owner's uv_run returns when its own work is done
    /// ```
    ///
    /// Callable from any thread. On the loop's thread it takes effect before this returns; from
    /// another thread it travels to the loop like a post, in order with the calling thread's
    /// other posts.
    /// - Parameter referenced: `false` so that the timer does not keep the loop alive; `true`
    ///   (what every timer starts as) so that it does again.
    /// - Returns: `false` if the timer has already ended (ran, was fired or cancelled, or the
    ///   loop has shut down), so there was nothing to set; otherwise `true`.
    @discardableResult
    public func setReferenced(_ referenced: Bool) -> Bool {
        loop.setTimerReferenced(self, referenced)
    }
}

extension Loop {
    /// `LoopTimer.setReferenced(_:)`: on the loop's thread at once, from another thread through
    /// a post.
    func setTimerReferenced(_ timer: LoopTimer, _ referenced: Bool) -> Bool {
        guard isOnLoopThread else {
            guard timer.isPending else { return false }
            do {
                try enqueue(.run { [confined, id = timer.id] in
                    _ = confined.value.setTimerReferenced(id, referenced)
                })
            } catch {
                // The loop no longer accepts work: shutdown cancels every pending timer.
                return false
            }
            return true
        }
        return confined.withValue { $0.setTimerReferenced(timer.id, referenced) }
    }
}
