// bench-echo-uvloop: UVLoop's echo servers for the server benchmark (scripts/bench --servers),
// written as the user's guide shows them.
//
//   bench-echo-uvloop --port N [--host ADDRESS] | --unix PATH
//       [--face callback|async|async-loop] [--loops N] [--idle-timeout SECONDS]
//
// --face callback    (default) `Loop.listen(on:_:)` and `startReading`: each chunk read is
//                    written straight back from the loop's read buffer.
// --face async       `listener.connections` and `for try await chunk in connection.reads`, one
//                    task per connection on the global executor, as the Streams article shows.
// --face async-loop  the same tasks with the loop as their executor (`Task(executorPreference:)`).
// --loops N          (callback face, TCP) a `LoopGroup` of N loops serving one port
//                    (`LoopGroup.listen`, SO_REUSEPORT).
// --idle-timeout S   (callback face) each connection has a timer, moved on every read, that
//                    closes it after S idle seconds (the soak test's timers); closing one that
//                    was echoing is reported on standard error, "EARLY" if its last read was
//                    less than S ago.
//
// Prints "listening on PORT-OR-PATH" once it accepts; SIGTERM or SIGINT stops it.
import Glibc
import UVLoop

struct Options {
    var host = "127.0.0.1"
    var port: Int?
    var unixPath: String?
    var face = "callback"
    var loops = 0
    var idleTimeout: Duration?

    init(_ arguments: [String]) {
        var rest = arguments[...]
        while let flag = rest.popFirst() {
            guard let value = rest.popFirst() else { fatal("\(flag) needs a value") }
            switch flag {
            case "--port": port = Int(value)
            case "--host": host = value
            case "--unix": unixPath = value
            case "--face": face = value
            case "--loops": loops = Int(value) ?? 0
            case "--idle-timeout": idleTimeout = .milliseconds(Int((Double(value) ?? 0) * 1000))
            default: fatal("unknown option \(flag)")
            }
        }
        guard (port == nil) != (unixPath == nil), ["callback", "async", "async-loop"].contains(face) else {
            fatal("usage: bench-echo-uvloop --port N [--host ADDRESS] | --unix PATH [--face callback|async|async-loop] [--loops N] [--idle-timeout S]")
        }
    }

    func address() throws(LoopError) -> SocketAddress {
        if let unixPath { return try SocketAddress(unixPath: unixPath) }
        return try SocketAddress(ip: host, port: port ?? 0)
    }
}

func printError(_ message: String) {
    let line = "bench-echo-uvloop: \(message)\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
}

func fatal(_ message: String) -> Never {
    printError(message)
    exit(2)
}

func announce(_ listener: StreamListener, options: Options) {
    print("listening on \(options.unixPath ?? String(listener.localAddress.port ?? 0))")
    fflush(nil)   // at once, even into a pipe: the driver waits for this line
}

/// A connection's reads, for the idle timer's report. Loop thread only (in a `LoopBound`).
final class ReadLog {
    var reads = 0
    var last = ContinuousClock.now
}

/// The plain echo's read handler: every chunk written back; the client's end closes. It
/// captures nothing, so a connection it serves carries no closure context of its own (as the C
/// server's connections carry nothing beside their handle).
func echo(_ connection: StreamConnection, _ read: StreamRead) {
    switch read {
    case .bytes(let bytes): try? connection.write(bytes)   // above the high-water mark, reading pauses
    case .end, .failed: connection.close()
    }
}

/// The callback face's connection handler: echo every chunk; close on the client's end.
@Sendable func serve(_ accepted: Result<StreamConnection, LoopError>, loop: Loop, idleTimeout: Duration?) {
    guard case .success(let connection) = accepted else { return }
    try? connection.setNoDelay(true)
    guard let idleTimeout else {
        try? connection.startReading(echo)
        return
    }
    let log = LoopBound(ReadLog(), loop: loop)
    let idle = try? loop.schedule(after: idleTimeout) {
        // A timer moved on every read fires only after `idleTimeout` without one: say so when a
        // connection that was echoing is closed, with how long ago its last read was.
        if log.value.reads > 1 {
            let quiet = ContinuousClock.now - log.value.last
            let early = quiet < idleTimeout - .milliseconds(20) ? "EARLY: " : ""
            printError("\(early)idle timer closed a connection after \(log.value.reads) reads, the last \(quiet) ago (timeout \(idleTimeout))")
        }
        connection.close()
    }
    try? connection.startReading { connection, read in
        switch read {
        case .bytes(let bytes):
            log.value.reads += 1
            log.value.last = ContinuousClock.now
            if idle?.reschedule(after: idleTimeout) == false { printError("reschedule refused on an open connection") }
            try? connection.write(bytes)   // above the high-water mark, reading pauses
        case .end, .failed:
            idle?.cancel()
            connection.close()
        }
    }
}

let options = Options(Array(CommandLine.arguments.dropFirst()))
do {
    if options.loops > 0 {
        // A group: block the stop signals in every thread and wait for one here.
        var signals = sigset_t()
        sigemptyset(&signals)
        sigaddset(&signals, SIGTERM)
        sigaddset(&signals, SIGINT)
        pthread_sigmask(SIG_BLOCK, &signals, nil)
        let group = try LoopGroup(loopCount: options.loops)
        let timeout = options.idleTimeout
        let listeners = try group.listen(on: options.address()) { accepted in
            serve(accepted, loop: group.any(), idleTimeout: timeout)   // any(): the accepting loop
        }
        announce(listeners[0], options: options)
        var received: Int32 = 0
        sigwait(&signals, &received)
        for listener in listeners { listener.close() }
        group.shutdown()
    } else {
        let loop = try Loop()
        let address = try options.address()
        let stop = LoopBound<[StreamListener]>([], loop: loop)
        switch options.face {
        case "callback":
            let timeout = options.idleTimeout
            let listener = try loop.listen(on: address) { serve($0, loop: loop, idleTimeout: timeout) }
            stop.value.append(listener)
            announce(listener, options: options)
        default:
            let onLoop = options.face == "async-loop"
            let isUnix = options.unixPath != nil   // TCP_NODELAY is for TCP only
            // Detached: top-level code is the main actor's, whose thread runs the loop here.
            Task.detached {
                do {
                    let listener = try await loop.listen(on: address)
                    announce(listener, options: options)
                    for try await connection in listener.connections {
                        let echo: @Sendable () async -> Void = {
                            defer { connection.close() }
                            do {
                                if !isUnix { try await loop.invoke { try connection.setNoDelay(true) } }
                                for try await chunk in connection.reads { try await connection.write(chunk) }
                            } catch {}
                        }
                        if onLoop { Task(executorPreference: loop, operation: echo) } else { Task(operation: echo) }
                    }
                } catch {}
            }
        }
        for signal in [Signal.terminate, .interrupt] {
            try loop.watchSignal(signal, oneShot: true) { _ in
                for listener in stop.value { listener.close() }
                loop.shutdown()
            }
        }
        try loop.run()
    }
} catch {
    fatal("\(error)")
}
