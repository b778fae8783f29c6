// A loop in a child process after fork(2).
extension Loop {
    /// Makes the loop usable in a child process after `fork(2)`: call it in the child, on the
    /// thread that called `fork`, before anything else uses the loop.
    ///
    /// ```swift
    /// let child = fork()
    /// if child == 0 {
    ///     try loop.afterFork()
    ///     // the child's own work on the loop
    /// }
    /// ```
    ///
    /// A child starts with its parent's descriptors, which share their kernel objects with the
    /// parent: libuv's epoll instance and UVLoop's wake-ups. Until this call, a wake-up from one
    /// process can wake the other, and a poll in the child can take the parent's events, so one
    /// of them stalls. This calls libuv's `uv_loop_fork` (for an attached loop too: the owner
    /// does not call it again) and gives UVLoop's wake-up descriptors (the loop's, its inboxes',
    /// its wake timer) kernel objects of the child's own.
    ///
    /// What the fork copied carries over: work posted and timers pending at the fork run in
    /// both processes, handles stay open in both (as libuv's do). Supported: a fork on the loop's
    /// thread while no other thread uses the loop (a daemon that attaches and sets up, then
    /// forks its workers). Not supported, as for any fork of a process with threads: a loop
    /// whose thread is another one (``startThread(name:clock:postBudget:)``, a ``LoopGroup``),
    /// which has no thread in the child; posts that other threads were making at the fork;
    /// thread-pool work in flight at the fork, which never completes in the child; Swift
    /// concurrency in the child of a process that used it.
    ///
    /// Any other use of the loop in a child before this call stops the program with a message
    /// saying to call it: the loop's next turn, and every C call on the loop. In a process that
    /// did not fork since the loop was made (or last reset), this does nothing.
    ///
    /// Loop thread only: in the child, that is the thread that forked; called on another thread
    /// it stops the program.
    /// - Throws: ``LoopError/shutDown`` or ``LoopError/detached`` when the loop no longer runs
    ///   (there is nothing of UVLoop's to reset: an owner that forks after a detach calls
    ///   `uv_loop_fork` itself); ``LoopError/libuv(function:code:)`` when `uv_loop_fork` fails or a
    ///   new descriptor cannot be made (`UV_EMFILE`).
    public func afterFork() throws(LoopError) {
        misusePrecondition(
            isOnLoopThread,
            "UVLoop: Loop.afterFork() must run on the loop's thread: fork on the loop's thread and call it in the child there; a loop whose thread is another (Loop.startThread, LoopGroup) cannot go on in a child, whose only thread is the one that forked")
        guard forkState.isStale else { return }
        if lifecycle.handlesClosed { throw lifecycle.refusal }
        try engine.resetAfterFork()
    }

    /// Stops the program when the process is a forked child that has not reset the loop
    /// (``afterFork()``), unless the loop's handles are closed: for the C API's entry points,
    /// whose own inline check (one relaxed load of `forkState`'s two counts) calls it when the
    /// counts differ.
    /// - Parameter call: the call, for the message.
    package func preconditionNotStaleAfterFork(_ call: @autoclosure () -> String) {
        if _slowPath(forkState.isStale) && !lifecycle.handlesClosed { Loop.stopInForkedChild(call()) }
    }
}
