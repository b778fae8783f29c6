import Glibc
import Synchronization

/// SIGPIPE, which the kernel sends a process that writes to a socket whose peer has gone: libuv
/// writes with `write`/`writev`, which do not suppress it, and its default action ends the process.
///
/// The first stream a process opens makes SIGPIPE ignored, unless the program has installed a
/// handler or ignores it already; a write to a closed peer then fails with `EPIPE` instead.
enum BrokenPipeSignal {
    private static let checked = Atomic<Bool>(false)

    /// Ignores SIGPIPE if its action is still the default. Any thread; the check runs once.
    static func ignoreUnlessHandled() {
        guard !checked.load(ordering: .acquiring) else { return }
        guard checked.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing).exchanged else {
            return
        }
        var current = sigaction()
        guard sigaction(SIGPIPE, nil, &current) == 0 else { return }
        // `__sigaction_handler` is a union; SIG_DFL is the null handler.
        if current.__sigaction_handler.sa_handler == nil {
            var ignore = sigaction()
            ignore.__sigaction_handler.sa_handler = SIG_IGN
            sigemptyset(&ignore.sa_mask)
            _ = sigaction(SIGPIPE, &ignore, nil)
        }
    }
}
