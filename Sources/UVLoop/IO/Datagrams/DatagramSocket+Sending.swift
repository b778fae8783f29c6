extension DatagramSocket {
    /// Sends `bytes` as one datagram to `address`, or, with nil, to the address the socket is
    /// connected to. Loop thread only.
    ///
    /// The kernel takes the datagram before this returns, without copying, unless its buffer is
    /// full: then a copy is queued and sent as soon as there is room. `completion`, if given,
    /// runs on the loop's thread once the datagram was handed to the kernel (with nil) or the
    /// send failed (with the error), never before this call returns, and in the order of the
    /// sends.
    ///
    /// A send is accepted whatever the queue holds: watch ``isWritable`` (or pass a
    /// ``setWritableHandler(_:)``) to stop sending while the queue is long.
    /// - Parameters:
    ///   - bytes: the datagram; the bytes may be reused as soon as this returns.
    ///   - address: where to send it; nil on a connected socket.
    ///   - completion: told when the datagram is sent, or why not.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) after
    ///   closing; ``LoopError/libuv(function:code:)`` when the kernel refuses it at once:
    ///   `UV_EMSGSIZE` (too large), `UV_ECONNREFUSED` (a connected peer's ICMP error),
    ///   `UV_EDESTADDRREQ` (no address on a socket not connected), `UV_EISCONN` (an address on a
    ///   connected one). `completion` does not run then.
    public func send(_ bytes: UnsafeRawBufferPointer, to address: SocketAddress? = nil, completion: ((LoopError?) -> Void)? = nil) throws(LoopError) {
        try core("DatagramSocket.send(_:to:completion:)").send(bytes, to: address, completion: completion)
    }

    /// Sends the bytes of `bytes` as one datagram; see
    /// ``send(_:to:completion:)-(UnsafeRawBufferPointer,_,_)``. Loop thread only.
    ///
    /// Unavailable from async code, where `try await socket.send(bytes, to: address)`
    /// (``send(_:to:)``) is the call to make: it works from any task and waits while the queue
    /// is long. Called from another thread, this one stops the program with a message that says so.
    /// - Parameters:
    ///   - bytes: the datagram.
    ///   - address: where to send it; nil on a connected socket.
    ///   - completion: told when the datagram is sent, or why not.
    /// - Throws: like ``send(_:to:completion:)-(UnsafeRawBufferPointer,_,_)``.
    @available(*, noasync, message: "from async code use `try await socket.send(bytes, to: address)`; this overload runs on the loop's thread only")
    public func send(_ bytes: [UInt8], to address: SocketAddress? = nil, completion: ((LoopError?) -> Void)? = nil) throws(LoopError) {
        let core = core("DatagramSocket.send(_:to:completion:)", fromAsyncCode: "try await socket.send(bytes, to: address)")
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(LoopError) in try core.send(raw, to: address, completion: completion) }
        }
        try result.get()
    }

    /// Sends `bytes` as one datagram to `address` (nil on a connected socket), suspending while
    /// the send queue is above its high-water mark. Callable from any task.
    ///
    /// Returns once the datagram was handed to the kernel or queued with the queue at or below
    /// the high-water mark; otherwise once the queue has drained to the low-water mark (see
    /// ``setSendWaterMarks(low:high:)``). A queued send that fails later makes the next call throw.
    /// - Parameters:
    ///   - bytes: the datagram.
    ///   - address: where to send it; nil on a connected socket.
    /// - Throws: like ``send(_:to:completion:)-(UnsafeRawBufferPointer,_,_)``, and
    ///   ``LoopError/cancelled`` when the task is cancelled while suspended (the datagram stays
    ///   queued).
    public func send(_ bytes: [UInt8], to address: SocketAddress? = nil) async throws(LoopError) {
        let box = box
        try await loop.suspendOnLoopThread { waiter, continuation in
            box.value.sendAndWait(bytes, to: address, waiter, continuation)
        } cancel: { waiter in
            box.value.cancelSend(waiter)
        }
    }

    /// The bytes of the datagrams queued and not yet handed to the kernel
    /// (`uv_udp_get_send_queue_size`). Loop thread only.
    public var queuedSendBytes: Int { core("DatagramSocket.queuedSendBytes").queuedSendBytes }

    /// The datagrams queued and not yet completed (`uv_udp_get_send_queue_count`). Loop thread only.
    public var queuedSendCount: Int {
        let core = core("DatagramSocket.queuedSendCount")
        return core.isOpen ? core.handle.sendQueueCount : 0
    }

    /// Whether a sender should go on sending: true until the queued bytes rise above the
    /// high-water mark, then false until they fall to the low-water mark (see
    /// ``setSendWaterMarks(low:high:)``). Loop thread only.
    public var isWritable: Bool { core("DatagramSocket.isWritable").isWritable }

    /// Sets what runs, on the loop's thread, each time ``isWritable`` turns true again (the
    /// queue drained to the low-water mark); nil removes it. Loop thread only.
    /// - Parameter handler: gets the socket, so it need not capture it.
    public func setWritableHandler(_ handler: ((DatagramSocket) -> Void)?) {
        core("DatagramSocket.setWritableHandler(_:)").writableHandler = handler
    }

    /// The queue sizes where ``isWritable`` turns false (above `high`) and true again (at or
    /// below `low`); also where the async ``send(_:to:)`` suspends and resumes. The defaults are
    /// 32 KiB and 64 KiB. Loop thread only.
    /// - Parameters:
    ///   - low: the queued bytes at or below which sending may go on.
    ///   - high: the queued bytes above which senders should wait.
    /// - Throws: ``LoopError/invalidArgument(_:)`` unless `0 <= low <= high`.
    public func setSendWaterMarks(low: Int, high: Int) throws(LoopError) {
        try core("DatagramSocket.setSendWaterMarks(low:high:)").setWaterMarks(low: low, high: high)
    }
}
