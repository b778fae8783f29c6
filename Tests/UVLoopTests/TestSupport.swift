import Dispatch
import Synchronization
@testable import UVLoop

/// Runs `body(i)` for i in 0..<count, each on a new thread (never the caller's), and returns when
/// all have finished (joined).
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let threads = (0..<count).map { index in try! NativeThread.start { body(index) } }
    for thread in threads { thread.join() }
}

/// A thread-safe log for tests that record from several threads.
final class Recorder<Element: Sendable>: Sendable {
    private let storage = NativeMutex<[Element]>([])
    func append(_ element: Element) { storage.withLock { $0.append(element) } }
    var values: [Element] { storage.withLock { $0 } }
}

/// A class whose deinit the tests watch, to prove that captured state is released.
final class Tracked: Sendable {
    let onDeinit: @Sendable () -> Void
    init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }
    deinit { onDeinit() }
}

extension Loop {
    /// Whether libuv's idle handle is active (it forces zero-timeout polls: must be off when idle).
    var idleHandleIsActive: Bool { confined.value.idle.isActive }
}
