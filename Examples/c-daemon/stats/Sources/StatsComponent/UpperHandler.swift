import CStats
import CUVLoop
import Synchronization
import UVLoop
import UVLoopC

// The Swift protocol handler: the Swift side of upper.h. Sockets the daemon's C listener
// accepted arrive as descriptors (upper_handler_adopt), are opened as StreamConnections, and go
// back to C as descriptors (StreamConnection.takeDescriptor). Every entry point runs on the
// loop thread, and so does every callback below.

/// What the handler keeps: loop thread only (inside a `LoopBound`).
struct UpperState {
    var connections: Set<StreamConnection> = []
    var adopted: UInt64 = 0
    var returned: UInt64 = 0
}

/// A running handler: what `upper_handler_start` set up and `upper_handler_stop` ends.
final class UpperHandler: Sendable {
    let loop: Loop
    /// The daemon's callback for connections going back to C, and its context as bits (never
    /// read here: it goes back to the callback as it came).
    let onReturn: upper_return_cb
    let context: UInt
    let state: LoopBound<UpperState>

    init(loop: Loop, onReturn: upper_return_cb, context: UnsafeMutableRawPointer?) {
        self.loop = loop
        self.onReturn = onReturn
        self.context = UInt(bitPattern: context)
        state = LoopBound(UpperState(), loop: loop)
    }
}

private let runningHandler = Mutex<UpperHandler?>(nil)

/// One adopted connection's line protocol. Loop thread only: its read handler captures it.
final class UpperSession {
    let handler: UpperHandler
    let connection: StreamConnection
    /// Bytes received and not yet handled: the part of a line still coming.
    var buffer: [UInt8] = []
    var lines: UInt64 = 0
    /// Closed, or gone back to C: no more lines are handled here.
    var isDone = false

    init(handler: UpperHandler, connection: StreamConnection) {
        self.handler = handler
        self.connection = connection
    }

    func reply(_ text: String) {
        do {
            try connection.write(Array((text + "\n").utf8))
        } catch {
            end()
        }
    }

    func received(_ read: StreamRead) {
        switch read {
        case .bytes(let bytes):
            buffer.append(contentsOf: bytes)
            handleLines()
        case .end, .failed:
            end()
        }
    }

    /// Handles each complete line in `buffer`, until the session ends.
    func handleLines() {
        while !isDone, let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
            var line = buffer[..<newline]
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            let text = String(decoding: line, as: UTF8.self)
            buffer.removeSubrange(...newline)
            lines += 1
            handle(text)
        }
        if !isDone, buffer.count > 1024 {
            reply("error: line too long")
            end()
        }
    }

    private func handle(_ line: String) {
        switch line {
        case "": lines -= 1
        case "lines": reply("lines=\(lines)")
        case "c": goBackToC()
        case "quit":
            reply("bye")
            connection.closeAfterFlushing()
            end(closing: false)
        case _ where line.hasPrefix("upper "): reply(String(line.dropFirst(6)).uppercased())
        default: reply("error: unknown command '\(line.prefix(64))' (swift: upper TEXT, lines, c, quit)")
        }
    }

    /// Gives the socket back to the daemon's C side, with the bytes read after "c".
    private func goBackToC() {
        connection.stopReading()
        let descriptor: Int32
        do {
            descriptor = try connection.takeDescriptor()
        } catch {
            // Writes still queued (a client that does not read its replies): it stays here.
            reply("error: cannot go back to C now (\(error)); try again")
            try? connection.startReading()
            return
        }
        isDone = true
        let rest = buffer
        buffer = []
        handler.state.value.connections.remove(connection)
        handler.state.value.returned += 1
        rest.withUnsafeBufferPointer { bytes in
            bytes.withMemoryRebound(to: CChar.self) { text in
                handler.onReturn(descriptor, text.baseAddress, text.count, UnsafeMutableRawPointer(bitPattern: handler.context))
            }
        }
    }

    /// The session ends: the client went, said `quit`, or the loop detached. `closing`: close the
    /// connection now (not when it closes once its replies are flushed).
    func end(closing: Bool = true) {
        guard !isDone else { return }
        isDone = true
        if closing { connection.close() }
        handler.state.value.connections.remove(connection)
    }
}

/// The C function `upper_handler_start`, as upper.h declares and documents it.
@c @implementation
public func upper_handler_start(_ l: OpaquePointer?, _ on_return: upper_return_cb?, _ ctx: UnsafeMutableRawPointer?) -> Int32 {
    guard let loop = Loop.fromCHandle(l), let on_return else { return UVLOOP_EINVAL }
    guard loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    guard runningHandler.withLock({ $0 == nil }) else { return UVLOOP_EALREADY }
    let handler = UpperHandler(loop: loop, onReturn: on_return, context: ctx)
    runningHandler.withLock { $0 = handler }
    return 0
}

/// The C function `upper_handler_adopt`, as upper.h declares and documents it.
@c @implementation
public func upper_handler_adopt(_ fd: Int32, _ pending: UnsafePointer<CChar>?, _ length: Int) -> Int32 {
    guard let handler = runningHandler.withLock({ $0 }) else { return UVLOOP_ESHUTDOWN }
    guard handler.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    guard fd >= 0, length >= 0, length == 0 || pending != nil else { return UVLOOP_EINVAL }
    let connection: StreamConnection
    do {
        // From here on the stream owns the descriptor; when this throws, it is still C's.
        connection = try handler.loop.openConnection(descriptor: fd, ownership: .take)
    } catch {
        return error.cErrorCode
    }
    let session = UpperSession(handler: handler, connection: connection)
    if let pending, length > 0 {
        session.buffer = Array(UnsafeRawBufferPointer(start: pending, count: length))
    }
    handler.state.value.connections.insert(connection)
    handler.state.value.adopted += 1
    session.reply("swift: hello from Swift (upper TEXT, lines, c, quit)")
    session.handleLines()
    guard !session.isDone else { return 0 }
    do {
        try connection.startReading { _, read in session.received(read) }
    } catch {
        session.end()
    }
    return 0
}

/// The C function `upper_handler_stop`, as upper.h declares and documents it.
@c @implementation
public func upper_handler_stop(_ adopted: UnsafeMutablePointer<UInt64>?, _ returned: UnsafeMutablePointer<UInt64>?) -> Int32 {
    guard let handler = runningHandler.withLock({ $0 }) else { return UVLOOP_ESHUTDOWN }
    guard handler.loop.isOnLoopThread else { return UVLOOP_ENOTLOOPTHREAD }
    runningHandler.withLock { $0 = nil }
    let state = handler.state.value
    for connection in state.connections { connection.close() }
    handler.state.value.connections.removeAll()
    adopted?.pointee = state.adopted
    returned?.pointee = state.returned
    return 0
}
