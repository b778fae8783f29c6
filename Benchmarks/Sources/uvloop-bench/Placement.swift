// Where the kernel puts a round trip's threads, fixed for the `_one_cpu` rows.
//
// A blocking round trip between two threads that both sleep has two stable shapes on a machine
// with a free CPU: both threads on one CPU (each wake-up a context switch), or one thread on each
// (each wake-up wakes an idle CPU, which on a VM without halt polling goes through the host).
// Which one a run lands in is the scheduler's choice, made once near the start and kept; so the
// unpinned rows compare implementations that may run in different shapes. The `_one_cpu` rows put
// every thread of the process on CPU 0 for the timed run (threads made meanwhile inherit it), so
// that every implementation is measured in the same shape. Benchmarks/README.md has the figures.
// The pinning itself is C (cpeers_placement.c): Swift's Glibc does not export sched_setaffinity.
import CPeers

/// `make`'s session with every thread of the process on CPU 0 while it is made and while each
/// run is timed (the other impls of the case run unpinned in between).
func onOneCPU(_ make: SessionMaker?) -> SessionMaker? {
    guard let make else { return nil }
    return {
        _ = cp_placement_one_cpu()
        defer { _ = cp_placement_restore() }
        let session = try make()
        return Session(
            run: {
                _ = cp_placement_one_cpu()
                defer { _ = cp_placement_restore() }
                return try session.run()
            }, close: session.close)
    }
}
