import UVLoop

/// Runs `body(i)` for i in 0..<count, each on a new thread (never the caller's), and returns when
/// all have finished (joined).
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { index in try! NativeThread.start { body(index) } }
    for thread in threads { thread.join() }
}

/// A thread that runs `body` at once and that the test joins later; the join is bounded, so that
/// a thread that never ends fails the test instead of hanging it.
public final class JoinableThread: Sendable {
    private let done = Gate()
    private let thread: NativeThread

    public init(_ body: @escaping @Sendable () -> Void) {
        let done = self.done
        thread = try! NativeThread.start {
            body()
            done.open()
        }
    }

    /// Waits until the body has returned. Call once.
    public func join(file: StaticString = #filePath, line: UInt = #line) {
        if done.pass(file: file, line: line) { thread.join() }
    }
}
