import Glibc

/// A POSIX signal number, such as ``terminate`` (`SIGTERM`), to watch with
/// ``Loop/watchSignal(_:oneShot:keepsOwnerLoopAlive:handler:)`` or ``Loop/signals(_:keepsOwnerLoopAlive:)``.
///
/// Any number can be written (`Signal(SIGWINCH)`), but only signals that a process may handle
/// safely can be watched: watching `SIGKILL`, `SIGSTOP`, a fault signal (`SIGSEGV`, `SIGBUS`,
/// `SIGFPE`, `SIGILL`), a signal the C library keeps for its threads (32 and 33) or a number out of
/// range throws ``LoopError/invalidArgument(_:)`` with the reason.
public struct Signal: Hashable, Sendable, CustomStringConvertible {
    /// The signal's number, as `kill` and `sigaction` take it.
    public let number: Int32

    /// The signal numbered `number` (a constant of `Glibc`, such as `SIGWINCH`).
    /// - Parameter number: the signal's number.
    public init(_ number: Int32) {
        self.number = number
    }

    /// `SIGHUP`: the terminal hung up; daemons use it for "reload your configuration".
    public static let hangup = Signal(SIGHUP)
    /// `SIGINT`: interrupt from the keyboard (Ctrl-C).
    public static let interrupt = Signal(SIGINT)
    /// `SIGQUIT`: quit from the keyboard (Ctrl-\).
    public static let quit = Signal(SIGQUIT)
    /// `SIGTERM`: the polite request to end, which `kill`, systemd and container runtimes send first.
    public static let terminate = Signal(SIGTERM)
    /// `SIGKILL`: ends a process at once. For sending (``ChildProcess/kill(_:)``): it cannot be
    /// caught, so it cannot be watched.
    public static let kill = Signal(SIGKILL)
    /// `SIGUSR1`: for the program's own use.
    public static let user1 = Signal(SIGUSR1)
    /// `SIGUSR2`: for the program's own use.
    public static let user2 = Signal(SIGUSR2)
    /// `SIGPIPE`: a write to a pipe or socket whose reader has gone.
    public static let brokenPipe = Signal(SIGPIPE)
    /// `SIGCHLD`: a child process ended or stopped.
    public static let childStatusChanged = Signal(SIGCHLD)
    /// `SIGWINCH`: the terminal's window size changed.
    public static let windowSizeChanged = Signal(SIGWINCH)

    /// The real-time signal `SIGRTMIN + offset`. The C library's `SIGRTMIN` is 34 on Linux (glibc
    /// keeps 32 and 33 for its threads) and `SIGRTMAX` is 64.
    /// - Parameter offset: from 0 to `SIGRTMAX - SIGRTMIN`.
    /// - Returns: the signal; an offset past `SIGRTMAX` gives a number that cannot be watched.
    public static func realtime(_ offset: Int32) -> Signal {
        Signal(SignalHandle.realtimeSignals.lowerBound &+ offset)
    }

    /// The signal's name and number, such as `SIGTERM (15)` or `SIGRTMIN+2 (36)`.
    public var description: String {
        if let name = Self.names[number] { return "\(name) (\(number))" }
        let realtime = SignalHandle.realtimeSignals
        if realtime.contains(number) { return "SIGRTMIN+\(number - realtime.lowerBound) (\(number))" }
        return "signal \(number)"
    }

    private static let names: [Int32: String] = [
        SIGHUP: "SIGHUP", SIGINT: "SIGINT", SIGQUIT: "SIGQUIT", SIGILL: "SIGILL", SIGTRAP: "SIGTRAP",
        SIGABRT: "SIGABRT", SIGBUS: "SIGBUS", SIGFPE: "SIGFPE", SIGKILL: "SIGKILL", SIGUSR1: "SIGUSR1",
        SIGSEGV: "SIGSEGV", SIGUSR2: "SIGUSR2", SIGPIPE: "SIGPIPE", SIGALRM: "SIGALRM", SIGTERM: "SIGTERM",
        SIGSTKFLT: "SIGSTKFLT", SIGCHLD: "SIGCHLD", SIGCONT: "SIGCONT", SIGSTOP: "SIGSTOP", SIGTSTP: "SIGTSTP",
        SIGTTIN: "SIGTTIN", SIGTTOU: "SIGTTOU", SIGURG: "SIGURG", SIGXCPU: "SIGXCPU", SIGXFSZ: "SIGXFSZ",
        SIGVTALRM: "SIGVTALRM", SIGPROF: "SIGPROF", SIGWINCH: "SIGWINCH", SIGIO: "SIGIO", SIGPWR: "SIGPWR",
        SIGSYS: "SIGSYS",
    ]

    /// Throws unless a watch may handle this signal, saying why and what to do instead.
    func checkWatchable() throws(LoopError) {
        let realtime = SignalHandle.realtimeSignals
        guard number >= 1, number <= realtime.upperBound else {
            throw LoopError.invalidArgument(
                "signal \(number) is out of range: signals are numbered 1 to \(realtime.upperBound) (SIGRTMAX); use a constant such as Signal.terminate or SIGUSR1")
        }
        switch number {
        case SIGKILL, SIGSTOP:
            throw LoopError.invalidArgument(
                "\(self) cannot be caught: the kernel acts on it without asking the process; watch SIGTERM (.terminate), which kill and service managers send first, to clean up before the end")
        case SIGSEGV, SIGBUS, SIGFPE, SIGILL:
            throw LoopError.invalidArgument(
                "\(self) reports a fault of the thread that caused it, which cannot go on; a watch runs later on the loop's thread, after the faulting instruction has run again, so it cannot be watched: leave it to its default action (a core dump) or to a crash reporter")
        default:
            break
        }
        guard number < 32 || number >= realtime.lowerBound else {
            throw LoopError.invalidArgument(
                "signal \(number) is reserved by the C library for its threads (thread cancellation and set*id calls) and watching it would break them; use SIGUSR1, SIGUSR2 or a real-time signal from SIGRTMIN (\(realtime.lowerBound), Signal.realtime(0)) to SIGRTMAX (\(realtime.upperBound))")
        }
    }
}
