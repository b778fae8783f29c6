/// The process-wide loop: the one ``MainLoopActor`` runs on, chosen once per process.
///
/// Two ways to choose it:
/// - **Its own thread (the default).** The first use of ``shared`` (or of `@MainLoopActor`)
///   starts a loop on a new thread named `uvloop-main`, which runs until the process ends.
///   Nothing to set up, and the program's main thread stays free (on Linux, `@MainActor` needs it
///   to drain Dispatch's main queue).
/// - **Any loop you choose, at startup.** Call ``install(_:)`` once, before anything uses the
///   main loop. To make the main thread the loop's thread, as in a C daemon whose `main` runs the
///   event loop, create the loop on the main thread (``Loop/init(clock:postBudget:)``), install
///   it, then call ``Loop/run()`` there: `@MainLoopActor` code then runs on the main thread,
///   inside `run()`. A loop attached from C code (``Loop/attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)``) or started with
///   ``Loop/startThread(name:clock:postBudget:)`` can be installed the same way.
///
/// The choice is final: installing after the main loop was chosen throws
/// ``LoopError/mainLoopAlreadyChosen``. A main loop that shuts down stays the main loop; what
/// `@MainLoopActor` code then does is described under "Shutdown" in ``Loop``.
public enum MainLoop {
    /// The process-wide loop; chooses it (starting its own thread) on first use unless one was
    /// installed. Callable from any thread; every call returns the same loop.
    public static var shared: Loop { chosen }

    /// Makes `loop` the process-wide loop. Call it once, at startup, before anything uses
    /// ``shared`` or `@MainLoopActor`. Callable from any thread.
    /// - Parameter loop: the loop to use; it keeps its own thread.
    /// - Throws: ``LoopError/mainLoopAlreadyChosen`` if a loop was installed already, or if the
    ///   main loop was already chosen by first use.
    public static func install(_ loop: Loop) throws(LoopError) {
        try slot.install(loop)
    }

    /// Whether the process-wide loop has been chosen (installed, or used). Callable from any
    /// thread.
    public static var isChosen: Bool { slot.isChosen }

    static let slot = MainLoopSlot(threadName: "uvloop-main")
    private static let chosen: Loop = slot.resolve()
}

/// Holds the choice of a process-wide loop: empty, installed, or in use (and then final).
final class MainLoopSlot: Sendable {
    private enum State {
        case empty
        case installed(Loop)
        /// In use; the thread is kept when the slot started the loop itself.
        case inUse(Loop, LoopThread?)
    }

    private let state = NativeMutex(State.empty)
    private let threadName: String

    init(threadName: String) {
        self.threadName = threadName
    }

    func install(_ loop: Loop) throws(LoopError) {
        try state.withLock { (state: inout State) throws(LoopError) in
            guard case .empty = state else { throw .mainLoopAlreadyChosen }
            state = .installed(loop)
        }
    }

    var isChosen: Bool {
        state.withLock { state in
            if case .empty = state { return false }
            return true
        }
    }

    /// The loop in use: the installed one, or one started now on a thread of its own.
    func resolve() -> Loop {
        state.withLock { state in
            switch state {
            case .inUse(let loop, _):
                return loop
            case .installed(let loop):
                state = .inUse(loop, nil)
                return loop
            case .empty:
                do {
                    let thread = try Loop.startThread(name: threadName)
                    state = .inUse(thread.loop, thread)
                    return thread.loop
                } catch {
                    fatalError("UVLoop: could not start the main loop's thread: \(error)")
                }
            }
        }
    }
}
