extension Loop {
    /// Runs the loop on its thread until ``stop()`` or ``shutdown()``.
    ///
    /// Running out of work does not end `run()`: other threads may post at any time, and the loop
    /// sleeps in the kernel until they do. After ``shutdown()`` the loop is closed when `run()`
    /// returns.
    /// Calling it from another thread than the loop's, from inside one of the loop's own
    /// callbacks (`uv_run` is not re-entrant), or on an attached loop (its owner runs it) stops the
    /// program with a message that names the misuse.
    /// - Throws: ``LoopError/shutDown`` once the loop has shut down.
    public func run() throws(LoopError) {
        let engine = try enterRun("run()")
        defer { engine.isRunning = false }
        native.runUntilStopped()
        finishIfShutDown(engine)
    }

    /// Runs one loop iteration without blocking for I/O or time, on the loop's thread.
    ///
    /// For a loop that a test or an embedding program steps instead of running it: timers due
    /// by now fire, posted work runs, and next-iteration work runs after a poll for I/O that does
    /// not block.
    /// - Returns: whether work is ready to run right away (posted work, due timers,
    ///   next-iteration work or a pending chunked loop), that is, whether another step would do
    ///   something.
    /// - Throws: like ``run()``.
    @discardableResult
    public func runOnce() throws(LoopError) -> Bool {
        let engine = try enterRun("runOnce()")
        defer { engine.isRunning = false }
        native.runNoWait()
        finishIfShutDown(engine)
        return !lifecycle.handlesClosed && engine.hasReadyWork
    }

    /// Steps the loop until nothing is ready: no posted work, no due timer, no next-iteration
    /// work, no pending chunked loop (which runs to its end), and no I/O. Does not wait for timers
    /// that are not yet due.
    ///
    /// I/O counts as follows, so that code talking to itself over the loop's own sockets settles
    /// in one call (a client and a server of the same loop: connect, accept, request, reply):
    /// - the loop keeps stepping while a step runs a callback of a connection, listener, datagram
    ///   socket or other handle, and stops after a step in which none ran and nothing was ready,
    ///   since what one step writes to a socket of this loop is read in the next (a descriptor
    ///   watch's readiness does not count: it repeats for as long as the descriptor stays ready);
    /// - it waits for file-system operations, file transfers and name lookups in flight on
    ///   libuv's thread pool (a blocked disk or a slow DNS server makes it wait that long, and an
    ///   open or read of a named pipe or terminal waits until the other end acts: don't step a
    ///   loop with one of those pending);
    /// - it does not wait for anything else outside the process: a peer in another process or
    ///   thread, a connect to another host, a child's exit, or thread-pool work of your own.
    ///   Wait for those with their own completion, then call it again.
    ///
    /// Work that re-posts itself forever, or I/O that never stops arriving, keeps this from
    /// returning; `maxIterations` bounds it.
    /// - Parameter maxIterations: the most iterations to run.
    /// - Returns: the number of iterations run.
    /// - Throws: like ``run()``.
    @discardableResult
    public func runUntilIdle(maxIterations: Int = .max) throws(LoopError) -> Int {
        var iterations = 0
        var quietSteps = 0
        while iterations < maxIterations {
            iterations += 1
            let callbacksBefore = engine.ioCallbacksRun
            let ready = try runOnce()
            if ready || engine.ioCallbacksRun != callbacksBefore {
                quietSteps = 0
            } else if engine.ioHandles.poolRequestsInFlight > 0, !lifecycle.handlesClosed {
                quietSteps = 0
                try runOnceWaiting()
            } else {
                // One quiet step settles a loop without I/O handles; with them, a second one reads
                // what the first wrote.
                quietSteps += 1
                if quietSteps == 2 || engine.ioHandles.isEmpty || lifecycle.handlesClosed { break }
            }
        }
        return iterations
    }

    /// What a test waiting for a loop run by its own thread to settle looks at, once per turn
    /// (`LoopThread.runUntilIdle()` in UVLoopTesting): the I/O callbacks run so far, and whether
    /// work is ready or pool requests are in flight. Loop thread only.
    package var settlingProbe: (ioCallbacksRun: UInt64, busy: Bool, hasIOHandles: Bool) {
        preconditionOnLoopThread("LoopThread.runUntilIdle()")
        return (engine.ioCallbacksRun, engine.hasReadyWork || engine.ioHandles.poolRequestsInFlight > 0, !engine.ioHandles.isEmpty)
    }

    /// One iteration that waits in the poll until something happens (for `runUntilIdle`).
    private func runOnceWaiting() throws(LoopError) {
        let engine = try enterRun("runUntilIdle()")
        defer { engine.isRunning = false }
        native.runOnceWaiting()
        finishIfShutDown(engine)
    }

    func enterRun(_ operation: String) throws(LoopError) -> LoopEngine {
        misusePrecondition(
            isOnLoopThread,
            "UVLoop: Loop.\(operation) called on another thread than the loop's; run a loop on the thread that created it, or start it with Loop.startThread")
        misusePrecondition(
            native.isOwned, "UVLoop: Loop.\(operation) on an attached loop; its owner runs it with uv_run")
                misusePrecondition(
            !engine.isRunning,
            "UVLoop: Loop.\(operation) called from inside one of the loop's own callbacks (the loop is not re-entrant); return from the callback, and call stop() to make run() return")
        try lifecycle.admitInline()
        engine.isRunning = true
        return engine
    }

    func finishIfShutDown(_ engine: LoopEngine) {
        guard lifecycle.handlesClosed, native.isOwned else { return }
        let status = native.closeOwned()
        misusePrecondition(status == 0, "UVLoop: uv_loop_close failed after shutdown: \(LoopError.libuv(status, "uv_loop_close"))")
    }

    /// Makes ``run()`` return after the current turn; the loop stays open and keeps its work.
    /// Callable from any thread.
    ///
    /// Calling ``run()`` again continues with the work the loop kept.
    public func stop() {
        let onLoopThread = isOnLoopThread
        // A loop that is shutting down, shut down or detached has nothing to stop.
        guard lifecycle.requestStop(onLoopThread: onLoopThread, waking: wake) else { return }
        if onLoopThread { engine.requestDrain() }
    }
}
