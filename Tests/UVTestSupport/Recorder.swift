import UVLoop

/// A thread-safe log for tests that record from several threads.
public final class Recorder<Element: Sendable>: Sendable {
    private let storage = NativeMutex<[Element]>([])

    public init() {}

    public func append(_ element: Element) { storage.withLock { $0.append(element) } }

    public var values: [Element] { storage.withLock { $0 } }
}

/// A class whose deinit the tests watch, to prove that captured state is released.
public final class Tracked: Sendable {
    let onDeinit: @Sendable () -> Void

    public init(onDeinit: @escaping @Sendable () -> Void) { self.onDeinit = onDeinit }

    deinit { onDeinit() }
}
