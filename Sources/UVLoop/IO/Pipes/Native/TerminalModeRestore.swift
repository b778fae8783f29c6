import CLibUV
import Glibc
import Synchronization

/// Puts the terminal back in its normal mode when the process ends while a terminal stream is in
/// raw mode: at `exit` (an `atexit` handler) and when SIGINT, SIGTERM or SIGHUP would end it
/// (a handler that restores the mode, then lets the signal's default action end the process).
///
/// `uv_tty_reset_mode` restores the settings saved when the first terminal left normal mode; it
/// is async-signal-safe. The signal handlers are installed only for signals whose action is still
/// the default: a program that handles them (a signal watch, whose clean-up closes the terminal
/// stream and so restores its mode) keeps its own.
enum TerminalModeRestore {
    private static let installed = Atomic<Bool>(false)

    /// Installs the handlers, once per process. Any thread.
    static func install() {
        guard installed.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        atexit { _ = uv_tty_reset_mode() }
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            var current = sigaction()
            guard sigaction(signal, nil, &current) == 0, current.__sigaction_handler.sa_handler == nil else { continue }
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { signal in
                // Async-signal-safe only: reset the terminal, restore the default action, re-raise.
                _ = uv_tty_reset_mode()
                var fallback = sigaction()
                fallback.__sigaction_handler.sa_handler = nil
                sigemptyset(&fallback.sa_mask)
                _ = sigaction(signal, &fallback, nil)
                _ = raise(signal)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(signal, &action, nil)
        }
    }
}
