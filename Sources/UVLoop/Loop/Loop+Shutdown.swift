extension Loop {
    /// Shuts the loop down gracefully. Callable from any thread; idempotent.
    ///
    /// From now on posting throws ``LoopError/shutDown``. The loop's thread then finishes a timer
    /// burst that `postBudget` had split across turns, runs everything posted before this call,
    /// cancels pending timers, closes every handle and closes the `uv_loop_t`: inside ``run()``
    /// (which then returns), or right here when called on the loop's thread outside a turn, or
    /// at the next ``runOnce()`` of a stepped loop. See "Shutdown" in ``Loop`` for what happens to
    /// Swift concurrency jobs.
    ///
    /// An attached loop cannot be shut down (calling this on one stops the program): ``detach()``
    /// it.
    public func shutdown() {
        misusePrecondition(native.isOwned, "UVLoop: shutdown() on an attached loop; call detach() on the owner's thread instead")
        let onLoopThread = isOnLoopThread
        guard lifecycle.beginShutdown(onLoopThread: onLoopThread, waking: wake), onLoopThread else { return }
        if engine.isRunning {
            engine.requestDrain()
        } else {
            engine.finishEnding()
            finishIfShutDown(engine)
        }
    }

    /// Detaches UVLoop from an attached loop, on the owner's loop thread.
    ///
    /// Finishes a timer burst that `postBudget` had split across turns, runs everything posted so
    /// far, cancels pending timers, and closes UVLoop's handles. Their
    /// memory is released by libuv's close callbacks, so let the owner's loop turn once
    /// (`uv_run(loop, UV_RUN_NOWAIT)`) before `uv_loop_close`. Thread-pool work still in flight
    /// (operations' workers) is not waited for: each finish runs on a later turn of the owner's
    /// loop, and `uv_loop_close` returns `UV_EBUSY` until the last has run. From this call on,
    /// posting throws ``LoopError/detached``.
    ///
    /// Called from inside one of UVLoop's callbacks on this loop (a posted closure, a timer,
    /// next-iteration work, a chunked loop's body or callbacks, an actor job), the detach
    /// finishes when that callback returns, within the same turn: work posted before the call
    /// still runs first, and the rest of the callback's own work too (the rest of a timer burst,
    /// even past `postBudget`, and of a chunk). Releasing the last reference to an attached
    /// `Loop` on the owner's thread detaches it the same way; releasing it on another thread
    /// stops the program.
    ///
    /// Idempotent. Calling it from another thread than the owner's loop thread, or on a loop
    /// UVLoop owns (shut that down with ``shutdown()``), stops the program with a message that
    /// names the misuse.
    /// - Returns: `true` if this call detached the loop; `false` if it was detached already.
    @discardableResult
    public func detach() -> Bool {
        misusePrecondition(
            !native.isOwned, "UVLoop: detach() on a loop UVLoop owns; call shutdown() instead")
        misusePrecondition(
            isOnLoopThread,
            "UVLoop: Loop.detach() called on another thread than the owner's loop thread; detach on the thread that runs uv_run (post to it)")
        guard lifecycle.beginDetach() else { return false }
        // Inside one of the loop's callbacks the detach finishes when that callback returns.
        if engine.isInCallback { return true }
        engine.finishEnding()
        return true
    }
}
