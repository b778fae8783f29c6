/// Calls `operation`, a synchronous closure isolated to ``MainLoopActor``, from code that is not
/// known to the compiler to be isolated to it.
///
/// Safe only when the caller has just checked that it runs on the main loop's thread (the
/// actor's executor), which is what isolation to the actor means: the cast drops the isolation
/// annotation and nothing else, because a synchronous function's isolation is not part of its
/// calling convention (the standard library's `MainActor.assumeIsolated` casts the same way).
/// ``MainLoopActor/assumeIsolated(_:file:line:)`` is the one caller, and checks first.
@inline(__always)
func callAssumingMainLoopIsolation<T>(_ operation: @MainLoopActor () throws -> T) rethrows -> T {
    try withoutActuallyEscaping(operation) { (isolated: @escaping @MainLoopActor () throws -> T) in
        try unsafeBitCast(isolated, to: (() throws -> T).self)()
    }
}
