import CLibUV

// The loop in a child process after fork(2): what `Loop.afterFork()` resets, and the stop of a
// child that uses the loop without it.
extension LoopEngine {
    /// Gives the loop kernel objects of the child's own, in the child, on the loop's thread:
    /// libuv's (`uv_loop_fork`: the epoll instance, its own async and signal descriptors, every
    /// polled descriptor re-registered) and UVLoop's (the wake-up and every inbox's eventfd, the
    /// wake timer's timerfd, renewed behind the same numbers). Each wake-up is then signalled
    /// once, so that flags the parent left saying "a wake-up is pending" meet a wake-up: the loop
    /// drains and re-arms them on its next turn. The timer is armed again for its deadline.
    ///
    /// Everything else carries over as the fork copied it: work posted and timers pending at the
    /// fork run in both processes, as libuv's own timers and handles do.
    func resetAfterFork() throws(LoopError) {
        let status = uv_loop_fork(native.pointer)
        guard status == 0 else { throw .libuv(status, "uv_loop_fork") }
        let eventfds = try native.renewOwnWakeDescriptors(excluding: ioHandles.watchedDescriptors)
        if let deadline = armedDeadline { wakeTimer.start(deadline: deadline) }
        for fd in eventfds { shim_eventfd_signal(fd) }
        forkState.reset()
    }

    /// Stops a child process that uses the loop without ``Loop/afterFork()``: its next poll would
    /// wait on the parent's epoll instance and take the parent's wake-ups (or lose its own).
    func stopInForkedChild(_ what: String) -> Never {
        Loop.stopInForkedChild(what)
    }
}

extension Loop {
    /// The misuse message for a loop used in a forked child before ``afterFork()``.
    static func stopInForkedChild(_ what: String, file: StaticString = #fileID, line: UInt = #line) -> Never {
        misuseStop(
            "UVLoop: \(what) in a child process of fork(2) whose loop was not reset for the child (its epoll instance and wake-ups are still the parent's); call uvloop_after_fork(l) (Loop.afterFork() in Swift) in the child first, on the thread that forked",
            file: file, line: line)
    }
}
