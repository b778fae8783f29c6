import CLibUV
import Glibc

/// A `uv_signal_t`: one watch of one signal, started once and closed once. Loop thread only.
///
/// libuv installs one process-wide handler per watched signal, which writes each delivery into a
/// pipe of every loop with a watch of that signal; the loop reads the pipe in its poll phase and
/// calls each watch's callback there, on the loop's thread. When the last watch of a signal in
/// the process stops, libuv sets the signal's action back to `SIG_DFL` (not to what was installed
/// before the first watch). A one-shot start (`uv_signal_start_oneshot`) installs the handler with
/// `SA_RESETHAND`, unless a repeating watch of the signal is open: the kernel then restores
/// the default action as it delivers the signal. libuv stops a one-shot handle after its callback.
///
/// Closing is safe at any time, from inside the callback too: libuv delays the close callback
/// (which frees the memory) until the loop has read every delivery already written to its pipe.
struct SignalHandle: NativeIOHandle {
    let handle: LibUVHandle<uv_signal_t>

    /// A handle that calls nothing until its owner sets `onSignal`.
    init(loop: NativeLoop) throws(LoopError) {
        handle = try LibUVHandle("uv_signal_init", initialize: { uv_signal_init(loop.pointer, $0) }, fire: {})
    }

    /// Sets what each delivery calls.
    func onSignal(_ body: @escaping () -> Void) { handle.onFire(body) }

    /// Starts watching `signal`; returns libuv's status (0, or a negative error code).
    func start(_ signal: Int32, oneShot: Bool) -> Int32 {
        if oneShot {
            return uv_signal_start_oneshot(handle.pointer, { handle, _ in LibUVHandle<uv_signal_t>.fire(handle) }, signal)
        }
        return uv_signal_start(handle.pointer, { handle, _ in LibUVHandle<uv_signal_t>.fire(handle) }, signal)
    }

    var isActive: Bool { handle.isActive }

    func ref() { handle.ref() }

    func unref() { handle.unref() }

    /// Stops the watch (libuv restores the default action if it was the process's last watch of
    /// the signal) and closes the handle. Closing twice does nothing.
    func close() { handle.close() }

    /// The C library's real-time signals, `SIGRTMIN...SIGRTMAX` (34...64 with glibc, which keeps
    /// 32 and 33 for its threads). Any thread.
    static var realtimeSignals: ClosedRange<Int32> {
        __libc_current_sigrtmin()...__libc_current_sigrtmax()
    }
}
