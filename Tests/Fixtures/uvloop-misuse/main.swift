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

final class Target {}

/// Runs `body` on the thread of a loop of its own, and waits for it.
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let other = try! Loop.startThread(name: "misuse")
    try! other.loop.invoke { body() }
    other.shutdown()
}

let cases: [String: () throws -> Void] = [
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
    "shutdown-adopted-loop": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.adopt(cLoop)
        loop.shutdown()
    },
    "adopted-loop-released-on-another-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let holder = LoopHolder(try Loop.adopt(cLoop))
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
    "start-reading-without-a-handler": {
        let loop = try Loop()
        var accepted: StreamConnection?
        let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted = try? $0.get() }
        var client: StreamConnection?
        try loop.connect(to: listener.localAddress) { client = try? $0.get() }
        while accepted == nil || client == nil { try loop.runOnce() }
        try accepted!.startReading()
    },
    "adopted-loop-run-by-another-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        // Something of the owner's keeps the loop alive, so that uv_run turns it.
        let ownerIdle = UnsafeMutablePointer<uv_idle_t>.allocate(capacity: 1)
        uv_idle_init(cLoop, ownerIdle)
        uv_idle_start(ownerIdle, ownerIdleTick)
        let loop = try Loop.adopt(cLoop)
        // Work queued before the first turn must not run on the wrong thread: the check comes
        // first, in whichever phase UVLoop is called first (here the idle phase, for the timer).
        try loop.post { sayUnbuffered("uvloop-misuse: a post ran on the wrong thread") }
        try loop.schedule(after: .zero) { sayUnbuffered("uvloop-misuse: a timer ran on the wrong thread") }
        // A config thread adopted the loop; the loop's own thread runs it.
        let pointer = UInt(bitPattern: cLoop)
        onAnotherThread {
            uv_run(UnsafeMutablePointer<uv_loop_t>(bitPattern: pointer), UV_RUN_NOWAIT)
        }
        _ = loop
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
        let loop = try Loop.adopt(cLoop)
        try loop.run()
    },
    "detach-owned-loop": {
        let loop = try Loop()
        loop.detach()
    },
    "detach-off-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.adopt(cLoop)
        onAnotherThread { loop.detach() }
    },
    "keep-alive-owned-loop": {
        let loop = try Loop()
        try loop.setKeepsOwnerLoopAlive(true)
    },
    "keep-alive-off-thread": {
        let cLoop = UnsafeMutablePointer<uv_loop_t>.allocate(capacity: 1)
        uv_loop_init(cLoop)
        let loop = try Loop.adopt(cLoop)
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
]

/// Writes a line to stderr at once (print's buffer would be lost when the program stops).
nonisolated func sayUnbuffered(_ line: String) {
    _ = (line + "\n").withCString { write(2, $0, strlen($0)) }
}

/// The callback of an owner's idle handle (not isolated to the main actor: libuv calls it on the
/// loop's thread).
nonisolated func ownerIdleTick(_ handle: UnsafeMutablePointer<uv_idle_t>?) {}

/// Holds the only reference to a loop, so that another thread can release it.
final class LoopHolder: Sendable {
    let loop: Mutex<Loop?>
    init(_ loop: Loop) { self.loop = Mutex(loop) }
    func release() { loop.withLock { $0 = nil } }
}

let arguments = CommandLine.arguments.dropFirst()
guard let name = arguments.first, let misuse = cases[name] else {
    print("usage: uvloop-misuse CASE\ncases: \(cases.keys.sorted().joined(separator: " "))")
    exit(2)
}
try misuse()
print("uvloop-misuse: \(name) did not stop the program")
exit(1)
