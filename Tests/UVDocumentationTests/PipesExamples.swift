import Glibc
import UVLoop
import XCTest

/// The examples of PipesTerminalsAndStandardIO.md and of the symbol docs of streams opened on
/// descriptors, run for real: socket pairs, a listening socket, pipes, and a pseudo-terminal
/// standing in for the process's terminal.
final class PipesExamples: XCTestCase {
    func socketPair() -> (Int32, Int32) {
        var pair: [Int32] = [-1, -1]
        XCTAssertEqual(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair), 0)
        return (pair[0], pair[1])
    }

    func makeListeningSocket() -> Int32 {
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                XCTAssertEqual(bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)), 0)
            }
        }
        XCTAssertEqual(Glibc.listen(fd, 8), 0)
        return fd
    }

    /// A pseudo-terminal's slave side (and its master, kept open by the caller).
    func pseudoTerminal() throws -> (master: Int32, slave: Int32) {
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw XCTSkip("no pseudo-terminals here") }
        var unlock: Int32 = 0
        _ = ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock)
        var number: UInt32 = 0
        _ = ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number)
        var size = winsize(ws_row: 24, ws_col: 80, ws_xpixel: 0, ws_ypixel: 0)
        _ = ioctl(master, UInt(TIOCSWINSZ), &size)
        return (master, open("/dev/pts/\(number)", O_RDWR | O_NOCTTY))
    }

    /// Runs `body` with descriptor `target` (0 or 1) replaced by `descriptor`.
    func replacing(_ target: Int32, with descriptor: Int32, _ body: () throws -> Void) rethrows {
        fflush(nil)
        let saved = dup(target)
        dup2(descriptor, target)
        defer {
            fflush(nil)
            dup2(saved, target)
            close(saved)
        }
        try body()
    }

    func testOpenConnection() throws {
        let loop = try Loop()
        let (accepted, peer) = socketPair()
        defer { close(peer) }
        do {
            // docs:begin open-connection
            let connection = try loop.openConnection(descriptor: accepted, ownership: .take)
            // docs:end
            connection.close()
        }
        let (another, other) = socketPair()
        defer { close(other) }
        try {
            let accepted = another
            // docs:begin open-connection-echo
            let connection = try loop.openConnection(descriptor: accepted, ownership: .take)
            try connection.startReading { connection, read in
                if case .bytes(let bytes) = read { try? connection.write(bytes) }
            }
            // docs:end
        }()
        XCTAssertEqual(write(other, "e", 1), 1)
        try loop.runOnce()
        var byte: UInt8 = 0
        XCTAssertEqual(read(other, &byte, 1), 1)
        loop.shutdown()
    }

    func testListenOnADescriptor() throws {
        let loop = try Loop()
        let socket = makeListeningSocket()
        // docs:begin listen-descriptor
        let listener = try loop.listen(descriptor: socket, ownership: .take) { accepted in
            guard case .success(let connection) = accepted else { return }
            connection.close()
        }
        // docs:end
        XCTAssertNotNil(listener.localAddress.port)
        loop.shutdown()
    }

    func testActivatedListeners() throws {
        let loop = try Loop()
        // docs:begin activated-listeners
        let listeners = try loop.activatedListeners { accepted in
            guard case .success(let connection) = accepted else { return }
            connection.close()
        }
        // docs:end
        XCTAssertTrue(listeners.isEmpty, "the test process was not socket-activated")
        loop.shutdown()
    }

    func testPassingAListeningSocket() throws {
        let loop = try Loop()
        let (parentEnd, workerEnd) = socketPair()
        let listeningSocket = makeListeningSocket()
        defer { close(listeningSocket) }
        // docs:begin descriptor-channel
        let channel = try loop.openDescriptorChannel(descriptor: parentEnd, ownership: .take)
        try channel.sendDescriptor(listeningSocket)
        // docs:end
        var listening = 0
        do {
            let channel = try loop.openDescriptorChannel(descriptor: workerEnd, ownership: .take)
            // docs:begin descriptor-worker
            try channel.startReading { channel, _ in
                while let received = try? channel.takeReceivedDescriptor() {
                    _ = try? loop.listen(descriptor: received, ownership: .take) { accepted in
                        if case .success(let connection) = accepted { connection.close() }
                    }
                }
            }
            // docs:end
            try channel.startReading { channel, _ in
                while let received = try? channel.takeReceivedDescriptor() {
                    listening += 1
                    close(received)
                }
            }
        }
        while listening == 0 { try loop.runOnce() }
        loop.shutdown()
    }

    func testPipes() throws {
        let loop = try Loop()
        // docs:begin make-pipe
        let (reader, writer) = try loop.makePipe()
        try writer.write(Array("ping".utf8))
        writer.close()                  // the reader reads "ping", then the end
        // docs:end
        var text = ""
        var ended = false
        try reader.startReading { _, read in
            if case .bytes(let bytes) = read { text += String(decoding: bytes, as: UTF8.self) } else { ended = true }
        }
        while !ended { try loop.runOnce() }
        XCTAssertEqual(text, "ping")
        let path = "/tmp/uvloop-doc-fifo-\(getpid())"
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        defer { unlink(path) }
        do {
            // docs:begin open-fifo
            let reader = try loop.openFIFO(atPath: path, for: .reading)
            let writer = try loop.openFIFO(atPath: path, for: .writing)
            // docs:end
            _ = (reader, writer)
        }
        loop.shutdown()
    }

    func testStandardStreams() throws {
        let loop = try Loop()
        var inputPipe: [Int32] = [-1, -1]
        var outputPipe: [Int32] = [-1, -1]
        XCTAssertEqual(pipe(&inputPipe), 0)
        XCTAssertEqual(pipe(&outputPipe), 0)
        defer { for fd in inputPipe + outputPipe { close(fd) } }
        try replacing(0, with: inputPipe[0]) {
            try replacing(1, with: outputPipe[1]) {
                // docs:begin standard-streams
                let input = try loop.openStandardStream(.input)
                let output = try loop.openStandardStream(.output)
                try input.startReading { _, read in
                    if case .bytes(let bytes) = read { try? output.write(bytes) }
                }
                // docs:end
                XCTAssertEqual(write(inputPipe[1], "echo", 4), 4)
                try loop.runOnce()
                input.close()
                output.close()
            }
        }
        var echoed = [UInt8](repeating: 0, count: 4)
        XCTAssertEqual(read(outputPipe[0], &echoed, 4), 4)
        XCTAssertEqual(String(decoding: echoed, as: UTF8.self), "echo")
        loop.shutdown()
    }

    func testTerminal() throws {
        let loop = try Loop()
        let (master, slave) = try pseudoTerminal()
        defer { close(master); close(slave) }
        try replacing(0, with: slave) {
            // docs:begin terminal
            let terminal = try loop.openStandardStream(.input)
            if terminal.isTerminal {
                try terminal.setTerminalMode(.raw)      // key by key, no echo
                let size = try terminal.terminalSize()
                print("\(size.columns) columns")
            }
            // docs:end
            XCTAssertEqual(try terminal.terminalSize(), TerminalSize(columns: 80, rows: 24))
            terminal.close()
        }
        loop.shutdown()
    }

    func testTerminalSizes() async throws {
        let thread = try Loop.startThread()
        let (master, slave) = try pseudoTerminal()
        defer { close(master); close(slave) }
        let terminal = try thread.loop.openConnection(descriptor: slave, ownership: .borrow)
        let watching = try terminal.terminalSizes()
        let task = Task {
            // docs:begin terminal-sizes
            for await size in try terminal.terminalSizes() {
                print("now \(size)")        // 80x24
            }
            // docs:end
        }
        thread.shutdown()   // ends both sequences
        _ = await task.result
        for await _ in watching {}
    }
}
