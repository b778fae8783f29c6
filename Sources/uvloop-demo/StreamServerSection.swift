import UVLoop

/// What a stream server needs beside reading and writing, each run for real on one loop: a
/// line server whose reading follows its write queue (a client pipelines requests and reads
/// nothing), an over-long line answered before the close, a proxy built from two pipes, the
/// write queue's figures from a task, and a graceful drain.
func runStreamServerSection() throws {
    print("== Stream servers: backpressure per write, framing, pipes, graceful closing")
    let loop = try Loop()
    Task(executorPreference: loop) {
        do {
            try await narrateStreamServer(loop: loop)
        } catch {
            print("  the section failed: \(error)")
        }
        loop.shutdown()
    }
    try loop.run()
}

/// What the line server has done so far, on the loop's thread.
private final class LineServerLog {
    var connections: [StreamConnection] = []
    var answered = 0
}

/// A line server: each request line gets a 1 KiB answer; an over-long line gets an error, then
/// the connection closes once the error has left.
private func startLineServer(on loop: Loop, log: LoopBound<LineServerLog>) throws(LoopError) -> StreamListener {
    let answer = [UInt8](repeating: 0x61, count: 1023) + [0x0A]
    return try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
        guard case .success(let connection) = accepted else { return }
        log.value.connections.append(connection)
        try? connection.startReading(framing: .lines(maxLength: 64)) { connection, frame in
            switch frame {
            case .frame:
                try? connection.write(answer)
                log.value.answered += 1
            case .tooLong(let maxLength):
                try? connection.write(Array("ERR a line is at most \(maxLength) bytes\n".utf8))
                connection.closeAfterFlushing()
            case .end, .failed: connection.close()
            }
        }
    }
}

private func narrateStreamServer(loop: Loop) async throws {
    print("1. A client pipelines 2,000,000 requests (1 KiB answer each) and reads nothing:")
    let log = LoopBound(LineServerLog(), loop: loop)
    let server = try await loop.invoke { () throws(LoopError) in try startLineServer(on: loop, log: log) }
    let client = try await loop.connect(to: server.localAddress)
    let requests = [UInt8](String(repeating: "GET key\n", count: 2_000_000).utf8)
    Task { try? await client.write(requests) }
    // Until the kernel's buffers are full and the client's own queue backs up (2 s at most).
    var status = try await client.writeQueueStatus()
    for _ in 0..<400 where status.isWritable {
        try await loop.sleep(for: .milliseconds(5))
        status = try await client.writeQueueStatus()
    }
    let (serverSide, answered) = try await loop.invoke { (log.value.connections[0], log.value.answered) }
    let serverStatus = try await serverSide.writeQueueStatus()
    print("  the server answered \(answered) requests, then paused reading between two of them:")
    print("  \(serverStatus.queuedBytes / 1024) KiB of answers queued (high-water mark \(serverStatus.highWaterMark / 1024) KiB);")
    print("  the rest of the 16 MB waits in the kernel and in the client's queue (\(status.queuedBytes / 1024) KiB)")
    client.close()

    print("2. An over-long line gets its answer before the close:")
    let talker = try await loop.connect(to: server.localAddress)
    try await talker.write([UInt8](repeating: 0x78, count: 200) + [0x0A])
    var reply: [UInt8] = []
    for try await chunk in talker.reads { reply += chunk }
    print("  the client read \(String(decoding: reply, as: UTF8.self).debugDescription), then the end of the stream")
    talker.close()

    print("3. A proxy: two pipes, client -> proxy -> echo server and back:")
    let echo = try await loop.invoke { () throws(LoopError) in
        try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            if case .success(let connection) = accepted { try? connection.pipe(to: connection) }
        }
    }
    let backend = echo.localAddress
    let proxy = try await loop.invoke { () throws(LoopError) in
        try loop.listen(on: SocketAddress(ip: "127.0.0.1", port: 0)) { accepted in
            guard case .success(let inbound) = accepted else { return }
            try? loop.connect(to: backend) { connected in
                guard case .success(let outbound) = connected else { return inbound.close() }
                try? inbound.pipe(to: outbound)
                try? outbound.pipe(to: inbound)
            }
        }
    }
    let user = try await loop.connect(to: proxy.localAddress)
    try await user.write(Array("through a proxy".utf8))
    try await user.shutdownWrites()
    var echoed: [UInt8] = []
    for try await chunk in user.reads { echoed += chunk }
    print("  read back \(String(decoding: echoed, as: UTF8.self).debugDescription), and the end travelled through both pipes")
    user.close()

    print("4. A graceful drain: stop accepting, give open connections a deadline:")
    let lingering = try await loop.connect(to: server.localAddress)
    try await lingering.write(Array("GET key\n".utf8))   // answered: accepted, then idle
    var firstAnswer: [UInt8] = []
    for try await chunk in lingering.reads {
        firstAnswer += chunk
        if firstAnswer.count >= 1024 { break }
    }
    let closedAtDeadline = try await server.drain(within: .milliseconds(50))
    print("  connections still open at the deadline, then closed: \(closedAtDeadline) (an idle one, and the one of step 1, still paused: it never read its client's end)")
    lingering.close()
    [echo, proxy].forEach { $0.close() }
}
