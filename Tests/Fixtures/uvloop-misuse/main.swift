// uvloop-misuse: commits the misuse of UVLoop's API named by its argument, so that
// scripts/check-misuse-messages can check, in a release build, that the program stops with a
// message naming what was misused. Not a tool for users.
import CLibUV
import UVEvents
import Synchronization
import UVLoop
import UVLoopTesting
#if canImport(Glibc)
import Glibc
#endif

let cases: [String: () throws -> Void] = simulatedNetworkCases().merging([
    "bound-value-off-thread": {
        let loop = try Loop()
        let bound = LoopBound([1, 2, 3], loop: loop)
        onAnotherThread { _ = bound.value.count }
    },
    "registry-target-off-thread": {
        let loop = try Loop()
        let registry = EventRegistry(loop: loop)
        onAnotherThread { _ = registry.target }
    },
    "shutdown-attached-loop": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.attach(cLoop)
        loop.shutdown()
    },
    "attached-loop-released-on-another-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let holder = LoopHolder(try Loop.attach(cLoop))
        onAnotherThread { holder.release() }
    },
    "loop-with-work-released-on-another-thread": {
        let holder = LoopHolder(try Loop())
        try holder.loop.withLock { try $0!.post {} }
        onAnotherThread { holder.release() }
    },
    "listen-off-thread": {
        let loop = try Loop()
        let address = try SocketAddress(ip: "127.0.0.1", port: 0)
        onAnotherThread { _ = try? loop.listen(on: address) { _ in } }
    },
    "listen-descriptor-off-thread": {
        let loop = try Loop()
        onAnotherThread { _ = try? loop.listen(descriptor: 0, ownership: .borrow) { _ in } }
    },
    "activated-listeners-off-thread": {
        let loop = try Loop()
        onAnotherThread { _ = try? loop.activatedListeners { _ in } }
    },
    "terminal-mode-off-thread": {
        let loop = try Loop()
        let (reader, _) = try loop.makePipe()
        onAnotherThread { try? reader.setTerminalMode(.raw) }
    },
    "send-descriptor-off-thread": {
        let loop = try Loop()
        let (_, writer) = try loop.makePipe()
        onAnotherThread { try? writer.sendDescriptor(0) }
    },
    "take-received-descriptor-off-thread": {
        let loop = try Loop()
        let (_, writer) = try loop.makePipe()
        onAnotherThread { _ = try? writer.takeReceivedDescriptor() }
    },
    "start-reading-without-a-handler": {
        let loop = try Loop()
        var accepted: StreamConnection?
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted = try? $0.get() }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        while accepted == nil || client == nil { try loop.runOnce() }
        try accepted!.startReading()
    },
    "attached-loop-run-by-another-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        // Something of the owner's keeps the loop alive, so that uv_run turns it.
        let ownerIdle = UnsafeMutablePointer<uv_idle_t>.allocate(capacity: 1)
        uv_idle_init(cLoop, ownerIdle)
        uv_idle_start(ownerIdle, ownerIdleTick)
        let loop = try Loop.attach(cLoop)
        // Work queued before the first turn must not run on the wrong thread: the check comes
        // first, in whichever phase UVLoop is called first (here the idle phase, for the timer).
        try loop.post { sayUnbuffered("uvloop-misuse: a post ran on the wrong thread") }
        try loop.schedule(after: .zero) { sayUnbuffered("uvloop-misuse: a timer ran on the wrong thread") }
        // A config thread attached the loop; the loop's own thread runs it.
        let pointer = UInt(bitPattern: cLoop)
        onAnotherThread {
            uv_run(UnsafeMutablePointer<uv_loop_t>(bitPattern: pointer), UV_RUN_NOWAIT)
        }
        _ = loop
    },
    "spawn-off-thread": {
        let loop = try Loop()
        onAnotherThread { _ = try? loop.spawn(Command("/bin/true")) }
    },
    "file-system-off-thread": {
        let loop = try Loop()
        onAnotherThread { try? loop.fileSystem.makeDirectory(at: "/tmp/uvloop-misuse") { _ in } }
    },
    "run-off-thread": {
        let loop = try Loop()
        onAnotherThread { _ = try? loop.run() }
    },
    "run-reentrant": {
        let loop = try Loop()
        try loop.post { _ = try? loop.runOnce() }
        try loop.runUntilIdle()
    },
    "run-attached-loop": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.attach(cLoop)
        try loop.run()
    },
    "detach-owned-loop": {
        let loop = try Loop()
        loop.detach()
    },
    "detach-off-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.attach(cLoop)
        onAnotherThread { loop.detach() }
    },
    "keep-alive-owned-loop": {
        let loop = try Loop()
        try loop.setKeepsOwnerLoopAlive(true)
    },
    "keep-alive-off-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.attach(cLoop)
        onAnotherThread { _ = try? loop.setKeepsOwnerLoopAlive(true) }
    },
    "loop-thread-shutdown-on-its-thread": {
        let thread = try Loop.startThread(name: "misuse")
        try thread.loop.invoke { thread.shutdown() }
    },
    "advance-time-inside-a-callback": {
        let loop = try Loop(clock: .manual)
        try loop.post { _ = try? loop.advanceTime(by: .milliseconds(1)) }
        try loop.runUntilIdle()
    },
    "precondition-on-loop-thread": {
        let loop = try Loop()
        onAnotherThread { loop.preconditionOnLoopThread("Cache.refresh()") }
    },
    // A loop-thread-only call from another thread.
    "registry-set-target-off-thread": {
        let loop = try Loop()
        let registry = EventRegistry(loop: loop)
        onAnotherThread { try? registry.setTarget(Target()) }
    },
    "control-add-target-off-thread": {
        let loop = try Loop()
        let control = EventControl(loop: loop)
        onAnotherThread { _ = try? control.addTarget(Target(), action: Target.touch, for: EventKey<Void>("touch")) }
    },
    "bound-with-value-off-thread": {
        let loop = try Loop()
        let bound = LoopBound([1, 2, 3], loop: loop)
        onAnotherThread { bound.withValue { _ = $0.count } }
    },
    "advance-time-off-thread": {
        let loop = try Loop.manual()
        onAnotherThread { try? loop.advanceTime(by: .seconds(1)) }
    },
    "advance-clock-off-thread": {
        let loop = try Loop.manual()
        onAnotherThread { try? loop.advanceClockWithoutRunning(by: .seconds(1)) }
    },
    "next-timer-deadline-off-thread": {
        let loop = try Loop.manual()
        onAnotherThread { _ = loop.nextTimerDeadline }
    },
    "connect-off-thread": {
        let loop = try Loop()
        let address = try SocketAddress(ip: "127.0.0.1", port: 1)
        onAnotherThread { _ = try? loop.connect(to: address) { _ in } }
    },
    "resolve-off-thread": {
        let loop = try Loop()
        onAnotherThread { _ = try? loop.resolve(host: "localhost", port: 1) { _ in } }
    },
    "group-shutdown-on-group-thread": {
        let group = try LoopGroup(loopCount: 1)
        try group.loops[0].invoke { group.shutdown() }
    },
    "connection-state-off-thread": {
        let (loop, connection) = try connectedConnection()
        onAnotherThread { _ = connection.isWritable }
        _ = loop
    },
    "sync-write-off-thread": {
        // Async code that forgot `await` reaches the loop-thread-only write from a synchronous
        // closure (the compiler refuses it directly in async code): the message says `await`.
        let (loop, connection) = try connectedConnection()
        onAnotherThread { try? connection.write([1, 2, 3]) }
        _ = loop
    },
    "assume-isolated-off-thread": {
        let loop = try Loop()
        onAnotherThread { _ = loop.assumeIsolated() }
    },
    "main-loop-actor-assume-isolated-off-thread": {
        let thread = try Loop.startThread(name: "main-loop")
        try MainLoop.install(thread.loop)
        MainLoopActor.assumeIsolated { _ = 1 }
    },
    // Two consumers of one sequence or stream at once.
    "signals-two-consumers": {
        let thread = try Loop.startThread(name: "signals")
        let deliveries = try thread.loop.signals(.user1)
        inTasks {
            let first = Task { for await _ in deliveries {} }
            let second = Task { for await _ in deliveries {} }
            _ = await (first.value, second.value)
        }
    },
    "ticks-two-consumers": {
        let thread = try Loop.startThread(name: "ticks")
        let ticks = try thread.loop.ticks(every: .seconds(60))
        inTasks { await TickConsumers().run(ticks) }
    },
    "reads-two-consumers": {
        let thread = try Loop.startThread(name: "reads")
        let loop = thread.loop
        inTasks {
            let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
            let client = try await loop.connect(to: listener.localAddress)
            let first = Task { for try await _ in client.reads {} }
            let second = Task { for try await _ in client.reads {} }
            _ = await (first.result, second.result)
        }
    },
    "connections-two-consumers": {
        let thread = try Loop.startThread(name: "accepts")
        let loop = thread.loop
        inTasks {
            let listener = try await loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0))
            let first = Task { for try await _ in listener.connections {} }
            let second = Task { for try await _ in listener.connections {} }
            _ = await (first.result, second.result)
        }
    },
    "await-connect-on-manual-loop-made-by-async-code": {
        // An async test's body: the loop is made inside a task, and nothing steps it while the
        // task awaits.
        inTasks {
            let loop = try Loop.manual()
            _ = try await loop.connect(to: SocketAddress(ip: "127.0.0.1", port: 9))
        }
    },
    "await-sleep-on-manual-loop-made-by-async-code": {
        inTasks {
            let loop = try Loop.manual()
            try await loop.sleep(for: .seconds(1))
        }
    },
    "await-ticks-on-manual-loop-made-by-async-code": {
        inTasks {
            let loop = try Loop.manual()
            for await _ in try loop.ticks(every: .seconds(1)) {}
        }
    },
    "await-file-status-on-manual-loop-made-by-async-code": {
        inTasks {
            let loop = try Loop.manual()
            _ = try await loop.fileSystem.status(of: "/")
        }
    },
    "reads-beside-a-read-handler": {
        let (loop, connection) = try connectedConnection()
        try connection.startReading { _, _ in }
        Task.detached { for try await _ in connection.reads {} }
        while true { try loop.runOnce() }
    },
    // Datagram sockets.
    "datagram-open-off-thread": {
        let loop = try Loop()
        let address = try SocketAddress(ip: "127.0.0.1", port: 0)
        onAnotherThread { _ = try? loop.openDatagramSocket(bindingTo: address) }
    },
    "datagram-send-off-thread": {
        let loop = try Loop()
        let socket = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        onAnotherThread { try? socket.send([1], to: socket.localAddress) }
    },
    "datagram-state-off-thread": {
        let loop = try Loop()
        let socket = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        onAnotherThread { _ = socket.isWritable }
    },
    "datagrams-two-consumers": {
        let thread = try Loop.startThread(name: "datagrams")
        let loop = thread.loop
        inTasks {
            let socket = try await loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
            let first = Task { for try await _ in socket.datagrams {} }
            let second = Task { for try await _ in socket.datagrams {} }
            _ = await (first.result, second.result)
        }
    },
    "datagrams-beside-a-receive-handler": {
        let loop = try Loop()
        let socket = try loop.openDatagramSocket(bindingTo: SocketAddress(ip: "127.0.0.1", port: 0))
        try socket.startReceiving { _, _ in }
        Task.detached { for try await _ in socket.datagrams {} }
        while true { try loop.runOnce() }
    },
    "pipe-twice": {
        let (_, connection) = try connectedConnection()
        try connection.pipe(to: connection)
        try connection.pipe(to: connection)
    },
    "pipe-into-a-piped-destination": {
        let (loop, source) = try connectedConnection()
        let other = try secondConnection(on: loop)
        try source.pipe(to: source)
        try other.pipe(to: source)
    },
    "pipe-across-loops": {
        let (_, source) = try connectedConnection()
        let (_, destination) = try connectedConnection()
        try source.pipe(to: destination)
    },
    "start-reading-a-piped-connection": {
        let (_, connection) = try connectedConnection()
        try connection.pipe(to: connection)
        try connection.startReading { _, _ in }
    },
    "drain-off-thread": {
        let loop = try Loop()
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }
        onAnotherThread { listener.drain(within: .seconds(1)) { _ in } }
    },
    "take-descriptor-off-thread": {
        let (_, connection) = try connectedConnection()
        onAnotherThread { _ = try? connection.takeDescriptor() }
    },
    // fork(2).
    "after-fork-off-thread": {
        let loop = try Loop()
        onAnotherThread { try? loop.afterFork() }
    },
    "forked-child-without-after-fork": {
        let loop = try Loop()
        try loop.post {}
        inForkedChild { _ = try? loop.runOnce() }
    },
    // A verb for the other kind of loop.
    "advance-time-system-clock": {
        let loop = try Loop()
        try loop.advanceTime(by: .seconds(1))
    },
    "advance-clock-system-clock": {
        let loop = try Loop()
        try loop.advanceClockWithoutRunning(by: .seconds(1))
    },
    // Open files.
    "file-status-off-thread": {
        let loop = try Loop()
        let file = try openForMisuse(on: loop)
        onAnotherThread { try? file.status { _ in } }
    },
    "file-buffer-in-flight": {
        let loop = try Loop()
        let file = try openForMisuse(on: loop)
        let buffer = try FileBuffer(capacity: 4)
        try file.read(into: buffer, at: 0) { _ in }
        _ = buffer.bytes
    },
]) { _, _ in fatalError("uvloop-misuse: a case name is used twice") }

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let misuse = cases[name] else {
    print("usage: uvloop-misuse CASE\ncases: \(cases.keys.sorted().joined(separator: " "))")
    exit(2)
}
try misuse()
print("uvloop-misuse: \(name) did not stop the program")
exit(1)
