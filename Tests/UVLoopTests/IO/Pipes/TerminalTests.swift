import CLibUV
import Glibc
import XCTest

@testable import UVLoop
import UVTestSupport

/// Terminals, driven through a pseudo-terminal: the test holds the master side, the stream is
/// opened on the slave side.
final class TerminalTests: XCTestCase {
    /// A pseudo-terminal: (master, slave), both open; the caller closes them.
    func openPseudoTerminal(columns: UInt16 = 80, rows: UInt16 = 24) throws -> (master: Int32, slave: Int32) {
        // posix_openpt, unlockpt and ptsname, spelled out: Glibc's module leaves them out.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        guard master >= 0 else { throw XCTSkip("no pseudo-terminals here (/dev/ptmx: \(errno))") }
        var unlock: Int32 = 0
        XCTAssertEqual(ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock), 0)
        var number: UInt32 = 0
        XCTAssertEqual(ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number), 0)
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        XCTAssertGreaterThanOrEqual(slave, 0)
        resize(master, columns: columns, rows: rows)
        return (master, slave)
    }

    func resize(_ master: Int32, columns: UInt16, rows: UInt16) {
        var size = winsize(ws_row: rows, ws_col: columns, ws_xpixel: 0, ws_ypixel: 0)
        XCTAssertEqual(ioctl(master, UInt(TIOCSWINSZ), &size), 0)
    }

    func isCanonical(_ descriptor: Int32) -> Bool {
        var settings = termios()
        XCTAssertEqual(tcgetattr(descriptor, &settings), 0)
        return settings.c_lflag & UInt32(ICANON) != 0
    }

    /// Reads from the master side until `count` bytes came (it is blocking: the stream wrote them).
    func readMaster(_ master: Int32, count: Int) -> String {
        var got: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 256)
        while got.count < count {
            let n = read(master, &buffer, buffer.count)
            guard n > 0 else { break }
            got += buffer[..<n]
        }
        return String(decoding: got, as: UTF8.self)
    }

    func testATerminalReadsWritesAndKnowsItsSize() throws {
        let loop = try Loop()
        let (master, slave) = try openPseudoTerminal(columns: 100, rows: 30)
        defer { close(master); close(slave) }
        let terminal = try loop.openConnection(descriptor: slave, ownership: .borrow)
        XCTAssertTrue(terminal.isTerminal)
        XCTAssertNil(terminal.localAddress)
        XCTAssertEqual(try terminal.terminalSize(), TerminalSize(columns: 100, rows: 30))
        try terminal.write(Array("out\n".utf8))
        XCTAssertEqual(readMaster(master, count: 5), "out\r\n", "output goes through the terminal's translation")
        try terminal.setTerminalMode(.raw)
        XCTAssertFalse(isCanonical(slave))
        let log = ReadLog()
        try terminal.startReading(log.handler)
        XCTAssertEqual(write(master, "k", 1), 1)
        loop.turn(until: { log.text == "k" })   // raw: a key at a time, no newline needed
        terminal.close()
        XCTAssertTrue(isCanonical(slave), "closing the stream restores the normal mode")
        XCTAssertTrue(isOpen(slave))
        loop.shutdown()
    }

    func testShutdownAndDetachRestoreTheMode() throws {
        let (master, slave) = try openPseudoTerminal()
        defer { close(master); close(slave) }
        let owned = try Loop()
        let terminal = try owned.openConnection(descriptor: slave, ownership: .borrow)
        try terminal.setTerminalMode(.binary)
        XCTAssertFalse(isCanonical(slave))
        owned.shutdown()
        XCTAssertTrue(isCanonical(slave), "the loop's shutdown restored the mode")

        let cLoop = makeCLoop()
        defer { cLoop.deallocate() }
        let attached = try Loop.attach(cLoop)
        let second = try attached.openConnection(descriptor: slave, ownership: .borrow)
        try second.setTerminalMode(.raw)
        attached.detach()
        _ = uv_run(cLoop, UV_RUN_NOWAIT)
        XCTAssertEqual(uv_loop_close(cLoop), 0)
        XCTAssertTrue(isCanonical(slave), "the detach restored the mode")
    }

    func testATakenTerminalIsClosedWithTheStream() throws {
        let loop = try Loop()
        warmUp(loop)
        let (master, slave) = try openPseudoTerminal()
        defer { close(master) }
        let before = openDescriptorCount()
        let terminal = try loop.openConnection(descriptor: slave, ownership: .take)
        terminal.close()
        XCTAssertFalse(isOpen(slave))
        XCTAssertEqual(openDescriptorCount(), before - 1, "the reopened terminal and the descriptor are both closed")
        loop.shutdown()
    }

    func testWindowChangesReachTheHandler() throws {
        let loop = try Loop()
        let (master, slave) = try openPseudoTerminal(columns: 80, rows: 24)
        defer { close(master); close(slave) }
        let terminal = try loop.openConnection(descriptor: slave, ownership: .borrow)
        let sizes = Recorder<TerminalSize>()
        let watch = try terminal.watchTerminalSize { _, size in sizes.append(size) }
        resize(master, columns: 132, rows: 43)
        // The test process is not the terminal's foreground process: send the signal itself.
        XCTAssertEqual(kill(getpid(), SIGWINCH), 0)
        loop.turn(until: { !sizes.values.isEmpty })
        XCTAssertEqual(sizes.values, [TerminalSize(columns: 132, rows: 43)])
        XCTAssertEqual(TerminalSize(columns: 132, rows: 43).description, "132x43")
        watch.cancel()
        // The loop-thread form: the handler keeps loop-thread state, no lock.
        var seen: [TerminalSize] = []
        let isolated = try loop.assumeIsolated().watchTerminalSize(of: terminal) { _, size in seen.append(size) }
        resize(master, columns: 100, rows: 50)
        XCTAssertEqual(kill(getpid(), SIGWINCH), 0)
        loop.turn(until: { !seen.isEmpty })
        XCTAssertEqual(seen, [TerminalSize(columns: 100, rows: 50)])
        isolated.cancel()
        loop.shutdown()
    }

    func testWindowChangesAsAnAsyncSequence() async throws {
        let thread = try Loop.startThread()
        let (master, slave) = try openPseudoTerminal()
        defer { close(master); close(slave) }
        let terminal = try thread.loop.openConnection(descriptor: slave, ownership: .borrow)
        let sizes = try terminal.terminalSizes()
        resize(master, columns: 90, rows: 20)
        XCTAssertEqual(kill(getpid(), SIGWINCH), 0)
        var iterator = sizes.makeAsyncIterator()
        let size = await iterator.next()
        XCTAssertEqual(size, TerminalSize(columns: 90, rows: 20))
        sizes.watch.cancel()
        let end = await iterator.next()
        XCTAssertNil(end)
        thread.shutdown()
    }

    func testTerminalVerbsOnAPipeSayItIsNoTerminal() throws {
        let loop = try Loop()
        let (reader, writer) = try loop.makePipe()
        XCTAssertFalse(reader.isTerminal)
        XCTAssertThrowsError(try reader.setTerminalMode(.raw)) {
            guard case .invalidArgument(let text) = $0 as? LoopError else { return XCTFail("\($0)") }
            XCTAssertTrue(text.contains("applies to terminals"), text)
        }
        XCTAssertThrowsError(try writer.terminalSize())
        writer.close()
        XCTAssertThrowsError(try writer.terminalSize()) { XCTAssertEqual($0 as? LoopError, .streamClosed) }
        loop.shutdown()
    }
}
