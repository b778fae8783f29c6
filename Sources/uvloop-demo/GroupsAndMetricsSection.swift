import UVLoop

/// Blocks the calling thread for `duration`: a callback that holds its loop up.
private func spin(for duration: Duration) {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: duration)
    while clock.now < end {}
}

/// A group of loops (round-robin, a loop's own loop), listeners on one port spread over the
/// group, a loop's metrics and stall reports, its event-loop delay, and its time as a Swift
/// `Clock`.
func runGroupsAndMetricsSection() throws {
    print("== Many loops, and a loop's health")
    let group = try LoopGroup(loopCount: 2, name: "demo")
    let first = group.next()
    let second = group.next()
    print("  a group of \(group.loops.count) loops on threads of their own; next() goes round-robin: \(first !== second), then back to the first: \(group.next() === first)")
    let own = try second.invoke { group.any() === second }
    print("  any() on one of the group's threads is that thread's own loop: \(own)")

    // One listener per loop on the same port (SO_REUSEPORT): the kernel spreads connections.
    var port = 0
    var listeners: [StreamListener] = []
    for loop in group.loops {
        let chosen = port
        listeners.append(try loop.invoke { () throws(LoopError) -> StreamListener in
            try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: chosen), reusePort: true) { accepted in
                if case .success(let connection) = accepted { connection.close() }
            }
        })
        port = listeners.last?.localAddress.port ?? 0   // the first picks a port, the others join it
    }
    print("  \(listeners.count) listeners, one per loop, share port \(port)")
    for (loop, listener) in zip(group.loops, listeners) { try loop.invoke { listener.close() } }

    let loop = group.loops[0]
    let stalls = NativeMutex<[LoopStall]>([])
    try loop.setStallHandler(threshold: .milliseconds(20)) { stall in stalls.withLock { $0.append(stall) } }
    let monitor = try loop.monitorDelay(resolution: .milliseconds(1))
    let settled = ThreadEvent()
    try loop.schedule(after: .milliseconds(20)) { settled.signal() }   // 20 ms of ordinary turns
    settled.wait()
    let before = loop.metrics()
    try loop.invoke { spin(for: .milliseconds(30)) }       // a callback that holds the loop up
    while stalls.withLock({ $0.isEmpty }) { try loop.invoke {} }       // its turn's end is reported
    let after = loop.metrics()
    print("  metrics, read from this thread: \(after.iterations - before.iterations) turns, busy \(after.busyTime - before.busyTime), utilization \(Int(after.utilization(since: before) * 100))% since the first reading")
    if let stall = stalls.withLock({ $0.first }) {
        print("  the stall handler reported a turn busy for \(stall.duration) that ran \(stall.postedJobs) posted job(s)")
    }
    let delays = monitor.histogram()
    print("  event-loop delay over \(delays.count) samples: p50 \(delays.percentile(0.5)), max \(delays.maximum) (the 30 ms callback)")
    monitor.stop()

    let clock = loop.clock
    let start = clock.now
    let slept = NativeMutex<Duration?>(nil)
    let done = ThreadEvent()
    Task {
        try await Task.sleep(for: .milliseconds(5), clock: clock)   // Swift's Task.sleep on the loop's timers
        slept.withLock { $0 = start.duration(to: clock.now) }
        done.signal()
    }
    done.wait()
    print("  Task.sleep(for: 5 ms, clock: loop.clock) woke after \(slept.withLock { $0 } ?? .zero) of loop time")
    try group.shutdown()
    print("  group.shutdown() shut both loops down and joined their threads")
}
