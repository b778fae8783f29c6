/// The check that turns an `async` call that would wait forever on a manual-clock loop into a
/// message saying what to do.
///
/// A loop made with a manual clock by async code (`Loop.manual()` in an `async` test) has the
/// thread the test's task happened to run on; nothing steps it while the task awaits, since
/// stepping is the task's own job and it may resume on another thread. An async call on it that
/// waits for the loop never returns. Whether a call is made so is decided by where the loop was
/// made and from where the call comes, never by timing: on such a loop every async call traps,
/// unless a task the loop runs makes it while the test steps the loop (a task started with the
/// loop as its executor preference), where the step that runs the task also runs what it waits
/// for. Loops made by synchronous code (a synchronous test, a `LoopThread`) are never checked: a
/// task may legitimately wait on them before the test's thread steps.
extension Loop {
    /// Stops the program with a message saying what to do when `operation`, an async call that
    /// waits for the loop's thread, is made on a manual-clock loop that nothing can step while
    /// the caller waits (see the extension's comment). Any thread.
    package func preconditionSteppedWhileAwaiting(
        _ operation: @autoclosure () -> String, file: StaticString = #fileID, line: UInt = #line
    ) {
        guard clockSource == .manual, engine.manualTime.madeInsideATask, native.isOwned, isAcceptingWork else {
            return
        }
        // The loop's thread inside a step: a task the loop runs; the step goes on after it waits.
        if isOnLoopThread, engine.isRunning { return }
        misuseStop(
            "UVLoop: \(operation()) awaited on a manual-clock loop made by async code (Loop.manual() in an async test), "
                + "which nothing steps while the task waits, so the call would never return; in an async test, start the "
                + "loop with Loop.startThread(clock: .manual) and move its time with LoopThread.advanceTime(by:) and "
                + "runUntilIdle() (UVLoopTesting), or make the loop in a synchronous test and step it there",
            file: file, line: line)
    }
}
