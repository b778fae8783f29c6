import CLibUV

/// How ``LoopFileSystem/copyFile(_:to:options:_:)`` copies.
public struct FileCopyOptions: OptionSet, Sendable {
    /// libuv's `UV_FS_COPYFILE_*` bits.
    public let rawValue: Int32

    /// Options from libuv's `UV_FS_COPYFILE_*` bits.
    public init(rawValue: Int32) { self.rawValue = rawValue }

    /// Fail with `UV_EEXIST` when the destination exists, instead of replacing it.
    public static let exclusive = FileCopyOptions(rawValue: UV_FS_COPYFILE_EXCL)
    /// Share the source's blocks with the copy (a copy-on-write clone, `FICLONE`) where the file
    /// system can (Btrfs, XFS); copy the bytes where it cannot.
    public static let cloneIfPossible = FileCopyOptions(rawValue: UV_FS_COPYFILE_FICLONE)
    /// Share the source's blocks with the copy, and fail (`UV_ENOTSUP`, or `UV_EXDEV` across file
    /// systems) where the file system cannot clone.
    public static let cloneOnly = FileCopyOptions(rawValue: UV_FS_COPYFILE_FICLONE_FORCE)
}

extension LoopFileSystem {
    /// Copies the regular file at `source` to `destination` (`copyfile`: the bytes, or a clone,
    /// and the source's permission bits), and calls `completion` on the loop's thread. Loop
    /// thread only.
    ///
    /// An existing destination is replaced unless the options say ``FileCopyOptions/exclusive``;
    /// the copy is made in place, so a reader may see it half written (copy to a temporary name
    /// and ``rename(_:to:_:)`` it for an atomic replacement). A symbolic link as the source is
    /// followed.
    /// - Parameters:
    ///   - source: the file to copy.
    ///   - destination: the copy's path.
    ///   - options: exclusive creation, copy-on-write cloning.
    ///   - completion: gets success or the error, whose path is `"source -> destination"`:
    ///     `UV_ENOENT` for a missing source or destination directory, `UV_EEXIST` for an existing
    ///     destination with ``FileCopyOptions/exclusive``, `UV_EISDIR` for a directory,
    ///     `UV_ENOTSUP` when ``FileCopyOptions/cloneOnly`` cannot clone.
    /// - Throws: ``LoopError/invalidArgument(_:)`` for an empty path or one with a zero byte;
    ///   ``LoopError/shutDown`` (``LoopError/detached``) when the loop no longer accepts work.
    public func copyFile(
        _ source: String, to destination: String, options: FileCopyOptions = [], _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        loop.preconditionOnLoopThread("loop.fileSystem.copyFile(_:to:options:_:)")
        try Self.validate(source, "source")
        try Self.validate(destination, "destination")
        try copyFile(source, destination, options, FileSystemSteps(), completion)
    }

    /// Copies the regular file at `source` to `destination`; see ``copyFile(_:to:options:_:)``.
    /// Callable from any task. A cancelled task withdraws a copy that has not started; one
    /// already copying finishes.
    /// - Throws: like ``copyFile(_:to:options:_:)``, and ``LoopError/cancelled``.
    public func copyFile(_ source: String, to destination: String, options: FileCopyOptions = []) async throws(LoopError) {
        try await perform { completion throws(LoopError) in try copyFile(source, to: destination, options: options) { completion($0) } }
    }

    /// `copyfile`, started as a step of `steps`.
    func copyFile(
        _ source: String, _ destination: String, _ options: FileCopyOptions, _ steps: FileSystemSteps,
        _ completion: @escaping (Result<Void, LoopError>) -> Void
    ) throws(LoopError) {
        try steps.start(requests, "copyfile", path: "\(source) -> \(destination)", completion: .count { completion($0.map { _ in }) }) {
            $0.startCopyFile(from: source, to: destination, flags: options.rawValue)
        }
    }
}
