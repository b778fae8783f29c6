/// A global actor that runs on the process-wide loop, ``MainLoop/shared``: annotate code with
/// `@MainLoopActor` to run it on that loop's thread, as `@MainActor` runs code on the main thread.
///
/// ```swift
/// @MainLoopActor final class Session {
///     var requests = 0
///     func handle() { requests += 1 }   // always on the main loop's thread
/// }
/// ```
/// From any other context, calls are awaited and hop onto the loop; closures posted to the main
/// loop (and its timer callbacks) are already on its thread and can enter the actor synchronously
/// with ``assumeIsolated(_:file:line:)``. Steps of `@MainLoopActor` code are ordered with the
/// loop's posts as described under "Ordering" in ``Loop``.
///
/// Which loop and thread this is, and how to choose them at startup: see ``MainLoop``.
@globalActor
public actor MainLoopActor {
    /// The actor; its executor is ``MainLoop/shared``, chosen when the actor is first used.
    public static let shared = MainLoopActor()

    /// The loop this actor runs on: ``MainLoop/shared``.
    public nonisolated let loop: Loop

    private init() {
        loop = MainLoop.shared
    }

    /// The main loop's executor: ``Loop/unownedExecutor`` of ``MainLoop/shared``.
    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        loop.unownedExecutor
    }

    /// Runs `operation` isolated to the actor, synchronously, when the caller is on the main loop's
    /// thread (posted work, timer callbacks, `@MainLoopActor` code); stops the program otherwise.
    /// - Parameters:
    ///   - operation: the code to run isolated to the actor.
    ///   - file: the file reported when the check fails.
    ///   - line: the line reported when the check fails.
    /// - Returns: what `operation` returned.
    public static func assumeIsolated<T: Sendable>(
        _ operation: @MainLoopActor () throws -> T, file: StaticString = #fileID, line: UInt = #line
    ) rethrows -> T {
        // UVLoop's own check, not the actor's preconditionIsolated: a misuse ends with abort()
        // (SIGABRT) and this message, not with the standard library's trap (SIGILL).
        misusePrecondition(
            shared.loop.isIsolatingCurrentContext() == true,
            "UVLoop: MainLoopActor.assumeIsolated called off the main loop's thread; use await or post to get there",
            file: file, line: line)
        // The check above proved that we are isolated to the actor, which the type system cannot see.
        return try callAssumingMainLoopIsolation(operation)
    }

    /// Runs `body` on the main loop's thread and returns its value; awaits the hop when needed.
    /// - Parameters:
    ///   - resultType: the type of `body`'s value; usually inferred.
    ///   - body: the code to run isolated to the actor.
    /// - Returns: what `body` returned.
    public static func run<T: Sendable>(
        resultType: T.Type = T.self, body: @MainLoopActor @Sendable () throws -> T
    ) async rethrows -> T {
        try await body()
    }
}
