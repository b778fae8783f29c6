/// The chunked loops pending on one loop, and the order in which they get the loop's turns.
///
/// ## Where chunks run
/// In the idle phase, from the loop's idle handle, after due timers have fired and posted work
/// has been drained. The idle handle is active exactly while `isPending`; an active idle handle
/// makes libuv poll for I/O with a zero timeout, so every loop iteration runs one chunk and then
/// polls for I/O, runs next-iteration work (check phase), and on the next iteration fires timers
/// and drains posts before the next chunk. When no chunked loop is left, the idle handle stops
/// (unless other work needs it) and the loop sleeps in the kernel again.
///
/// ## Fairness
/// One chunk per loop iteration, taken round-robin from the chunked loops that have begun, each
/// within its own budget: an iteration never holds the loop for more than one chunk, however
/// many chunked loops are pending.
///
/// ## Beginning
/// A chunked loop begins (its progress callback reports the initial state) in the first idle
/// phase after it was started (a start from another thread reaches the loop as posted work),
/// after that phase's chunk. Its first chunk runs in a later iteration, after a poll for I/O, so
/// the initial progress can be shown before any work happens.
final class ChunkScheduler {
    // `active` and `arriving` are read by `isPending` after every callback of the loop. Every
    // access to them is on the loop's thread and ends before any call into a run (the runs'
    // callbacks may start or stop chunked loops re-entrantly), so no two can overlap: they go
    // without the run-time exclusivity check, which the optimizer keeps for them otherwise.
    /// Begun, with chunks left, in round-robin order.
    @exclusivity(unchecked) private var active: [ChunkedLoopRun] = []
    /// Started, waiting to begin.
    @exclusivity(unchecked) private var arriving: [ChunkedLoopRun] = []
    private var beginning: [ChunkedLoopRun] = []
    /// The position in `active` of the run that gets the next chunk.
    private var cursor = 0

    /// The chunked loops waiting to begin or with chunks left.
    var count: Int { active.count + arriving.count }

    /// Whether some chunked loop is waiting to begin or has chunks left.
    var isPending: Bool { !active.isEmpty || !arriving.isEmpty }

    func admit(_ run: ChunkedLoopRun) {
        arriving.append(run)
    }

    /// Runs one chunk of the next chunked loop in turn, then begins the ones that arrived.
    /// Callbacks may start or cancel chunked loops re-entrantly: starts wait in `arriving`.
    func runTurn(_ state: LoopEngine) {
        if !active.isEmpty {
            if cursor >= active.count { cursor = 0 }
            let run = active[cursor]
            let keeps = run.step(state)
            // A callback may have shut the loop down (detach) and emptied `active` meanwhile.
            if cursor < active.count, active[cursor] === run {
                if keeps { cursor += 1 } else { active.remove(at: cursor) }
            }
        }
        if !arriving.isEmpty {
            swap(&arriving, &beginning)
            for run in beginning where run.begin() {
                active.append(run)
            }
            beginning.removeAll(keepingCapacity: true)
        }
    }

    /// Ends every pending chunked loop with `.loopShutDown` (or `.cancelled`, if cancelled first):
    /// at shutdown none is dropped without its completion.
    /// Runs that a re-entrant shutdown interrupts while they begin are in `beginning`.
    func stopAll() {
        while isPending || !beginning.isEmpty {
            let pending = active + beginning + arriving
            active = []
            beginning = []
            arriving = []
            cursor = 0
            for run in pending { run.stopForShutdown() }
        }
    }
}
