extension StreamConnection {
    /// Writes `bytes`. Loop thread only.
    ///
    /// What the kernel takes at once is written before this returns, without copying; only the
    /// rest is copied and queued. `completion`, if given, runs on the loop's thread once every
    /// byte was handed to the kernel (with nil) or the write failed (with the error), never before
    /// this call returns, and in the order of the writes.
    ///
    /// A write is accepted whatever the queue holds: watch ``isWritable`` (or pass a
    /// ``setWritableHandler(_:)``) to stop writing to a peer that does not read.
    /// - Parameters:
    ///   - bytes: the bytes to send; they may be reused as soon as this returns.
    ///   - completion: told when the bytes are written, or why not.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) after
    ///   closing, ``LoopError/writesShutDown`` after ``shutdownWrites(_:)``,
    ///   ``LoopError/libuv(function:code:)`` when libuv refuses the write; `completion` does not
    ///   run then.
    public func write(_ bytes: UnsafeRawBufferPointer, completion: ((LoopError?) -> Void)? = nil) throws(LoopError) {
        try core("StreamConnection.write(_:completion:)").write(bytes, completion: completion)
    }

    /// Writes the bytes of `bytes`; see ``write(_:completion:)-(UnsafeRawBufferPointer,_)``.
    /// Loop thread only.
    ///
    /// Unavailable from async code, where `try await connection.write(bytes)` (``write(_:)``)
    /// is the call to make: it works from any task and waits while the peer is slow. Called from
    /// another thread, this one stops the program with a message that says so.
    /// - Parameters:
    ///   - bytes: the bytes to send.
    ///   - completion: told when the bytes are written, or why not.
    /// - Throws: like ``write(_:completion:)-(UnsafeRawBufferPointer,_)``.
    @available(*, noasync, message: "from async code use `try await connection.write(bytes)`; this overload runs on the loop's thread only")
    public func write(_ bytes: [UInt8], completion: ((LoopError?) -> Void)? = nil) throws(LoopError) {
        let core = core("StreamConnection.write(_:completion:)", fromAsyncCode: "try await connection.write(bytes)")
        let result = bytes.withUnsafeBytes { raw in Result { () throws(LoopError) in try core.write(raw, completion: completion) } }
        try result.get()
    }

    /// Shuts down the writing side once queued writes are done (a half-close): the peer reads
    /// the end of the stream, and this end can still read. Loop thread only.
    ///
    /// Unavailable from async code, where `try await connection.shutdownWrites()` is the call
    /// to make (it works from any task). Called from another thread, this one stops the program
    /// with a message that says so.
    /// - Parameter completion: told when the shutdown is done (nil) or failed.
    /// - Throws: ``LoopError/streamClosed`` (or the loop's ``LoopError/shutDown``) after closing,
    ///   ``LoopError/writesShutDown`` when called twice, ``LoopError/libuv(function:code:)`` when
    ///   libuv refuses.
    @available(*, noasync, message: "from async code use `try await connection.shutdownWrites()`; this overload runs on the loop's thread only")
    public func shutdownWrites(_ completion: ((LoopError?) -> Void)? = nil) throws(LoopError) {
        try core("StreamConnection.shutdownWrites(_:)", fromAsyncCode: "try await connection.shutdownWrites()")
            .shutdownWrites(completion)
    }

    /// The bytes written but not yet taken by the kernel. Loop thread only.
    public var queuedWriteBytes: Int { core("StreamConnection.queuedWriteBytes").queuedWriteBytes }

    /// Whether a writer should go on writing: true until the queued bytes rise above the
    /// high-water mark, then false until they fall to the low-water mark (see
    /// ``setWriteWaterMarks(low:high:)``). Loop thread only.
    public var isWritable: Bool { core("StreamConnection.isWritable").isWritable }

    /// Sets what runs, on the loop's thread, each time ``isWritable`` turns true again (the
    /// queue drained to the low-water mark); nil removes it. Loop thread only.
    /// - Parameter handler: gets the connection, so it need not capture it.
    public func setWritableHandler(_ handler: ((StreamConnection) -> Void)?) {
        core("StreamConnection.setWritableHandler").writableHandler = handler
    }

    /// The queue sizes where ``isWritable`` turns false (above `high`) and true again (at or
    /// below `low`); also where the async ``write(_:)`` suspends and resumes. The defaults are
    /// 32 KiB and 64 KiB. Loop thread only.
    /// - Parameters:
    ///   - low: the queued bytes at or below which writing may go on.
    ///   - high: the queued bytes above which writers should wait.
    /// - Throws: ``LoopError/invalidArgument(_:)`` unless `0 <= low <= high`.
    public func setWriteWaterMarks(low: Int, high: Int) throws(LoopError) {
        try core("StreamConnection.setWriteWaterMarks").setWaterMarks(low: low, high: high)
    }
}
