import UVLoop

/// A cancelled timer (its captured state released at once), a timer fired early, and a repeating
/// timer that cancels itself, on a real loop with the system clock.
func runTimersSection() throws {
    print("== Timers: cancel handles, fire now, repeating")
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
    print()
}
