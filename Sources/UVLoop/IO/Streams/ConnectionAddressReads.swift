import Synchronization

/// What a loop's connections share so that their addresses can be read from the descriptor on
/// any thread: a read on another thread than the loop's never reaches a descriptor the loop's
/// thread has closed, or whose number the kernel has given to another socket since.
///
/// - A read on another thread (`readOffLoopThread`) first marks the loop (`offLoopThread`, once
///   and for good), then holds `lock` while it checks whether the addresses are kept and, if
///   not, reads and keeps them.
/// - The loop's thread, before it closes a descriptor whose addresses nobody has kept
///   (`keepBeforeClosing`), reads and keeps them, then looks at the mark: if set, it takes and
///   releases `lock`, which waits for a read on another thread that is under way.
///
/// Keeping and the mark are sequentially consistent: if the loop's thread misses the mark, the
/// other thread marked after it, so that thread's check (after its mark) finds the addresses
/// kept and reads nothing; if the loop's thread sees the mark, the lock makes it wait for that
/// read, or makes the read come after the keeping. On a loop whose connections' addresses no
/// other thread reads, closing a connection takes no lock.
final class ConnectionAddressReads: Sendable {
    private let lock = NativeMutex<Void>(())
    private let offLoopThread = Atomic<Bool>(false)

    /// Runs `read` (which checks whether the addresses are kept, and reads and keeps them if not)
    /// on another thread than the loop's.
    func readOffLoopThread<Result>(_ read: () -> Result) -> Result {
        offLoopThread.store(true, ordering: .sequentiallyConsistent)
        return lock.withLock { _ in read() }
    }

    /// Runs `keep` (which reads and keeps the addresses) on the loop's thread, before the
    /// descriptor is closed, then waits for a read on another thread that may be under way.
    func keepBeforeClosing(_ keep: () -> Void) {
        keep()
        if offLoopThread.load(ordering: .sequentiallyConsistent) { lock.withLock { _ in } }
    }
}
