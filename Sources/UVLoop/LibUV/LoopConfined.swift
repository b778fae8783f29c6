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

/// A loop-thread-only object that `Sendable` types hold: `LoopConfined` for a reference that never
/// changes. Being a `let`, reaching the object costs no run-time exclusivity check (a class's `var`
/// costs one per access, about 75 instructions: a sixth of a timer's schedule+cancel, callgrind).
///
/// `@unchecked Sendable` is safe for the reason `LoopConfined` is: `value` is used on the loop's
/// thread only (every caller either runs in a libuv callback or checked `Loop.isOnLoopThread`).
final class LoopConfinedObject<Object: AnyObject>: @unchecked Sendable {
    let value: Object

    init(_ value: Object) {
        self.value = value
    }

    /// Calls `body` with the object, minus the retain and release the optimizer otherwise puts
    /// around a call that may release objects: it does not see that `value`, a `let` of this
    /// object, which the caller holds, outlives the call. That pair is 2 atomic operations on every
    /// timer schedule and cancel. `Unmanaged` is safe here for that same reason: `value` cannot be
    /// released while `self` is alive, and the caller keeps `self` alive across the call.
    @inline(__always)
    func withValue<Result>(_ body: (Object) -> Result) -> Result {
        Unmanaged.passUnretained(value)._withUnsafeGuaranteedRef(body)
    }
}
