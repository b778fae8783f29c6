import CLibUV

/// An entry of a directory: its name and kind, as the directory reports them.
public struct DirectoryEntry: Sendable, Equatable, CustomStringConvertible {
    /// The entry's name in its directory (never `.` or `..`).
    public let name: String
    /// The entry's kind, as the directory records it; a symbolic link is reported as
    /// ``FileType/symbolicLink``, not as what it points to. ``FileType/unknown`` on file systems
    /// that do not record kinds in directories: read ``LoopFileSystem/status(of:followingSymlinks:)``
    /// then.
    public let type: FileType
    /// The path of the directory it is in, as given to the listing.
    public let directory: String

    /// Makes an entry (for tests and for listings made by other means).
    public init(name: String, type: FileType, directory: String) {
        self.name = name
        self.type = type
        self.directory = directory
    }

    /// The entry's path: its directory's path, a `/`, its name.
    public var path: String { directory.hasSuffix("/") ? directory + name : "\(directory)/\(name)" }

    /// The name and kind: `"app.conf (regular file)"`.
    public var description: String { "\(name) (\(type))" }
}

extension LoopFileSystem {
    /// Lists the directory at `path` in one request (`scandir`) and calls `completion` with its
    /// entries, sorted by name (bytewise), without `.` and `..`. Loop thread only.
    ///
    /// The whole listing is read on a pool thread and its entries made on the loop's thread at
    /// once; for a directory of many thousands of entries, read it in batches with
    /// ``directoryEntries(at:batchSize:)``.
    /// - Parameters:
    ///   - path: the directory to list.
    ///   - completion: gets the entries, or the error: `UV_ENOENT` for a missing path,
    ///     `UV_ENOTDIR` for a path that is not a directory, `UV_EACCES` for one that may not be
    ///     read.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func listDirectory(at path: String, _ completion: @escaping (Result<[DirectoryEntry], LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.listDirectory(at:_:)")
        try Self.validate(path, "path")
        try listDirectory(path, FileSystemSteps(), completion)
    }

    /// Lists the directory at `path`; see ``listDirectory(at:_:)``. Callable from any task.
    /// - Parameter path: the directory to list.
    /// - Returns: its entries, sorted by name.
    /// - Throws: like ``listDirectory(at:_:)``, and ``LoopError/cancelled``.
    public func listDirectory(at path: String) async throws(LoopError) -> [DirectoryEntry] {
        try Self.validate(path, "path")
        return try await perform { completion throws(LoopError) in try listDirectory(at: path) { completion($0) } }
    }

    /// The entries of the directory at `path`, read in batches of `batchSize` (`opendir`, then
    /// `readdir` whenever the last batch is used up), as an `AsyncSequence`. Callable from any
    /// task; nothing is read until the first element is asked for.
    ///
    /// Entries come in the directory's own order, without `.` and `..`; one batch at a time is
    /// held, so a directory of 100,000 entries costs no more memory than one of `batchSize`. The
    /// directory stays open while the iteration lasts, and closes when it ends or its iterator is
    /// dropped (a `break` out of `for try await`).
    /// - Parameters:
    ///   - path: the directory to list.
    ///   - batchSize: how many entries one request reads, 1 to 65,536.
    /// - Returns: the sequence; its errors (opening or reading) come from `next()`.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path, one with a zero byte, or a
    ///   batch size out of range.
    public func directoryEntries(at path: String, batchSize: Int = 256) throws(LoopError) -> DirectoryEntries {
        try Self.validate(path, "path")
        guard (1...65_536).contains(batchSize) else {
            throw .invalidArgument("batchSize must be 1 to 65536 (got \(batchSize))")
        }
        return DirectoryEntries(fileSystem: self, path: path, batchSize: batchSize)
    }

    /// `scandir`, started as a step of `steps`.
    func listDirectory(_ path: String, _ steps: FileSystemSteps, _ completion: @escaping (Result<[DirectoryEntry], LoopError>) -> Void) throws(LoopError) {
        try steps.start(
            requests, "scandir", path: path,
            completion: .request { request in completion(request.countResult.map { _ in request.scannedEntries(in: path) }) }
        ) { $0.startScanDirectory() }
    }
}

/// The entries of a directory, read in batches; see
/// ``LoopFileSystem/directoryEntries(at:batchSize:)``. Each iteration opens the directory anew;
/// an iterator is used by one task.
public struct DirectoryEntries: AsyncSequence, Sendable {
    /// An entry of the directory.
    public typealias Element = DirectoryEntry
    /// Why the directory could not be opened or read.
    public typealias Failure = LoopError

    let fileSystem: LoopFileSystem
    let path: String
    let batchSize: Int

    /// A new iteration, which opens the directory when first asked for an entry.
    public func makeAsyncIterator() -> Iterator {
        Iterator(fileSystem: fileSystem, owner: DirectoryOwner(DirectoryReader(path: path, capacity: batchSize)))
    }

    /// One iteration over the directory. Not `Sendable`: one task iterates it.
    public struct Iterator: AsyncIteratorProtocol {
        /// An entry of the directory.
        public typealias Element = DirectoryEntry
        /// Why the directory could not be opened or read.
        public typealias Failure = LoopError

        let fileSystem: LoopFileSystem
        /// Held by the iterator alone, so that dropping the iterator closes the directory.
        let owner: DirectoryOwner
        var reader: DirectoryReader { owner.reader }
        private var batch: [DirectoryEntry] = []
        private var index = 0
        private var finished = false

        init(fileSystem: LoopFileSystem, owner: DirectoryOwner) {
            self.fileSystem = fileSystem
            self.owner = owner
        }

        /// The next entry, or `nil` after the last.
        /// - Throws: see ``next(isolation:)``.
        public mutating func next() async throws(LoopError) -> DirectoryEntry? {
            try await next(isolation: nil)
        }

        /// The next entry, or `nil` after the last; reads the next batch when this one is used
        /// up.
        /// - Parameter actor: the caller's actor; leave the default.
        /// - Throws: the error of opening (`opendir`, naming the path: `UV_ENOENT`,
        ///   `UV_ENOTDIR`, `UV_EACCES`) or reading (`readdir`), after which the sequence ends;
        ///   ``LoopError/cancelled`` when the task is cancelled while a batch is read (the
        ///   iteration can go on: nothing was skipped); the loop's refusal when it has shut down.
        public mutating func next(isolation actor: isolated (any Actor)? = #isolation) async throws(LoopError) -> DirectoryEntry? {
            if index < batch.count {
                defer { index += 1 }
                return batch[index]
            }
            guard !finished else { return nil }
            do throws(LoopError) {
                let reader = reader
                let fileSystem = fileSystem
                if !reader.isOpen {
                    try await fileSystem.perform { (completion: @escaping (Result<Void, LoopError>) -> Void) throws(LoopError) in
                        try fileSystem.requests.start(
                            "opendir", path: reader.path,
                            completion: .request { request in
                                reader.adoptOpened(request)
                                completion(request.countResult.map { _ in })
                            }
                        ) { reader.startOpen($0) }
                    }
                }
                batch = try await fileSystem.perform { completion throws(LoopError) in
                    try fileSystem.requests.start(
                        "readdir", path: reader.path,
                        completion: .request { request in completion(reader.finishRead(request)) }
                    ) { reader.startRead($0) }
                }
            } catch {
                if error != .cancelled { end() }
                throw error
            }
            guard !batch.isEmpty else {
                end()
                return nil
            }
            index = 1
            return batch[0]
        }

        private mutating func end() {
            finished = true
            batch = []
            reader.close()
        }
    }
}

@available(*, unavailable)
extension DirectoryEntries.Iterator: Sendable {}

/// Closes its directory when the iterator that holds it goes away. Requests capture the reader,
/// not the owner, and the loop may release them a little later; no request is in flight then,
/// since the iterator awaits each.
final class DirectoryOwner {
    let reader: DirectoryReader

    init(_ reader: DirectoryReader) { self.reader = reader }

    deinit { reader.close() }
}
