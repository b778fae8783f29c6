import UVLoop

/// A cancelled timer (its captured state released at once), a timer fired early, a repeating
/// timer that cancels itself, and a burst larger than one turn's budget, on real loops with the
/// system clock.
func runTimersSection() throws {
    print("== Timers: cancel handles, fire now, repeating, moving a timeout, a burst over several turns")
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
    try loop.scheduleRepeating(every: .milliseconds(10)) { timer in
        ticks.value += 1
        log.value.append("tick \(ticks.value) at +\(start.duration(to: loop.now)) (fixed rate, 10 ms)")
        if ticks.value == 4 { log.value.append("the callback cancels its own timer: \(timer.cancel())") }
    }
    // An idle timeout that every message pushes back: moved, not cancelled and scheduled again.
    let idle = try loop.schedule(after: .milliseconds(20)) {
        log.value.append("the idle timeout fired at +\(start.duration(to: loop.now)), 20 ms after the last message")
    }
    for message in 1...3 {
        try loop.schedule(after: .milliseconds(5 * message)) {
            log.value.append("message \(message) at +\(start.duration(to: loop.now)) pushes the idle timeout back: \(idle.reschedule(after: .milliseconds(20)))")
        }
    }
    try loop.schedule(after: .milliseconds(45)) { loop.stop() }
    try loop.run()
    for line in log.value { print("  \(line)") }
    loop.shutdown()
    try runSubMillisecondTimers()
    try runTimerBurst()
    print()
}

/// Timers keep nanosecond deadlines and the loop sleeps until the earliest one: a 250 us timer
/// fires a fraction of a millisecond after its deadline, never before it.
private func runSubMillisecondTimers() throws {
    let loop = try Loop()
    let lateness = LoopBound([Duration](), loop: loop)
    @Sendable func chain(_ remaining: Int) {
        let deadline = loop.now.advanced(by: .microseconds(250))
        _ = try? loop.schedule(at: deadline) {
            lateness.value.append(deadline.duration(to: loop.now))
            if remaining > 1 { chain(remaining - 1) } else { loop.stop() }
        }
    }
    try loop.post { chain(20) }
    try loop.run()
    let sorted = lateness.value.sorted()
    let microseconds = { (d: Duration) in d.components.attoseconds / 1_000_000_000_000 + d.components.seconds * 1_000_000 }
    print("  20 timers 250 us apart fired after their deadlines by a median of \(microseconds(sorted[sorted.count / 2])) us"
        + " (never early: \(sorted.first! >= .zero))")
    loop.shutdown()
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
