import UVLoop

/// Runs `body(i)` for i in 0..<count, each on a new thread (never the caller's), and returns when
/// all have finished (joined).
public func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { index in try! NativeThread.start { body(index) } }
    for thread in threads { thread.join() }
}
