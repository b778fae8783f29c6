import CLibUV

/// The loop-thread state of one ``DatagramSocket``: its libuv handle, its receiving (callback or
/// async), its send queue and water marks, and how it closed. Loop thread only.
final class DatagramSocketCore: IOHandleCore<UDPHandle>, UDPHandleDelegate {
    enum ReceiveMode { case idle, callback, async }

    /// The public object; dropped when libuv is done with the handle.
    var socket: DatagramSocket?

    // Receiving.
    var receiveMode = ReceiveMode.idle
    var receiveHandler: ((DatagramSocket, DatagramRead) -> Void)?
    private(set) var isReceiving = false
    /// Async face: datagrams received and not yet taken (the first at `head`), or a receive error.
    private var received: [Result<Datagram, LoopError>] = []
    private var head = 0
    private(set) var bufferedBytes = 0
    var receiveBufferLimit = 256 * 1024
    private var receiveWaiter: (waiter: StreamWaiter, continuation: LoopContinuation<Datagram?>)?

    // Sending.
    var lowWaterMark = 32 * 1024
    var highWaterMark = 64 * 1024
    private(set) var isWritable = true
    var writableHandler: ((DatagramSocket) -> Void)?
    /// Completions of sends the kernel took at once: they run after `send` returned, from a
    /// posted job, and before any later send's completion.
    private var finishedCompletions: [(LoopError?) -> Void] = []
    private var sendWaiters: [(waiter: StreamWaiter, continuation: LoopContinuation<Void>)] = []
    /// The first failure of a queued send nobody waits for, reported by the next async send.
    private var unreportedSendFailure: LoopError?
    /// Whether a send tries the kernel at once (`uv_udp_try_send`) before queuing; tests turn it
    /// off to build a queue on loopback, where the kernel never makes a sender wait.
    var triesSendingAtOnce = true

    /// Creates the socket, sets its options, binds it, and records it with the loop, which
    /// closes it at shutdown or detach.
    init(loop: Loop, address: SocketAddress, options: DatagramSocket.Options) throws(LoopError) {
        guard address.family != .unix else {
            throw .invalidArgument("a datagram socket binds an IP address and port, not a Unix-domain path")
        }
        guard options.maximumDatagramSize >= 1, options.maximumDatagramSize <= DatagramReceiveBuffer.slotSize else {
            throw .invalidArgument(
                "maximumDatagramSize must be 1 through \(DatagramReceiveBuffer.slotSize) bytes (got \(options.maximumDatagramSize))")
        }
        if options.ipv6Only, address.family != .ipv6 {
            throw .invalidArgument("ipv6Only applies to a socket bound to an IPv6 address (got \(address))")
        }
        try super.init(loop: loop)
        if let simulation = try loop.streamSimulation() as? any DatagramSimulation {
            try openSimulated(on: simulation, address: address, options: options)
            return
        }
        // Batches need the 64 KiB slots libuv cuts the buffer into; a smaller largest datagram
        // receives one at a time into a buffer of that size (and reports longer ones truncated).
        let batched = options.batchedReceive && options.maximumDatagramSize == DatagramReceiveBuffer.slotSize
        let buffer = loop.engine.ioHandles.datagramReceiveBuffer
        let opened = try UDPHandle(
            loop: loop.native, family: address.nativeFamily, batched: batched, receiveBuffer: buffer,
            receiveLength: batched ? buffer.count : options.maximumDatagramSize)
        opened.setDelegate(self)
        open(opened, keepsOwnerLoopAlive: true)
        if options.reusePort {
            let status = opened.setReusePort()
            guard status == 0 else { throw fail(status, "setsockopt(SO_REUSEPORT)") }
        }
        let status = opened.bind(address, reuseAddress: options.reuseAddress, ipv6Only: options.ipv6Only)
        guard status == 0 else { throw fail(status, "uv_udp_bind") }
    }

    /// Opens a datagram socket of a simulated network's host and binds it there.
    private func openSimulated(on simulation: any DatagramSimulation, address: SocketAddress, options: DatagramSocket.Options) throws(LoopError) {
        let ports = loop.engine.ioHandles.simulatedDatagramPorts
        let simulated = SimulatedDatagramSocket(
            simulation: simulation, largestDatagram: options.maximumDatagramSize, receiveBufferSize: ports.receiveBufferSize)
        let opened = try UDPHandle(
            simulated: simulated, loop: loop.native, receiveBuffer: loop.engine.ioHandles.datagramReceiveBuffer,
            receiveLength: options.maximumDatagramSize)
        opened.setDelegate(self)
        open(opened, keepsOwnerLoopAlive: true)
        if options.reusePort { throw fail(UV_ENOTSUP.rawValue, "setsockopt(SO_REUSEPORT)") }
        let status = opened.bind(address, reuseAddress: options.reuseAddress, ipv6Only: options.ipv6Only)
        guard status == 0 else { throw fail(status, "uv_udp_bind") }
    }

    private func fail(_ status: Int32, _ function: String) -> LoopError {
        close(reason: .streamClosed)
        return .libuv(status, function)
    }

    // MARK: closing

    /// Fails whatever waits and forgets the writability handler. Calls no user code (the loop's
    /// ending requires it).
    override func didClose(reason: LoopError) {
        isReceiving = false
        writableHandler = nil
        if let waiting = receiveWaiter {
            receiveWaiter = nil
            // The end of the sequence for close(); the loop's reason otherwise.
            if reason == .streamClosed {
                waiting.continuation.resume(returning: nil)
            } else {
                waiting.continuation.resume(throwing: reason)
            }
        }
        failSendWaiters(reason)
    }

    func udpDidClose() {
        // Completions of sends the kernel took: they succeeded.
        runFinishedCompletions()
        if let reason = closeReason, reason != .streamClosed, receiveMode == .callback,
           let handler = receiveHandler, let socket {
            handler(socket, .failed(reason))
        }
        receiveHandler = nil
        writableHandler = nil
        socket = nil
        received.removeAll()
    }

    // MARK: receiving

    /// Starts libuv's receiving unless it runs or the socket is closed.
    /// - Returns: libuv's error, if it refused.
    @discardableResult
    func resumeReceiving() -> LoopError? {
        guard !isReceiving, isOpen else { return nil }
        let status = handle.startReceiving()
        guard status == 0 else { return .libuv(status, "uv_udp_recv_start") }
        isReceiving = true
        return nil
    }

    func pauseReceiving() {
        guard isReceiving else { return }
        handle.stopReceiving()
        isReceiving = false
    }

    func udpDidReceive(_ bytes: UnsafeRawBufferPointer, from sender: SocketAddress, truncated: Bool) {
        // A batch goes on after a handler closed the socket: drop the rest.
        guard isOpen else { return }
        asLoopCallback {
            switch receiveMode {
            case .callback:
                if let handler = receiveHandler, let socket {
                    handler(socket, .datagram(bytes, sender: sender, isTruncated: truncated))
                }
            case .async:
                deliver(.success(Datagram(bytes: Array(bytes), sender: sender, isTruncated: truncated)), size: bytes.count)
            case .idle:
                break
            }
        }
    }

    func udpReceiveDidFail(_ status: Int32) {
        guard isOpen else { return }
        asLoopCallback {
            let error = LoopError.libuv(status, "recvmsg")
            switch receiveMode {
            case .callback:
                if let handler = receiveHandler, let socket { handler(socket, .failed(error)) }
            case .async:
                deliver(.failure(error), size: 0)
            case .idle:
                break
            }
        }
    }

    private func deliver(_ result: Result<Datagram, LoopError>, size: Int) {
        if let waiting = receiveWaiter {
            receiveWaiter = nil
            return waiting.continuation.resume(with: result.map { $0 })
        }
        received.append(result)
        bufferedBytes += size
        // A receiver that does not keep up: leave the rest to the kernel (which drops datagrams
        // once its own buffer is full, as UDP does).
        if bufferedBytes >= receiveBufferLimit { pauseReceiving() }
    }

    /// The async face's next datagram: at once when one is buffered, else when one arrives.
    func nextDatagram(_ waiter: StreamWaiter, _ continuation: LoopContinuation<Datagram?>) {
        misusePrecondition(
            receiveMode != .callback,
            "UVLoop: iterating a DatagramSocket's datagrams while a receive handler is installed (startReceiving); use one way of receiving")
        receiveMode = .async
        if head < received.count {
            let next = received[head]
            head += 1
            if head == received.count {
                received.removeAll(keepingCapacity: true)
                head = 0
            }
            if case .success(let datagram) = next { bufferedBytes -= datagram.bytes.count }
            if bufferedBytes < receiveBufferLimit { resumeReceiving() }
            return continuation.resume(with: next.map { $0 })
        }
        if let reason = closeReason {
            return reason == .streamClosed ? continuation.resume(returning: nil) : continuation.resume(throwing: reason)
        }
        if waiter.isCancelled { return continuation.resume(throwing: .cancelled) }
        misusePrecondition(
            receiveWaiter == nil,
            "UVLoop: two tasks iterate one DatagramSocket's datagrams at once; receive from one task")
        if let error = resumeReceiving() { return continuation.resume(throwing: error) }
        receiveWaiter = (waiter, continuation)
    }

    func cancelReceive(_ waiter: StreamWaiter) {
        guard let waiting = receiveWaiter, waiting.waiter === waiter else { return }
        receiveWaiter = nil
        waiting.continuation.resume(throwing: .cancelled)
    }

    var hasReceiveWaiter: Bool { receiveWaiter != nil }

    // MARK: sending

    /// The bytes queued and not yet sent.
    var queuedSendBytes: Int { isOpen ? handle.sendQueueSize : 0 }

    /// Sends one datagram at once if the kernel takes it, else queues a copy.
    func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress?, completion: ((LoopError?) -> Void)?) throws(LoopError) {
        if let reason = closeReason { throw reason }
        if address?.family == .unix {
            throw .invalidArgument("a datagram goes to an IP address and port, not a Unix-domain path")
        }
        switch handle.send(bytes, to: address, tryFirst: triesSendingAtOnce, completion: completion) {
        case .sent:
            if let completion { addFinishedCompletion(completion) }
        case .queued:
            if isWritable, handle.sendQueueSize > highWaterMark { isWritable = false }
        case .failed(let status, let function):
            throw .libuv(status, function)
        }
    }

    private func addFinishedCompletion(_ completion: @escaping (LoopError?) -> Void) {
        finishedCompletions.append(completion)
        guard finishedCompletions.count == 1, let socket else { return }
        // Runs on the loop's thread, in a later callback than the one that sent.
        try? loop.post { socket.box.value.runFinishedCompletions() }
    }

    private func runFinishedCompletions() {
        guard !finishedCompletions.isEmpty else { return }
        let completions = finishedCompletions
        finishedCompletions.removeAll()
        for completion in completions { completion(nil) }
    }

    func udpSendDidFinish(completion: ((LoopError?) -> Void)?, status: Int32) {
        asLoopCallback {
            runFinishedCompletions()
            var error: LoopError?
            if status != 0 {
                error = status == UV_ECANCELED.rawValue ? (closeReason ?? .streamClosed) : .libuv(status, "sendmsg")
            }
            if let completion {
                completion(error)
            } else if let error, closeReason == nil {
                if unreportedSendFailure == nil { unreportedSendFailure = error }
            }
            if !isWritable, isOpen, handle.sendQueueSize <= lowWaterMark {
                isWritable = true
                let waiters = sendWaiters
                sendWaiters.removeAll()
                for waiting in waiters { waiting.continuation.resume() }
                if let handler = writableHandler, let socket { handler(socket) }
            }
        }
    }

    /// The async face's send: like any send; returns at once while the queue is at or below the
    /// high-water mark, else once it has drained to the low-water mark.
    func sendAndWait(_ bytes: [UInt8], to address: SocketAddress?, _ waiter: StreamWaiter, _ continuation: LoopContinuation<Void>) {
        if let failure = unreportedSendFailure, closeReason == nil {
            unreportedSendFailure = nil
            return continuation.resume(throwing: failure)
        }
        let sent = bytes.withUnsafeBytes { raw in Result { () throws(LoopError) in try send(raw, to: address, completion: nil) } }
        if case .failure(let error) = sent { return continuation.resume(throwing: error) }
        if isWritable { return continuation.resume() }
        if waiter.isCancelled { return continuation.resume(throwing: .cancelled) }
        sendWaiters.append((waiter, continuation))
    }

    func cancelSend(_ waiter: StreamWaiter) {
        guard let index = sendWaiters.firstIndex(where: { $0.waiter === waiter }) else { return }
        sendWaiters.remove(at: index).continuation.resume(throwing: .cancelled)
    }

    private func failSendWaiters(_ error: LoopError) {
        let waiters = sendWaiters
        sendWaiters.removeAll()
        for waiting in waiters { waiting.continuation.resume(throwing: error) }
    }

    func setWaterMarks(low: Int, high: Int) throws(LoopError) {
        guard low >= 0, low <= high else {
            throw .invalidArgument("send water marks need 0 <= low <= high (got low \(low), high \(high))")
        }
        lowWaterMark = low
        highWaterMark = high
        if isWritable, queuedSendBytes > high { isWritable = false }
    }
}
