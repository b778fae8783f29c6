/// A reference to an object that only the loop's thread uses, held inline by a `Sendable` owner:
/// what `LoopConfinedObject` offers, without an object of its own. A type made many times (a
/// connection) keeps one allocation fewer this way.
///
/// `@unchecked Sendable` is safe for the reason given for `LoopConfined`: the object is reached
/// only through `value`, and every caller is on the loop's thread (libuv callbacks, or entry
/// points that checked `Loop.isOnLoopThread` first, or jobs posted there), except for reads of
/// the object's `let` properties set in its `init`, before the owner was made (a connection's
/// `loop`): no thread changes those, and they reach other threads with the owner. The reference
/// itself is a `let`, so copying this value across threads only retains and releases the object,
/// which is atomic.
struct LoopConfinedReference<Object: AnyObject>: @unchecked Sendable {
    let value: Object

    init(_ value: Object) {
        self.value = value
    }

    /// Calls `body` with the object, not retained: see `LoopConfinedObject.withValue`. Safe because
    /// this value's owner keeps the object alive for the whole call (`self` is guaranteed by the
    /// caller).
    @inline(__always)
    func withValue<Result>(_ body: (Object) -> Result) -> Result {
        Unmanaged.passUnretained(value)._withUnsafeGuaranteedRef(body)
    }
}
