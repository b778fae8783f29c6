// The misuse program's helpers: the threads, tasks, loops and connections its cases misuse.
import CLibUV
import Synchronization
import UVLoop
#if canImport(Glibc)
import Glibc
#endif

final class Target {
    func touch() {}
}

/// Runs `body` on the thread of a loop of its own, and waits for it.
func onAnotherThread(_ body: @escaping @Sendable () -> Void) {
    let other = try! Loop.startThread(name: "misuse")
    try! other.loop.invoke { body() }
    other.shutdown()
}

/// Runs `body` in a child process (fork), whose misuse stops it; the parent waits and exits as
/// the shell reports a death by that signal (128 + the signal), having shared its stderr.
func inForkedChild(_ body: () -> Void) {
    let child = fork()
    if child == 0 {
        body()
        _exit(0)
    }
    var status: Int32 = 0
    _ = waitpid(child, &status, 0)
    if status & 0x7f != 0 { exit(128 + (status & 0x7f)) }
}

/// Runs `body` in a task and waits for it: the misuse inside stops the program first.
func inTasks(_ body: @escaping @Sendable () async throws -> Void) {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { fatalError("pipe") }
    let writeEnd = fds[1]
    Task {
        try? await body()
        _ = write(writeEnd, "x", 1)
    }
    var byte: UInt8 = 0
    // Retried when a signal interrupts it: the runtime's backtracer, stopping the program from
    // a task, signals every thread, and this one must not go on to report that nothing stopped it.
    while read(fds[0], &byte, 1) < 0, errno == EINTR {}
}

/// Two tasks on one actor, each calling `next` on a copy of one ticks iterator kept by the actor:
/// the only way two consumers reach one iterator, which is not Sendable.
actor TickConsumers {
    var iterator: LoopTicks.Iterator?

    func run(_ ticks: LoopTicks) async {
        iterator = ticks.makeAsyncIterator()
        let first = Task { await consume() }
        let second = Task { await consume() }
        _ = await (first.value, second.value)
    }

    func consume() async {
        var copy = iterator!
        _ = await copy.next(isolation: self)
    }
}

/// A loop with a connected connection (the client's end), on the calling thread.
func connectedConnection() throws -> (Loop, StreamConnection) {
    let loop = try Loop()
    var accepted: StreamConnection?
    let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted = try? $0.get() }
    var client: StreamConnection?
    try loop.connect(to: listener.localAddress) { client = try? $0.get() }
    while accepted == nil || client == nil { try loop.runOnce() }
    return (loop, client!)
}

/// Another connection on `loop`, to a listener of its own.
func secondConnection(on loop: Loop) throws -> StreamConnection {
    let listener = try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { _ in }
    var client: StreamConnection?
    try loop.connect(to: listener.localAddress) { client = try? $0.get() }
    while client == nil { try loop.runOnce() }
    return client!
}

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


/// A file of `loop` open for reading, for the open-file cases.
func openForMisuse(on loop: Loop) throws -> LoopFile {
    var opened: LoopFile?
    try loop.fileSystem.open("/proc/self/status") { opened = try? $0.get() }
    while opened == nil { try loop.runOnce() }
    return opened!
}
