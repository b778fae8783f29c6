extension Loop {
    /// Whether C code owns the `uv_loop_t` (attached) rather than UVLoop (for the C API).
    package var isAttached: Bool { !native.isOwned }

    /// Whether the loop keeps its C owner's `uv_run` running while it waits for work posted from
    /// other threads. Loop thread only.
    ///
    /// UVLoop's handles on an attached loop are unreferenced, so they never keep the owner's
    /// `uv_run(loop, UV_RUN_DEFAULT)` from returning. The owner's turns are where UVLoop's work
    /// runs, and libuv turns a loop only while something referenced is active (a server, a
    /// timer, a signal watcher of the owner's, or one of UVLoop's armed timers). An owner whose
    /// loop may have nothing of its own active while other threads post turns this on; work
    /// posted from any thread then runs on the next turns, and `uv_run(UV_RUN_DEFAULT)` returns
    /// only after ``detach()`` or after this is turned off again.
    ///
    /// - Parameter keepsAlive: `true` to keep the owner's loop running; `false` (the default for
    ///   an attached loop) to let it end when nothing of the owner's is active.
    ///
    /// Calling it from another thread than the loop's, or on a loop UVLoop owns (which runs until
    /// ``shutdown()`` anyway), stops the program with a message that names the misuse.
    /// - Throws: ``LoopError/detached`` after ``detach()``.
    public func setKeepsOwnerLoopAlive(_ keepsAlive: Bool) throws(LoopError) {
        misusePrecondition(
            !native.isOwned,
            "UVLoop: setKeepsOwnerLoopAlive(_:) on a loop UVLoop owns; it is for attached loops (an owned loop runs until shutdown())")
        preconditionOnLoopThread("Loop.setKeepsOwnerLoopAlive(_:)")
        try lifecycle.admitHandle()
        guard engine.keepsOwnerLoopAlive != keepsAlive else { return }
        engine.keepsOwnerLoopAlive = keepsAlive
        if keepsAlive { wake.ref() } else { wake.unref() }
    }

    /// Whether `handle` (the address of a `uv_handle_t`) is one of the handles UVLoop has open on
    /// some loop of this process.
    ///
    /// For an owner that walks its loop (`uv_walk`): a loop that ``detach()`` was not called on
    /// before `uv_loop_close` still holds UVLoop's handles, and `uv_loop_close` returns
    /// `UV_EBUSY`. Callable from any thread; the answer is stable only on the loop's thread.
    /// - Parameter handle: the address of a libuv handle.
    /// - Returns: whether UVLoop created the handle and has not finished closing it.
    public static func ownsHandle(_ handle: UnsafeRawPointer) -> Bool {
        OwnHandles.contains(handle)
    }
}
