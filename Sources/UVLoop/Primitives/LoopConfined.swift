/// Storage for state that only the loop's thread reads or writes.
///
/// `@unchecked Sendable` is safe because the value is reached only through `value`, and every
/// caller is on the loop's thread: libuv callbacks (which libuv runs on the thread inside
/// `uv_run`), or public entry points that checked `Loop.isOnLoopThread` first. This is the one
/// place where the type system is told to trust a thread check; `LoopBound` and the loop's own
/// state are built on it.
final class LoopConfined<Value>: @unchecked Sendable {
    var value: Value

    init(_ value: Value) {
        self.value = value
    }
}

/// A loop-confined object that is never replaced, such as the loop's own state.
///
/// `@unchecked Sendable` is safe for the reason given for `LoopConfined`: the object's members are
/// used only on the loop's thread. The reference itself is a `let`, so reaching the object costs no
/// run-time exclusivity check (a `var` would cost one per access, on every post from the loop's
/// thread).
final class LoopConfinedObject<Object: AnyObject>: @unchecked Sendable {
    let value: Object

    init(_ value: Object) {
        self.value = value
    }

    /// Calls `body` with the object, without retaining it: for the loop thread's post path and
    /// every timer schedule and cancel, where a retain and release would be two atomic operations
    /// out of a handful (the optimizer does not see that `value`, a `let` of this holder, outlives
    /// the call). Safe because this holder keeps the object alive for the whole call (`self` is
    /// guaranteed by the caller).
    @inline(__always)
    func withValue<Result>(_ body: (Object) -> Result) -> Result {
        Unmanaged.passUnretained(value)._withUnsafeGuaranteedRef(body)
    }
}
