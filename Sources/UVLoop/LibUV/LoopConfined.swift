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
