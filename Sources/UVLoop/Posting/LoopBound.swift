/// A value confined to a loop's thread: non-`Sendable` state that the loop owns.
///
/// `LoopBound` itself is `Sendable`: any thread may hold it and use the three verbs, which run
/// their closure on the loop's thread with the value (``post(_:)``, `invoke`,
/// ``postNextIteration(_:)``, with the same ordering guarantees as the ``Loop`` methods of the
/// same names). Reading or writing ``value`` directly is allowed on the loop's thread only
/// (checked).
///
/// ```swift
/// let table = LoopBound(TableModel(), loop: loop)
/// try table.post { $0.insert("soon") }                 // later, on the loop's thread
/// let count = try table.invoke { $0.rows.count }       // waits for the loop's thread: 1
/// try table.postNextIteration { $0.insert("next turn") }
/// ```
public final class LoopBound<Value>: Sendable {
    /// The loop whose thread owns the value.
    public let loop: Loop
    private let storage: LoopConfined<Value>

    /// Binds `value` to `loop`'s thread. The value is handed over: the caller keeps no access to it.
    ///
    /// Callable from any thread.
    /// - Parameters:
    ///   - value: the state to confine; from now on only `loop`'s thread touches it.
    ///   - loop: the loop whose thread owns the value.
    public init(_ value: sending Value, loop: Loop) {
        self.loop = loop
        self.storage = LoopConfined(value)
    }

    /// The value. Loop thread only: stops the program with a message naming the misuse elsewhere.
    ///
    /// Mutations happen in place: `bound.value.append(x)` appends to the stored array without
    /// copying it.
    public var value: Value {
        _read {
            loop.preconditionOnLoopThread("LoopBound.value")
            yield storage.value
        }
        _modify {
            loop.preconditionOnLoopThread("LoopBound.value")
            yield &storage.value
        }
    }

    /// Calls `body` with the value, on the loop's thread, right now. Loop thread only (checked:
    /// elsewhere it stops the program with a message naming the misuse).
    /// - Parameter body: reads or changes the value.
    /// - Returns: what `body` returned.
    public func withValue<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        loop.preconditionOnLoopThread("LoopBound.withValue")
        return try body(&storage.value)
    }

    /// Runs `body` with the value soon on the loop's thread (never inline). Callable from any
    /// thread; see ``Loop/post(_:)``.
    /// - Parameter body: reads or changes the value.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) once the loop no longer accepts
    ///   work: `body` will not run.
    public func post(_ body: @escaping @Sendable (inout Value) -> Void) throws(LoopError) {
        try loop.post { [storage] in body(&storage.value) }
    }

    /// Runs `body` with the value on the loop's thread and returns its result; inline on the
    /// loop's thread, otherwise waits for it. Callable from any thread; see
    /// ``Loop/invoke(_:)-63lio``.
    /// - Parameter body: reads or changes the value.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw, or the loop's refusal (then `body` did not run).
    public func invoke<T: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> T) throws -> T {
        try loop.invoke { [storage] in try body(&storage.value) }
    }

    /// Runs `body`, which cannot throw, with the value on the loop's thread and returns its result;
    /// the only error is the loop's own. Callable from any thread; see ``Loop/invoke(_:)-8ih2d``.
    /// - Parameter body: reads or changes the value.
    /// - Returns: what `body` returned.
    /// - Throws: ``LoopError/shutDown`` (or ``LoopError/detached``) if the loop no longer accepts
    ///   work; `body` did not run.
    public func invoke<T: Sendable>(_ body: @escaping @Sendable (inout Value) -> T) throws(LoopError) -> T {
        try loop.invoke { [storage] in body(&storage.value) }
    }

    /// Runs `body` with the value on the loop's thread, suspending the caller until it has run.
    /// Callable from any context; see ``Loop/invoke(_:)-41pf``.
    /// - Parameter body: reads or changes the value.
    /// - Returns: what `body` returned.
    /// - Throws: what `body` threw, or the loop's refusal (then `body` did not run).
    public func invoke<T: Sendable>(_ body: @escaping @Sendable (inout Value) throws -> T) async throws -> T {
        try await loop.invoke { [storage] in try body(&storage.value) }
    }

    /// Runs `body` with the value on the next loop iteration. Callable from any thread; see
    /// ``Loop/postNextIteration(_:)``.
    /// - Parameter body: reads or changes the value.
    /// - Throws: like ``post(_:)``.
    public func postNextIteration(_ body: @escaping @Sendable (inout Value) -> Void) throws(LoopError) {
        try loop.postNextIteration { [storage] in body(&storage.value) }
    }
}
