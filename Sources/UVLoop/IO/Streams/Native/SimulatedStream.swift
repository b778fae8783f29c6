import CLibUV

/// What a simulated network (`SimulatedNetwork` in UVLoopTesting) does for the streams of one
/// host's loop, in place of the kernel: it opens listeners and connections, carries bytes, ends
/// and resets to the peer, and runs work in a later callback. Set on a loop with
/// `Loop.setStreamSimulation(_:)`; the stream verbs (`listen(on:)`, `connect(to:)`) consult it.
/// Loop thread only (the simulation's one thread).
package protocol StreamSimulation: AnyObject {
    /// Registers `listener` at `address` (a port of 0 is given one).
    /// - Throws: `LoopError.libuv` with `UV_EADDRINUSE` or `UV_EADDRNOTAVAIL` as a kernel would;
    ///   `LoopError.invalidArgument` for an address the simulation does not carry.
    func listen(_ listener: SimulatedStream, on address: SocketAddress) throws(LoopError)
    /// Starts connecting `stream` to `address`; the simulation calls `stream.connected(status:window:)`
    /// later, from one of its deliveries.
    /// - Throws: `LoopError.invalidArgument` naming an address no host has.
    func connect(_ stream: SimulatedStream, to address: SocketAddress) throws(LoopError)
    /// Carries `bytes`, which the sending stream's window allowed, to the peer.
    func send(_ stream: SimulatedStream, _ bytes: [UInt8])
    /// Carries the end of `stream`'s writes (a half-close) to the peer, after the bytes sent.
    func sendEnd(_ stream: SimulatedStream)
    /// `stream`'s reader took `count` bytes: the peer's window grows by as many.
    func acknowledge(_ stream: SimulatedStream, _ count: Int)
    /// `stream` closed: the peer reads its end (or `ECONNRESET` when `reset`); a listener stops
    /// listening.
    func closed(_ stream: SimulatedStream, reset: Bool)
    /// Runs `body` in a later callback of `stream`'s loop, at the current time (as libuv calls a
    /// write's completion after the write returned).
    func later(_ stream: SimulatedStream, _ body: @escaping () -> Void)
}

/// One end of a simulated stream (a connection or a listener), standing in for the kernel's
/// socket behind a `StreamHandle`: it keeps the bytes received and not yet read, the writes the
/// peer's receive window has not taken, and reports to the handle's core as libuv's callbacks
/// would. Loop thread only.
package final class SimulatedStream {
    package let simulation: any StreamSimulation
    /// The handle's core, which hears of reads, ends and writes (nil once closed).
    weak var core: StreamCore?
    package var localAddress: SocketAddress?
    package var remoteAddress: SocketAddress?
    /// The simulation's own record of the connection or listener this stream is an end of.
    package var record: AnyObject?
    /// Closed by its user (or reset); nothing more is delivered.
    package private(set) var isClosed = false

    // Reading.
    private var isReading = false
    private var received: [[UInt8]] = []
    private var receivedHead = 0
    /// The peer's end (`UV_EOF`) or a reset, reported once the bytes before it are read.
    private var pendingEnd: Int32?
    private var endReported = false
    private var deliveryScheduled = false

    // Writing: the user's queue (libuv's: what the kernel has not taken), then the kernel's send
    // buffer (taken, waiting for the peer's window), then the wire.
    private struct QueuedWrite {
        var bytes: [UInt8]
        var taken: Int
        let byteCount: Int
        let completion: ((LoopError?) -> Void)?
    }
    private var queue: [QueuedWrite] = []
    /// Writes the kernel took whole: their completions run in a later callback.
    private var finished: [QueuedWrite] = []
    /// Bytes the kernel took and has not sent yet, for want of window.
    private var kernelBuffer: [[UInt8]] = []
    private var kernelBufferedBytes = 0
    /// The most bytes the kernel holds that the peer's window has not taken.
    private var sendBufferSize = 0
    /// What the peer can still take before its reader reads (its receive window).
    private var window = 0
    private var shutdownDone: ((Int32) -> Void)?
    private var writesEnded = false
    private var endSent = false
    /// A reset ended the connection: writes fail with it.
    private var failure: Int32?

    // Connecting and listening.
    private var connectDone: ((Int32) -> Void)?
    private var acceptable: [SimulatedStream] = []
    /// The listener's last report accepted nothing: no more reports until it accepts one.
    private var acceptReportsStopped = false

    package init(simulation: any StreamSimulation) {
        self.simulation = simulation
    }

    // MARK: what the simulation reports

    /// The connect finished: `status` 0 (with the peer's receive `window` and this end's
    /// `sendBuffer` size), or a libuv error
    /// (`UV_ECONNREFUSED`, `UV_ETIMEDOUT`).
    /// - Returns: false when the stream had closed first (the simulation then resets the peer).
    @discardableResult
    package func connected(status: Int32, window: Int, sendBuffer: Int) -> Bool {
        guard !isClosed, let done = connectDone else { return false }
        connectDone = nil
        if status == 0 {
            self.window = window
            sendBufferSize = sendBuffer
        } else {
            failure = status
        }
        done(status)
        return status == 0
    }

    /// A connection arrived at this listener: the accepted stream, already connected.
    package func incoming(_ stream: SimulatedStream, window: Int, sendBuffer: Int) {
        stream.window = window
        stream.sendBufferSize = sendBuffer
        acceptable.append(stream)
        reportAcceptableConnections()
    }

    /// Tells the listener about the connections waiting, one call each, as libuv does: until one
    /// call accepts nothing (its queue is full), which stops the reports, like libuv's stopped
    /// watch, until the next accept.
    private func reportAcceptableConnections() {
        while !acceptable.isEmpty, !acceptReportsStopped, !isClosed {
            let waiting = acceptable.count
            core?.streamConnectionIsReady(0)
            if acceptable.count >= waiting { acceptReportsStopped = true }
        }
    }

    /// Bytes from the peer arrived.
    package func receive(_ bytes: [UInt8]) {
        if isClosed, failure == nil {
            // Bytes for a closed socket: the kernel answers with a reset.
            failure = UV_ECONNRESET.rawValue
            dropKernelBuffer()
            simulation.closed(self, reset: true)
            return
        }
        guard !isClosed, pendingEnd == nil, !endReported else { return }
        received.append(bytes)
        if isReading { deliver() }
    }

    /// The peer ended its writes.
    package func receiveEnd() {
        guard !isClosed, pendingEnd == nil, !endReported else { return }
        pendingEnd = UV_EOF.rawValue
        if isReading { deliver() }
    }

    /// The connection was reset: unread bytes are dropped, reading ends with `ECONNRESET`, and
    /// queued and later writes fail with it.
    package func receiveReset() {
        guard failure == nil else { return }
        failure = UV_ECONNRESET.rawValue
        dropKernelBuffer()
        if isClosed { return }
        received.removeAll()
        receivedHead = 0
        if !endReported { pendingEnd = UV_ECONNRESET.rawValue }
        let failed = queue
        queue.removeAll()
        for write in failed {
            core?.streamWriteDidFinish(byteCount: write.byteCount, completion: write.completion, status: UV_ECONNRESET.rawValue)
        }
        if isReading { deliver() }
    }

    /// The peer's reader took `count` bytes: sends what waits for the window.
    package func acknowledged(_ count: Int) {
        guard failure == nil else { return }
        window += count
        pump()
    }

    // MARK: reading

    func startReading() -> Int32 {
        if isClosed { return UV_EINVAL.rawValue }
        isReading = true
        if receivedHead < received.count || pendingEnd != nil { scheduleDelivery() }
        return 0
    }

    func stopReading() { isReading = false }

    private func scheduleDelivery() {
        guard !deliveryScheduled else { return }
        deliveryScheduled = true
        simulation.later(self) { [self] in
            deliveryScheduled = false
            deliver()
        }
    }

    /// Hands what was received to the core while it reads, then the end.
    private func deliver() {
        while isReading, !isClosed, receivedHead < received.count {
            let chunk = received[receivedHead]
            receivedHead += 1
            if receivedHead == received.count {
                received.removeAll(keepingCapacity: true)
                receivedHead = 0
            }
            simulation.acknowledge(self, chunk.count)
            chunk.withUnsafeBytes { core?.streamDidRead($0) }
        }
        guard isReading, !isClosed, receivedHead == received.count, let end = pendingEnd else { return }
        pendingEnd = nil
        endReported = true
        isReading = false
        core?.streamReadDidEnd(end)
    }

    // MARK: writing

    func write(_ bytes: UnsafeRawBufferPointer, completion: ((LoopError?) -> Void)?) -> StreamWriteOutcome {
        if let failure { return .failed(failure == UV_ECONNRESET.rawValue ? failure : UV_EPIPE.rawValue) }
        if isClosed || writesEnded { return .failed(UV_EPIPE.rawValue) }
        if record == nil { return .failed(UV_ENOTCONN.rawValue) }
        guard bytes.count > 0 else { return .written }
        var offset = 0
        if queue.isEmpty {
            // What the kernel takes at once (uv_try_write).
            offset = min(bytes.count, window + sendBufferSize - kernelBufferedBytes)
            if offset > 0 {
                kernelBuffer.append(Array(bytes[..<offset]))
                kernelBufferedBytes += offset
                transmit()
            }
            if offset == bytes.count { return .written }
        }
        let rest = Array(bytes[offset...])
        queue.append(QueuedWrite(bytes: rest, taken: 0, byteCount: rest.count, completion: completion))
        pump()
        return .queued(rest.count)
    }

    /// The most a simulated segment carries: a reader gets at most this much per read, as from
    /// the loop's read buffer.
    static let segmentLimit = 64 * 1024

    /// Sends what the kernel holds, as far as the peer's window goes; once it holds nothing
    /// after the writes ended (or the stream closed), the end follows.
    private func transmit() {
        while window > 0, !kernelBuffer.isEmpty {
            let count = min(window, kernelBuffer[0].count, Self.segmentLimit)
            let segment: [UInt8]
            if count == kernelBuffer[0].count {
                segment = kernelBuffer.removeFirst()
            } else {
                segment = Array(kernelBuffer[0][..<count])
                kernelBuffer[0].removeFirst(count)
            }
            window -= count
            kernelBufferedBytes -= count
            simulation.send(self, segment)
        }
        guard kernelBuffer.isEmpty, isClosed || (writesEnded && queue.isEmpty), !endSent, failure == nil else { return }
        endSent = true
        simulation.sendEnd(self)
    }

    /// Moves writes from the queue into the kernel's buffer as it has room, sending as the
    /// window allows; writes taken whole finish in a later callback.
    private func pump() {
        let hadFinished = !finished.isEmpty
        transmit()
        while !queue.isEmpty, !isClosed, kernelBufferedBytes < sendBufferSize + window {
            let room = sendBufferSize + window - kernelBufferedBytes
            let count = min(room, queue[0].bytes.count - queue[0].taken)
            kernelBuffer.append(Array(queue[0].bytes[queue[0].taken..<(queue[0].taken + count)]))
            kernelBufferedBytes += count
            queue[0].taken += count
            if queue[0].taken == queue[0].bytes.count { finished.append(queue.removeFirst()) }
            transmit()
        }
        if !hadFinished, !finished.isEmpty {
            simulation.later(self) { [self] in reportFinishedWrites(status: 0) }
        }
        if queue.isEmpty, writesEnded, let done = shutdownDone {
            shutdownDone = nil
            simulation.later(self) { [self] in done(failure ?? 0) }
        }
    }

    /// Whether the kernel still holds bytes to send (a closed stream sends them, then its end).
    package var hasUnsentBytes: Bool { !kernelBuffer.isEmpty }

    private func dropKernelBuffer() {
        kernelBuffer.removeAll()
        kernelBufferedBytes = 0
    }

    private func reportFinishedWrites(status: Int32) {
        let done = finished
        finished.removeAll()
        for write in done {
            core?.streamWriteDidFinish(byteCount: write.byteCount, completion: write.completion, status: status)
        }
    }

    func shutdownWrites(_ done: @escaping (Int32) -> Void) -> Int32 {
        if let failure { return failure }
        if isClosed || writesEnded || record == nil { return UV_ENOTCONN.rawValue }
        writesEnded = true
        shutdownDone = done
        pump()
        return 0
    }

    // MARK: connecting, listening, closing

    func connect(to address: SocketAddress, _ done: @escaping (Int32) -> Void) throws(LoopError) {
        connectDone = done
        do throws(LoopError) {
            try simulation.connect(self, to: address)
        } catch {
            connectDone = nil
            throw error
        }
    }

    /// Hands the oldest connection that arrived to `acceptStream`'s handle.
    func takeAccepted() -> SimulatedStream? {
        guard !acceptable.isEmpty else { return nil }
        let stream = acceptable.removeFirst()
        if acceptReportsStopped {
            // An accept after the reports stopped: libuv watches the socket again and reports
            // the rest of the backlog from a later callback.
            acceptReportsStopped = false
            if !acceptable.isEmpty { simulation.later(self) { [self] in reportAcceptableConnections() } }
        }
        return stream
    }

    /// Closes: a listener stops listening and resets the connections not accepted; a connection
    /// resets the peer when `reset`, else its kernel sends what it holds, then the end.
    func close(reset: Bool) {
        guard !isClosed else { return }
        isClosed = true
        isReading = false
        for stream in acceptable {
            stream.close(reset: true)
        }
        acceptable.removeAll()
        if reset, failure == nil {
            failure = UV_ECONNRESET.rawValue
            dropKernelBuffer()
            return simulation.closed(self, reset: true)
        }
        simulation.closed(self, reset: false)
        if failure == nil { transmit() }
    }

    /// libuv's close callback is about to tell the core: as libuv does, completes the writes
    /// sent, fails the queued ones, the connect and the half-close with `UV_ECANCELED`.
    func finishClosing() {
        reportFinishedWrites(status: 0)
        let cancelled = UV_ECANCELED.rawValue
        let failed = queue
        queue.removeAll()
        for write in failed {
            core?.streamWriteDidFinish(byteCount: write.byteCount, completion: write.completion, status: cancelled)
        }
        if let done = connectDone {
            connectDone = nil
            done(cancelled)
        }
        if let done = shutdownDone {
            shutdownDone = nil
            done(cancelled)
        }
    }
}
