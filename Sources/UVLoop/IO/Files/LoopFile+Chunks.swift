extension LoopFile {
    /// The chunk length of ``readChunks(chunkLength:readAhead:from:count:_:)`` unless given:
    /// 64 KiB.
    public static let defaultChunkLength = 64 * 1024

    /// The number of reads ``readChunks(chunkLength:readAhead:from:count:_:)`` keeps in flight
    /// unless given: 8, twice the threads of libuv's pool by default, so that a pool thread that
    /// finishes a read finds the next one queued instead of sleeping until the loop starts it.
    public static let defaultReadAhead = 8

    /// The most reads a chunked reader keeps in flight.
    public static let maximumReadAhead = 64

    /// Reads the file from `offset` to its end (or `count` bytes) in chunks of `chunkLength`
    /// bytes, keeping up to `readAhead` reads in flight, and calls `handler` on the loop's thread
    /// with each chunk in file order. Loop thread only.
    ///
    /// Several reads in flight at successive offsets keep libuv's thread pool busy while
    /// chunks travel back to the loop, so a sequential read of a large file costs about one
    /// system call per chunk instead of a round trip to the pool per chunk. The reader owns
    /// `readAhead` buffers of `chunkLength` bytes, reused from chunk to chunk: it allocates
    /// nothing per chunk, and holds at most `readAhead × chunkLength` bytes.
    ///
    /// `handler` gets each chunk as a ``FileBuffer`` lent for the call (read its
    /// ``FileBuffer/bytes`` then, and copy what you keep), then `nil` once the reader reached the
    /// end of the file (or `count` bytes), or the error that ended it; it is not called again
    /// after either. ``FileChunkReader/pause()`` stops the chunks (the reads in flight complete
    /// and wait, no new read starts) until ``FileChunkReader/resume()``;
    /// ``FileChunkReader/cancel()`` ends the reader without another call. The reader goes on
    /// while the file is open, whether you keep the returned reader or not.
    ///
    /// A chunk is shorter than `chunkLength` where a read found fewer bytes: at the end of the
    /// file (or of `count`), and, for a file that grows or shrinks while it is read, wherever the
    /// file ended when that chunk was read, even if it has grown since. Reading goes on from the
    /// end of a short chunk, so no byte is skipped or repeated, and stops at the first read that
    /// finds no byte: a file truncated while it is read ends the chunks where it now ends, and
    /// bytes appended before the reader gets there are read, after the short chunk that met the
    /// old end. Closing the file ends the reader with ``LoopError/fileClosed``;
    /// the loop's ending with its refusal (a paused reader ends without a call then).
    /// - Parameters:
    ///   - chunkLength: the bytes per chunk; from 1 to `UInt32.max`.
    ///   - readAhead: the most reads in flight; from 1 to ``maximumReadAhead``.
    ///   - offset: where in the file to start.
    ///   - count: the most bytes to read; nil reads to the end of the file.
    ///   - handler: gets each chunk, then nil at the end, or the error.
    /// - Returns: the reader, to pause, resume or cancel it.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a chunk length, read-ahead, offset or
    ///   count out of range; ``LoopError/fileClosed`` after `close()`; the loop's refusal once it
    ///   is ending. `handler` does not run then.
    @discardableResult
    public func readChunks(
        chunkLength: Int = defaultChunkLength, readAhead: Int = defaultReadAhead, from offset: Int64 = 0, count: Int64? = nil,
        _ handler: @escaping (Result<FileBuffer?, LoopError>) -> Void
    ) throws(LoopError) -> FileChunkReader {
        let file = core("LoopFile.readChunks(chunkLength:readAhead:from:count:_:)")
        try Self.validateChunks(chunkLength: chunkLength, readAhead: readAhead, offset: offset, count: count)
        let core = try FileChunkReaderCore(
            file: file, engine: loop.engine, chunkLength: chunkLength, readAhead: readAhead, offset: offset, count: count,
            sink: FileChunkHandler(handler))
        core.start()
        return FileChunkReader(core: core)
    }

    static func validateChunks(chunkLength: Int, readAhead: Int, offset: Int64, count: Int64?) throws(LoopError) {
        guard chunkLength >= 1, chunkLength <= Int(UInt32.max) else {
            throw .invalidArgument("a chunk length must be from 1 to \(UInt32.max) bytes (got \(chunkLength))")
        }
        guard readAhead >= 1, readAhead <= maximumReadAhead else {
            throw .invalidArgument("readAhead must be from 1 to \(maximumReadAhead) reads (got \(readAhead))")
        }
        guard offset >= 0 else { throw .invalidArgument("a file offset must not be negative (got \(offset))") }
        if let count, count < 1 {
            throw .invalidArgument("count must be at least 1 byte (got \(count)); pass nil to read to the end of the file")
        }
    }
}

/// A chunked reader of a ``LoopFile``, made by ``LoopFile/readChunks(chunkLength:readAhead:from:count:_:)``:
/// pause, resume or cancel it. Loop thread only (the type is not `Sendable`).
public final class FileChunkReader {
    private let core: FileChunkReaderCore

    init(core: FileChunkReaderCore) {
        self.core = core
    }

    /// Whether the reader still delivers chunks (or will, once resumed): false once it has
    /// reached the end, failed, or been cancelled.
    public var isReading: Bool { !core.isEnded }

    /// Whether ``pause()`` holds the reader.
    public var isPaused: Bool { core.isPaused }

    /// Stops the chunks: no chunk is delivered and no read starts until ``resume()``; the reads in
    /// flight complete and their chunks wait. Callable inside the handler.
    public func pause() { core.pause() }

    /// Delivers the chunks that wait and reads on, after ``pause()``.
    public func resume() { core.resume() }

    /// Ends the reader: the handler is not called again, and its buffers go once the reads in
    /// flight are back. Callable inside the handler; idempotent.
    /// - Returns: whether the reader was still reading.
    @discardableResult
    public func cancel() -> Bool { core.cancel() }
}

/// The callback face's sink: the user's handler.
private final class FileChunkHandler: FileChunkSink {
    private let handler: (Result<FileBuffer?, LoopError>) -> Void

    init(_ handler: @escaping (Result<FileBuffer?, LoopError>) -> Void) {
        self.handler = handler
    }

    func chunk(_ buffer: FileBuffer) -> Bool {
        handler(.success(buffer))
        return true
    }

    func end(_ result: Result<Void, LoopError>) { handler(result.map { nil }) }

    func settled(busy: Int) {}

    func loopIsEnding(_ refusal: LoopError) {}
}
