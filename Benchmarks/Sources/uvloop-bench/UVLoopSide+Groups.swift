// group_scaling: loop-local work spread over a LoopGroup. Each loop of the group fires `perLoop`
// zero-delay timers in `chains` chains of its own (every fire schedules the next timer of its
// chain on the same loop), so that a unit of work is one `Loop.schedule(after: .zero)` plus its
// fire: the timer queue, the loop's turn and its wake timer, all state of that loop alone. Nothing
// is shared between the loops during a run (each has its own chain state and its own Counter); the
// harness thread only posts the start to each loop and waits on each loop's semaphore.
//
// `uvloop_1loop` is a LoopGroup(loopCount: 1) doing W units, `uvloop_2loops` a LoopGroup(loopCount:
// 2) whose loops do W units each, at the same time. The figure is wall time / total units, so
// uvloop_1loop / uvloop_2loops is the speed-up: 2.0 when the second loop's work costs no time.
//
// `group_scaling_cpu` runs the same and divides the process's CPU time (all threads) instead of
// wall time: it stays the same with 2 loops when nothing they do contends (a shared cache line, a
// lock), whatever else runs on the machine; the wall-clock speed-up also needs two free cores.
import UVLoop

/// One loop's chains: how many fires are still to be scheduled. That loop's thread only (it is
/// made on the harness thread and handed to the loop by the post that starts the run).
final class TimerChains: @unchecked Sendable {
    let loop: Loop
    let fired: Counter
    private var unscheduled: Int

    init(loop: Loop, units: Int, fired: Counter) {
        self.loop = loop
        self.fired = fired
        unscheduled = units
    }

    /// Starts `chains` chains (fewer if there are fewer units). Loop thread.
    func start(chains: Int) {
        for _ in 0..<min(chains, unscheduled) { scheduleNext() }
    }

    private func scheduleNext() {
        unscheduled -= 1
        do {
            _ = try loop.schedule(after: .zero) { [self] in
                if unscheduled > 0 { scheduleNext() }
                fired.add(1)
            }
        } catch {
            preconditionFailure("group_scaling: schedule failed: \(error)")
        }
    }
}

extension UVLoopSide {
    /// `loops` loops of one group, each firing `perLoop` timers in `chains` loop-local chains;
    /// ns per fired timer over all loops: wall-clock ns, or with `cpuTime` the process's CPU ns.
    static func groupScaling(loops: Int, perLoop: Int, chains: Int, cpuTime: Bool = false) -> SessionMaker? {
        return {
            let group = try LoopGroup(loopCount: loops, name: "bench-group")
            return Session(run: {
                // Each loop's state (and its counter) is allocated on that loop's own thread, so
                // that glibc's per-thread arenas keep them apart: allocated side by side here, the
                // two loops' counters shared cache lines, and every fire on one loop evicted the
                // other's (2 loops then cost 1.3-1.7x the CPU per timer of 1).
                let states = try group.loops.map { loop in
                    try loop.invoke { TimerChains(loop: loop, units: perLoop, fired: Counter(target: perLoop)) }
                }
                let counters = states.map(\.fired)
                let clock = cpuTime ? processCPUNs : nowNs
                let t0 = clock()
                for state in states { try state.loop.post { state.start(chains: chains) } }
                for counter in counters { counter.wait() }
                let t1 = clock()
                return Sample(value: Double(t1 - t0) / Double(perLoop * loops), ops: perLoop * loops)
            }, close: { group.shutdown() })
        }
    }
}
