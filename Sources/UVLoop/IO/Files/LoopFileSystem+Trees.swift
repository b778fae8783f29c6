import CLibUV

/// Removing and copying whole trees: depth first, never following a symbolic link. A failure
/// stops the operation and names the step that failed and its path (`rmdir "/srv/cache/a"
/// failed: ENOTEMPTY`, `unlink "/srv/cache/b" failed: EACCES`); what was done before it stays
/// done.
extension LoopFileSystem {
    /// Removes `path` and, when it is a directory, everything in it (as `rm -r`), and calls
    /// `completion` on the loop's thread with the number of entries removed. A symbolic link is
    /// removed, never followed. Loop thread only.
    ///
    /// Each entry's type is read when its directory is listed, and a directory is listed again
    /// by its path when its turn comes: someone who can write inside the tree and replaces a
    /// subdirectory with a symbolic link in between makes the removal continue where the link
    /// points. Remove trees that others cannot write to, as with `rm -r`.
    ///
    /// Entries that disappear while the tree is removed (removed by someone else) are passed
    /// over. A directory's files and links are removed a few at a time (up to 4 requests at once),
    /// then its subdirectories one after another, then the directory itself; its listing is read
    /// in one request, so a directory of 100,000 entries holds their names in memory while it is
    /// emptied.
    /// - Parameters:
    ///   - path: the file, link or directory to remove.
    ///   - completion: gets the number of files, links and directories removed (`path`
    ///     included), or the error of the step that failed, naming its path: `lstat` with
    ///     `UV_ENOENT` when `path` is missing, `unlink` or `rmdir` with `UV_EACCES` or `UV_EPERM`
    ///     for an entry that may not be removed.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func removeTree(at path: String, _ completion: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.removeTree(at:_:)")
        try Self.validate(path, "path")
        try removeTree(path, FileSystemSteps(), completion)
    }

    /// Removes `path` and everything in it; see ``removeTree(at:_:)``. Callable from any task.
    /// Cancelling the task stops the removal after the requests in flight (a few files at most);
    /// what was removed stays removed.
    /// - Returns: the number of files, links and directories removed.
    /// - Throws: like ``removeTree(at:_:)``, and ``LoopError/cancelled``.
    @discardableResult
    public func removeTree(at path: String) async throws(LoopError) -> Int {
        try Self.validate(path, "path")
        return try await performSteps { steps, completion throws(LoopError) in try removeTree(path, steps, completion) }
    }

    /// Copies `source` to `destination`, which must not exist: a file with
    /// ``copyFile(_:to:options:_:)`` (exclusive), a symbolic link as a link with the same
    /// target, a directory with everything in it (as `cp -R`); and calls `completion` on the
    /// loop's thread with the number of entries copied. Loop thread only.
    ///
    /// Files and directories keep their permission bits (a directory gets them once its entries
    /// are copied); owners and times are not copied. Named pipes, sockets and devices are not
    /// copied: the copy fails with `UV_ENOTSUP` naming the first. The destination must not be
    /// inside the source (the copy would copy itself until a path grows too long).
    /// - Parameters:
    ///   - source: the file, link or directory to copy.
    ///   - destination: the path of the copy.
    ///   - completion: gets the number of files, links and directories copied, or the error of
    ///     the step that failed: `UV_EEXIST` when the destination (or an entry in it) exists,
    ///     `UV_ENOENT` when the source is missing.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func copyTree(_ source: String, to destination: String, _ completion: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.copyTree(_:to:_:)")
        try Self.validate(source, "source")
        try Self.validate(destination, "destination")
        try copyTree(source, destination, type: .unknown, FileSystemSteps(), completion)
    }

    /// Copies `source` to `destination`; see ``copyTree(_:to:_:)``. Callable from any task.
    /// Cancelling the task stops the copy after the request in flight; what was copied stays.
    /// - Returns: the number of files, links and directories copied.
    /// - Throws: like ``copyTree(_:to:_:)``, and ``LoopError/cancelled``.
    @discardableResult
    public func copyTree(_ source: String, to destination: String) async throws(LoopError) -> Int {
        try Self.validate(source, "source")
        try Self.validate(destination, "destination")
        return try await performSteps { steps, completion throws(LoopError) in try copyTree(source, destination, type: .unknown, steps, completion) }
    }
}

extension LoopFileSystem {
    /// `lstat`, then the tree's or the entry's removal.
    func removeTree(_ path: String, _ steps: FileSystemSteps, _ completion: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) {
        try steps.start(
            requests, "lstat", path: path,
            completion: .status { status in
                switch status {
                case .failure(let error): completion(.failure(error))
                case .success(let status):
                    continuing(completion) { () throws(LoopError) in try removeEntry(path, type: status.type, steps, completion) }
                }
            }
        ) { $0.startStatus(followingSymlinks: false) }
    }

    /// Removes an entry of known `type`: a directory's entries then the directory, anything else
    /// with `unlink`; `lstat` first when the type is not known.
    func removeEntry(_ path: String, type: FileType, _ steps: FileSystemSteps, _ completion: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) {
        switch type {
        case .unknown: try removeTree(path, steps, completion)
        case .directory:
            try listDirectory(path, steps) { listed in
                guard case .success(let entries) = listed else { return completion(listed.map { _ in 0 }) }
                // Files and links first, several at once; then the directories, one after another.
                let subtrees = entries.filter { $0.type == .directory || $0.type == .unknown }
                let leaves = entries.filter { $0.type != .directory && $0.type != .unknown }.map(\.path)
                LeafRemoval(leaves) { (leaf, removed: @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) in
                    try steps.start(requests, "unlink", path: leaf, completion: .count { removed($0.map { _ in 1 }) }) { $0.startUnlink() }
                } completion: { leavesRemoved in
                    guard case .success(let leafCount) = leavesRemoved else { return completion(leavesRemoved) }
                    removeEntries(subtrees, from: 0, removed: leafCount, steps) { removed in
                        guard case .success(let count) = removed else { return completion(removed) }
                        continuing(completion) { () throws(LoopError) in
                            try steps.start(requests, "rmdir", path: path, completion: .count { completion($0.map { _ in count + 1 }) }) { $0.startRemoveDirectory() }
                        }
                    }
                }.run()
            }
        default:
            try steps.start(requests, "unlink", path: path, completion: .count { completion($0.map { _ in 1 }) }) { $0.startUnlink() }
        }
    }

    /// Removes `entries[index...]` one after another; an entry already gone is passed over.
    func removeEntries(
        _ entries: [DirectoryEntry], from index: Int, removed: Int, _ steps: FileSystemSteps, _ completion: @escaping (Result<Int, LoopError>) -> Void
    ) {
        guard index < entries.count else { return completion(.success(removed)) }
        let next: (Result<Int, LoopError>) -> Void = { result in
            switch result {
            case .success(let count): removeEntries(entries, from: index + 1, removed: removed + count, steps, completion)
            case .failure(let error) where error.fileSystemCode == UV_ENOENT.rawValue:
                removeEntries(entries, from: index + 1, removed: removed, steps, completion)
            case .failure: completion(result)
            }
        }
        continuing(next) { () throws(LoopError) in try removeEntry(entries[index].path, type: entries[index].type, steps, next) }
    }

    /// Copies one entry of `type` (`lstat` first when not known).
    func copyTree(
        _ source: String, _ destination: String, type: FileType, _ steps: FileSystemSteps, _ completion: @escaping (Result<Int, LoopError>) -> Void
    ) throws(LoopError) {
        switch type {
        case .unknown:
            try steps.start(
                requests, "lstat", path: source,
                completion: .status { status in
                    switch status {
                    case .failure(let error): completion(.failure(error))
                    case .success(let status) where status.type == .directory:
                        continuing(completion) { () throws(LoopError) in try copyDirectory(source, destination, permissions: status.permissions, steps, completion) }
                    case .success(let status) where status.type == .unknown:
                        completion(.failure(.fileSystem(operation: "copy", path: source, code: UV_ENOTSUP.rawValue)))
                    case .success(let status):
                        continuing(completion) { () throws(LoopError) in try copyTree(source, destination, type: status.type, steps, completion) }
                    }
                }
            ) { $0.startStatus(followingSymlinks: false) }
        case .directory: try copyTree(source, destination, type: .unknown, steps, completion)  // its permissions are needed
        case .regular: try copyFile(source, destination, .exclusive, steps) { completion($0.map { 1 }) }
        case .symbolicLink:
            try steps.start(
                requests, "readlink", path: source,
                completion: .request { request in
                    switch Self.resultPath(of: request) {
                    case .failure(let error): completion(.failure(error))
                    case .success(let target):
                        continuing(completion) { () throws(LoopError) in
                            try steps.start(requests, "symlink", path: "\(target) -> \(destination)", completion: .count { completion($0.map { _ in 1 }) }) {
                                $0.startSymbolicLink(target: target, link: destination)
                            }
                        }
                    }
                }
            ) { $0.startReadLink() }
        default: throw .fileSystem(operation: "copy", path: source, code: UV_ENOTSUP.rawValue)
        }
    }

    /// `mkdir` (owner only, so that the entries can be copied in), the entries, then `chmod` to
    /// the source's `permissions`.
    func copyDirectory(
        _ source: String, _ destination: String, permissions: UInt32, _ steps: FileSystemSteps, _ completion: @escaping (Result<Int, LoopError>) -> Void
    ) throws(LoopError) {
        try makeDirectory(destination, 0o700, parents: false, existingAllowed: false, steps) { made in
            guard case .success = made else { return completion(made.map { 0 }) }
            continuing(completion) { () throws(LoopError) in
                try listDirectory(source, steps) { listed in
                    guard case .success(let entries) = listed else { return completion(listed.map { _ in 0 }) }
                    copyEntries(entries, to: destination, from: 0, copied: 0, steps) { copied in
                        guard case .success(let count) = copied else { return completion(copied) }
                        continuing(completion) { () throws(LoopError) in
                            try steps.start(requests, "chmod", path: destination, completion: .count { completion($0.map { _ in count + 1 }) }) {
                                $0.startChangeMode(permissions)
                            }
                        }
                    }
                }
            }
        }
    }

    /// Copies `entries[index...]` into `destination`, one after another.
    func copyEntries(
        _ entries: [DirectoryEntry], to destination: String, from index: Int, copied: Int, _ steps: FileSystemSteps,
        _ completion: @escaping (Result<Int, LoopError>) -> Void
    ) {
        guard index < entries.count else { return completion(.success(copied)) }
        let entry = entries[index]
        let next: (Result<Int, LoopError>) -> Void = { result in
            guard case .success(let count) = result else { return completion(result) }
            copyEntries(entries, to: destination, from: index + 1, copied: copied + count, steps, completion)
        }
        continuing(next) { () throws(LoopError) in
            try copyTree(entry.path, "\(destination)/\(entry.name)", type: entry.type, steps, next)
        }
    }
}

/// Removes the files and links of one directory, up to `width` at once: their requests are short,
/// and several in flight keep the pool's threads busy while completions travel back to the loop.
/// Completes once, with the number removed or the first failure (after the others in flight have
/// finished); a leaf already gone is passed over. Loop thread only.
final class LeafRemoval {
    /// At most this many requests at once: libuv's pool has 4 threads by default.
    static let width = 4

    private let leaves: [String]
    private let remove: (String, @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) -> Void
    private let completion: (Result<Int, LoopError>) -> Void
    private var next = 0
    private var running = 0
    private var removed = 0
    private var failure: LoopError?
    private var finished = false

    init(
        _ leaves: [String], remove: @escaping (String, @escaping (Result<Int, LoopError>) -> Void) throws(LoopError) -> Void,
        completion: @escaping (Result<Int, LoopError>) -> Void
    ) {
        self.leaves = leaves
        self.remove = remove
        self.completion = completion
    }

    /// Starts removals until `width` are in flight; completes when none is left to start or run.
    func run() {
        while failure == nil, next < leaves.count, running < Self.width {
            let leaf = leaves[next]
            next += 1
            running += 1
            do throws(LoopError) {
                // A request's completion never runs inside its start, so `run` is not re-entered.
                try remove(leaf) { result in self.removedOne(result) }
            } catch {
                running -= 1
                failure = failure ?? error
            }
        }
        guard !finished, running == 0, failure != nil || next == leaves.count else { return }
        finished = true
        completion(failure.map { .failure($0) } ?? .success(removed))
    }

    private func removedOne(_ result: Result<Int, LoopError>) {
        running -= 1
        switch result {
        case .success(let count): removed += count
        case .failure(let error) where error.fileSystemCode == UV_ENOENT.rawValue: break
        case .failure(let error): failure = failure ?? error
        }
        run()
    }
}
