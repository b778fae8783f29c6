/// What an operation produced: a value or an error (never both), and whether it was cancelled.
///
/// An outcome has one of three shapes:
/// - finished: ``value`` or ``error`` set, ``isCancelled`` false;
/// - cancelled while running: the worker finished anyway, so ``value`` or ``error`` is set, and
///   ``isCancelled`` is true;
/// - cancelled before it started: the worker never ran, so neither is set (``result`` is nil),
///   and ``isCancelled`` is true.
///
/// A transform receives the outcome `inout` and may change it; setting ``value`` clears ``error``
/// and setting ``error`` clears ``value``, so it stays one or the other.
public struct Outcome<Value: Sendable>: Sendable {
    /// The worker's value or error; nil when no worker ran (the operation was cancelled first).
    public var result: Result<Value, any Error>?
    /// Whether the operation was cancelled before it finished (see the type's description).
    public var isCancelled: Bool

    /// An outcome with `result` (nil when no worker ran) and the cancelled flag.
    /// - Parameters:
    ///   - result: the worker's value or error; nil when no worker ran.
    ///   - isCancelled: whether the operation was cancelled before it finished.
    @inlinable
    public init(result: Result<Value, any Error>?, isCancelled: Bool = false) {
        self.result = result
        self.isCancelled = isCancelled
    }

    /// The value, if the operation produced one. Setting a value replaces any error; setting nil
    /// clears a value (an error stays).
    @inlinable
    public var value: Value? {
        get {
            guard case .success(let value) = result else { return nil }
            return value
        }
        set {
            if let newValue {
                result = .success(newValue)
            } else if case .success = result {
                result = nil
            }
        }
    }

    /// The error, if the operation failed. Setting an error replaces any value; setting nil
    /// clears an error (a value stays).
    @inlinable
    public var error: (any Error)? {
        get {
            guard case .failure(let error) = result else { return nil }
            return error
        }
        set {
            if let newValue {
                result = .failure(newValue)
            } else if case .failure = result {
                result = nil
            }
        }
    }

    /// The value, or the error thrown; `CancellationError` when no worker ran.
    /// - Returns: the value, when there is one.
    /// - Throws: the outcome's error; `CancellationError` when ``result`` is nil.
    @inlinable
    public func get() throws -> Value {
        guard let result else { throw CancellationError() }
        return try result.get()
    }

    /// The same outcome with its value transformed (errors and the cancelled flag carry over).
    /// - Parameter transform: called with the value, if there is one.
    /// - Returns: the new outcome.
    public func map<NewValue: Sendable>(_ transform: (Value) throws -> NewValue) rethrows -> Outcome<NewValue> {
        switch result {
        case .success(let value): return Outcome<NewValue>(result: .success(try transform(value)), isCancelled: isCancelled)
        case .failure(let error): return Outcome<NewValue>(result: .failure(error), isCancelled: isCancelled)
        case nil: return Outcome<NewValue>(result: nil, isCancelled: isCancelled)
        }
    }

    /// The outcome with its value type erased, as a composite keeps it.
    var erased: Outcome<any Sendable> { map { $0 } }
}

extension Outcome: CustomStringConvertible {
    /// For example `value 2`, `error timedOut (cancelled)`, `no result (cancelled)`.
    public var description: String {
        let base: String
        switch result {
        case .success(let value): base = "value \(value)"
        case .failure(let error): base = "error \(error)"
        case nil: base = "no result"
        }
        return isCancelled ? base + " (cancelled)" : base
    }
}
