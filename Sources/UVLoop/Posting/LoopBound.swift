/// A value confined to a loop's thread: non-`Sendable` state that the loop owns.
///
/// `LoopBound` itself is `Sendable`: any thread may hold it and use the three verbs, which run
/// their closure on the loop's thread with the value (`post`, `invoke`, `postNextIteration`, with
/// the same ordering guarantees as the `Loop` methods of the same names). Reading or writing
/// `value` directly is allowed on the loop's thread only (checked).
///
/// ```swift
/// let table = LoopBound(TableModel(), loop: loop)
/// try table.post { $0.setEditing(true, animated: true) }   // "invokeOnMainThread"
/// let rows = try table.invoke { $0.rowCount }               // "…AndWaitUntilDone"
/// try table.postNextIteration { $0.insertRows([3]) }        // "queueOnMainThread"
/// ```
public final class LoopBound<Value>: Sendable {
    /// The loop whose thread owns the value.
    public let loop: Loop
    private let storage: LoopConfined<Value>

    /// Binds `value` to `loop`'s thread. The value is handed over: the caller keeps no access to it.
    public init(_ value: sending Value, loop: Loop) {
        self.loop = loop
        self.storage = LoopConfined(value)
    }

    /// The value. Loop thread only: stops the program with a message naming the misuse elsewhere.
    public var value: Value {
        get {
            loop.preconditionOnLoopThread("LoopBound.value")
            return storage.value
        }
        set {
            loop.preconditionOnLoopThread("LoopBound.value")
            storage.value = newValue
        }
    }

    /// Calls `body` with the value, on the loop's thread, right now. Loop thread only (checked).
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        loop.preconditionOnLoopThread("LoopBound.withValue")
        return try body(&storage.value)
    }

    /// Runs `body` with the value soon on the loop's thread (never inline). See `Loop.post`.
    public func post(_ body: @escaping @Sendable (inout Value) -> Void) throws(LoopError) {
        try loop.post { [storage] in body(&storage.value) }
    }

    /// Runs `body` with the value on the loop's thread and returns its result; inline on the
    /// loop's thread, otherwise waits for it. See `Loop.invoke`.
    public func invoke<T: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> T) throws -> T {
        try loop.invoke { [storage] in try body(&storage.value) }
    }

    /// Runs `body`, which cannot throw, with the value on the loop's thread and returns its result;
    /// the only error is the loop's own. See `Loop.invoke`.
    public func invoke<T: Sendable>(_ body: @escaping @Sendable (inout Value) -> T) throws(LoopError) -> T {
        try loop.invoke { [storage] in body(&storage.value) }
    }

    /// Runs `body` with the value on the loop's thread, suspending the caller until it has run.
    public func invoke<T: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> T) async throws -> T {
        try await loop.invoke { [storage] in try body(&storage.value) }
    }

    /// Runs `body` with the value on the next loop iteration. See `Loop.postNextIteration`.
    public func postNextIteration(_ body: @escaping @Sendable (inout Value) -> Void) throws(LoopError) {
        try loop.postNextIteration { [storage] in body(&storage.value) }
    }
}
