import Glibc
import UVLoop

/// Streams on descriptors: a pipe, a socket taken and one borrowed, a listening socket passed
/// over a Unix socket, the standard streams, a terminal (a pseudo-terminal when the demo's output
/// is not one) and socket activation; all on one real loop run by this thread.
func runPipesSection() throws {
    print("\n== Pipes, terminals and standard I/O: streams on descriptors")
    let loop = try Loop()
    Task(executorPreference: loop) {
        do {
            try await narratePipes(loop: loop)
        } catch {
            print("  the section failed: \(error)")
        }
        loop.shutdown()
    }
    try loop.run()
    print("  run() returned: the shutdown closed every stream, taken descriptors with them.")
}

private func socketPair() -> (Int32, Int32) {
    var pair: [Int32] = [-1, -1]
    _ = socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair)
    return (pair[0], pair[1])
}

private func narratePipes(loop: Loop) async throws {
    print("1. An anonymous pipe, both ends as streams:")
    let (reader, writer) = try loop.makePipe()
    try await writer.write(Array("through a pipe".utf8))
    writer.close()
    var text = ""
    for try await chunk in reader.reads { text += String(decoding: chunk, as: UTF8.self) }
    print("  the reading end read \(text.debugDescription), then the end (the writing end closed)")

    print("2. Descriptors someone else opened, taken or borrowed:")
    let (taken, takenPeer) = socketPair()
    let (borrowed, borrowedPeer) = socketPair()
    let first = try loop.openConnection(descriptor: taken, ownership: .take)
    let second = try loop.openConnection(descriptor: borrowed, ownership: .borrow)
    first.close()
    second.close()
    print("  after close: the taken descriptor is \(fcntl(taken, F_GETFD) == -1 ? "closed" : "open"), "
        + "the borrowed one is \(fcntl(borrowed, F_GETFD) == -1 ? "closed" : "open") (yours to close)")
    for fd in [borrowed, takenPeer, borrowedPeer] { close(fd) }

    print("3. A listening socket handed over a Unix socket, as a pre-forked server's parent does:")
    let (parentEnd, workerEnd) = socketPair()
    let parent = try loop.openDescriptorChannel(descriptor: parentEnd, ownership: .take)
    let worker = try loop.openDescriptorChannel(descriptor: workerEnd, ownership: .take)
    let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    _ = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
    }
    _ = Glibc.listen(socket, 8)
    try await parent.sendDescriptor(socket, with: Array("take this".utf8))
    close(socket)   // the parent's copy: the worker has its own now
    var reads = worker.reads.makeAsyncIterator()
    let note = try await reads.next() ?? []
    let received = try await worker.takeReceivedDescriptor()
    if let received {
        let listener = try await loop.listen(descriptor: received, ownership: .take)
        let client = try await loop.connect(to: listener.localAddress)
        var connections = listener.connections.makeAsyncIterator()
        _ = try await connections.next()
        print("  the worker read \(String(decoding: note, as: UTF8.self).debugDescription) and a descriptor; "
            + "it listens on \(listener.localAddress) and accepted a connection")
        client.close()
        listener.close()
    }
    parent.close()
    worker.close()

    print("4. The standard streams, whatever they are:")
    for stream in [StandardStream.input, .output] {
        do {
            let opened = try loop.openStandardStream(stream)
            let kind = opened.isTerminal ? "a terminal" : "a pipe or socket"
            print("  \(stream) is \(kind): a stream")
            opened.close()
        } catch {
            print("  \(stream): \(error)")
        }
    }

    print("5. A terminal: raw mode and window size (a pseudo-terminal the demo opens):")
    let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
    var unlock: Int32 = 0
    var number: UInt32 = 0
    if master >= 0, ioctl(master, 0x4004_5431, &unlock) == 0, ioctl(master, 0x8004_5430, &number) == 0 {
        var size = winsize(ws_row: 40, ws_col: 120, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        let terminal = try loop.openConnection(descriptor: slave, ownership: .take)
        try terminal.setTerminalMode(.raw)
        print("  /dev/pts/\(number) in raw mode, \(try terminal.terminalSize()); closing it restores normal mode")
        terminal.close()
        close(master)
    } else {
        print("  no pseudo-terminals here")
    }

    print("6. Socket activation: systemd passes listening sockets as descriptors 3, 4, ...")
    let passed = try SocketActivation.sockets(unsetEnvironment: false)
    print("  this run got \(passed.count) (start uvloop-echo with no address under systemd-socket-activate to see it serve them)")
}
