import UVLoop

/// A cancelled timer (its captured state released at once), a timer fired early, a repeating
/// timer that cancels itself, and a burst larger than one turn's budget, on real loops with the
/// system clock.
func runTimersSection() throws {
    print("== Timers: cancel handles, fire now, repeating, a burst over several turns")
    let loop = try Loop()
    let log = LoopBound([String](), loop: loop)
    let start = loop.now

    final class Resource: Sendable {
        deinit { print("  the cancelled timer's captured resource was released at cancel time") }
    }
    var resource: Resource? = Resource()
    let cancelled = try loop.schedule(after: .seconds(10)) { [resource] in _ = resource }
    resource = nil
    print("  cancel() of a pending timer prevented its run: \(cancelled.cancel()); a second cancel(): \(cancelled.cancel())")

    let early = try loop.schedule(after: .seconds(5)) { log.value.append("fired early, at once") }
    print("  fire() of a 5 s timer ran it now: \(early.fire()); again: \(early.fire())")
    let copy = early
    print("  a handle is a value: a copy is the same timer (\(copy == early)), inert once it ran: cancel() \(copy.cancel())")

    let ticks = LoopBound(0, loop: loop)
    let repeating = try loop.scheduleRepeating(every: .milliseconds(10)) {
        ticks.value += 1
        log.value.append("tick \(ticks.value) at +\(start.duration(to: loop.now)) (fixed rate, 10 ms)")
    }
    try loop.schedule(after: .milliseconds(45)) {
        log.value.append("cancel the repeating timer: \(repeating.cancel())")
        loop.stop()
    }
    try loop.run()
    for line in log.value { print("  \(line)") }
    loop.shutdown()
    try runTimerBurst()
    print()
}

/// More timers due at once than one turn's budget: they fire over several turns, in order, and
/// work they queue runs in between.
private func runTimerBurst() throws {
    let loop = try Loop(postBudget: 1_000)
    let fired = LoopBound(0, loop: loop)
    let inOrder = LoopBound(true, loop: loop)
    let log = LoopBound([String](), loop: loop)
    let due = loop.now.advanced(by: .milliseconds(5))
    for i in 0..<2_500 {
        try loop.schedule(at: due) {
            if i != fired.value { inOrder.value = false }
            fired.value += 1
            if i == 0 {
                try? loop.post { log.value.append("a post queued by the first timer ran after \(fired.value) timers") }
                try? loop.postNextIteration { log.value.append("after the next poll for I/O, \(fired.value) had fired") }
            }
            if i == 2_499 { loop.stop() }
        }
    }
    try loop.run()
    print("  2,500 timers due at once, postBudget 1,000: \(fired.value) fired, in schedule order: \(inOrder.value)")
    for line in log.value { print("  \(line)") }
    loop.shutdown()
}
