import UVLoop

/// A thread-safe log for tests that record from several threads, in the order the appends
/// happened (behind a lock ThreadSanitizer can see).
public final class Recorder<Element: Sendable>: Sendable {
    private let storage = NativeMutex<[Element]>([])

    public init() {}

    public func append(_ element: Element) { storage.withLock { $0.append(element) } }

    public var values: [Element] { storage.withLock { $0 } }
}
