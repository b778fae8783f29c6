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
    let accepts = NativeMutex<[Int]>([0, 0])
    let loops = group.loops
    let listeners = try group.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
        guard case .success(let connection) = accepted else { return }
        let index = loops.firstIndex { $0 === connection.loop } ?? 0
        accepts.withLock { $0[index] += 1 }
        connection.close()
    }
    let port = listeners[0].localAddress.port ?? 0
    let clients = try Loop.startThread(name: "clients")
    let connected = ThreadEvent()
    try clients.loop.invoke {
        let left = LoopBound(20, loop: clients.loop)
        for _ in 0..<20 {
            try? clients.loop.connect(to: listeners[0].localAddress) { _ in
                left.value -= 1
                if left.value == 0 { connected.signal() }
            }
        }
    }
    connected.wait()
    while accepts.withLock({ $0.reduce(0, +) }) < 20 { try loops[0].invoke {}; try loops[1].invoke {} }
    clients.shutdown()
    print("  group.listen: \(listeners.count) listeners share port \(port); the kernel spread 20 connections as \(accepts.withLock { $0 }) over the loops")
    for listener in listeners { listener.close() }

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
    monitor.cancel()

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
    group.shutdown()
    print("  group.shutdown() shut both loops down and joined their threads")
}
