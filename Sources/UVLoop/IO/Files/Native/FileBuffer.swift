/// A buffer that you own and reuse for reads from and writes to a ``LoopFile`` on the callback
/// face: a read fills it and a write sends what it holds, without an allocation per call.
///
/// Make one per reader (its size is the most one read can bring), and hand it to
/// ``LoopFile/read(into:count:at:_:)`` again and again; read what arrived with ``withUnsafeBytes(_:)``
/// or ``bytes`` in the completion. While a read or write is in flight the buffer is the
/// operation's: touching it then stops the program with a message saying so. Loop thread only
/// (the type is not `Sendable`): make it where the file's callbacks run.
public final class FileBuffer {
    /// Raw storage: allocated in `init`, freed in `deinit`. A read or write in flight keeps the
    /// buffer alive (it is the request's owner), so libuv never writes into freed memory; the
    /// loop's thread is the only one that touches it outside the pool thread's system call, and
    /// `isLent` keeps it from doing so meanwhile.
    private let base: UnsafeMutableRawPointer
    /// The most bytes the buffer holds.
    public let capacity: Int
    private var filled = 0
    /// The file whose operation has the buffer, while one is in flight.
    var lentTo: (any FileSystemRequestOwner)?
    /// The room a read in flight asked for.
    private var lentCount = 0
    private var lentForRead = false

    /// Makes a buffer of `capacity` bytes, empty.
    /// - Parameter capacity: its size in bytes: at least 1, at most `UInt32.max` (libuv's limit
    ///   for one read).
    /// - Throws: ``LoopError/invalidArgument(_:)`` for a size out of that range.
    public init(capacity: Int) throws(LoopError) {
        guard capacity >= 1, capacity <= Int(UInt32.max) else {
            throw .invalidArgument("a FileBuffer's capacity must be from 1 to \(UInt32.max) bytes (got \(capacity))")
        }
        self.capacity = capacity
        base = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit { base.deallocate() }

    /// The number of bytes the buffer holds: what the last read brought, or what you set for a
    /// write (from 0 to ``capacity``; a larger value stops the program).
    public var count: Int {
        get { filled }
        set {
            checkNotLent("FileBuffer.count")
            misusePrecondition(
                newValue >= 0 && newValue <= capacity,
                "UVLoop: FileBuffer.count set to \(newValue), outside 0...\(capacity); a buffer holds at most its capacity")
            filled = newValue
        }
    }

    /// The bytes the buffer holds (the first ``count``), lent: valid until the buffer's next read,
    /// write or change, and while you hold the buffer. Copy what you keep (`Array(buffer.bytes)`).
    public var bytes: UnsafeRawBufferPointer {
        checkNotLent("FileBuffer.bytes")
        return UnsafeRawBufferPointer(start: base, count: filled)
    }

    /// Calls `body` with the bytes the buffer holds (the first ``count``).
    /// - Parameter body: reads the bytes; they must not escape it.
    /// - Returns: what `body` returns.
    public func withUnsafeBytes<Result, Failure: Error>(
        _ body: (UnsafeRawBufferPointer) throws(Failure) -> Result
    ) throws(Failure) -> Result {
        checkNotLent("FileBuffer.withUnsafeBytes")
        return try body(UnsafeRawBufferPointer(start: base, count: filled))
    }

    /// Calls `body` with the whole buffer (``capacity`` bytes), to fill it for a write; `body`
    /// returns how many bytes it wrote from the start, which becomes ``count``.
    /// - Parameter body: fills the buffer and returns the count filled (from 0 to ``capacity``).
    public func fill<Failure: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(Failure) -> Int) throws(Failure) {
        checkNotLent("FileBuffer.fill")
        let written = try body(UnsafeMutableRawBufferPointer(start: base, count: capacity))
        misusePrecondition(
            written >= 0 && written <= capacity,
            "UVLoop: FileBuffer.fill's body returned \(written), outside 0...\(capacity); return the number of bytes it filled")
        filled = written
    }

    /// Replaces the contents with `bytes` (at most ``capacity`` of them, or the program stops).
    /// - Parameter bytes: the new contents.
    public func set(_ bytes: some Collection<UInt8>) {
        misusePrecondition(
            bytes.count <= capacity,
            "UVLoop: FileBuffer.set with \(bytes.count) bytes, more than the capacity of \(capacity); make a larger buffer")
        fill { room in
            _ = room.initializeMemory(as: UInt8.self, from: bytes)
            return bytes.count
        }
    }

    // MARK: lending to a request

    private func checkNotLent(_ operation: String) {
        misusePrecondition(
            lentTo == nil,
            "UVLoop: \(operation) while a read or write with this FileBuffer is in flight; use it again in the operation's completion")
    }

    /// Lends the buffer to a read of up to `count` bytes for `file`; returns where to read.
    func lendForRead(count: Int, for file: any FileSystemRequestOwner) -> UnsafeMutableRawPointer {
        checkNotLent("a read into a FileBuffer")
        lentTo = file
        lentCount = count
        lentForRead = true
        filled = 0
        return base
    }

    /// Lends the buffer to a write of its contents for `file`; returns where they start.
    func lendForWrite(for file: any FileSystemRequestOwner) -> UnsafeMutableRawPointer {
        checkNotLent("a write from a FileBuffer")
        lentTo = file
        lentForRead = false
        return base
    }

    /// The start of a request failed: the buffer is free again, unchanged.
    func giveBack() { lentTo = nil }
}

extension FileBuffer: FileSystemRequestOwner {
    /// The operation is done: a read's count becomes the contents, the buffer is free again, and
    /// the file it was lent for is told.
    func requestWillComplete(_ request: FileSystemRequest) {
        let file = lentTo
        lentTo = nil
        if lentForRead { filled = max(0, min(request.result, lentCount)) }
        file?.requestWillComplete(request)
    }
}
