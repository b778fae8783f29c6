import CLibUV
import Synchronization

/// A change to a watched path, as the kernel reports it (``Loop/watchFile(_:keepsOwnerLoopAlive:handler:)``).
public struct FileChange: Sendable, Equatable, CustomStringConvertible {
    /// The entry that changed: a name inside a watched directory, or the watched file's own name.
    /// Nil when the kernel did not say. In merged changes, the latest entry's name.
    public let name: String?
    /// Something was created, deleted or renamed.
    public let renamed: Bool
    /// Contents or attributes changed.
    public let changed: Bool

    /// A change of `name`.
    public init(name: String?, renamed: Bool, changed: Bool) {
        self.name = name
        self.renamed = renamed
        self.changed = changed
    }

    /// "renamed x", "changed x", "renamed and changed x".
    public var description: String {
        let what = [renamed ? "renamed" : nil, changed ? "changed" : nil].compactMap { $0 }.joined(separator: " and ")
        return name.map { "\(what) \($0)" } ?? what
    }

    /// Two changes in one element: the kinds of both, the latest name. (A file written through a
    /// temporary file and renamed into place ends with its own name.)
    static func merged(_ first: FileChange, _ second: FileChange) -> FileChange {
        FileChange(
            name: second.name ?? first.name,
            renamed: first.renamed || second.renamed, changed: first.changed || second.changed)
    }
}

/// Two successive readings of a polled path; nil where the path did not exist.
public struct FileStatusChange: Sendable, Equatable {
    /// The reading before the change.
    public let previous: FileStatus?
    /// The reading now.
    public let current: FileStatus?
}

/// A watch of one path: the kernel's notifications (``Loop/watchFile(_:keepsOwnerLoopAlive:handler:)``)
/// or periodic `stat` (``Loop/pollFile(_:every:keepsOwnerLoopAlive:handler:)``). End it with
/// ``cancel()``.
///
/// The handle is usable from any thread; the handler runs on the loop's thread. The watch stays
/// open until ``cancel()``, until the watched path is deleted (a notification watch gets that
/// change and then ends), until an error ends it (its handler gets the error, once), or until the
/// loop shuts down or is detached. Dropping the handle changes nothing.
public final class FileWatch: Sendable {
    /// The loop whose thread runs the handler.
    public let loop: Loop
    /// The watched path.
    public let path: String

    private let ended = Atomic<Bool>(false)
    /// Loop thread only: closes the watch's core while it is open.
    let closer = LoopConfined<(() -> Void)?>(nil)
    /// Runs once the watch has ended, on any thread (ends an async face's sequence).
    let onEnd: (@Sendable () -> Void)?

    init(loop: Loop, path: String, onEnd: (@Sendable () -> Void)? = nil) {
        self.loop = loop
        self.path = path
        self.onEnd = onEnd
    }

    /// Whether the watch is open. Callable from any thread.
    public var isActive: Bool { !ended.load(ordering: .acquiring) }

    /// Ends the watch. Callable from any thread; idempotent. On the loop's thread the handler is
    /// never called again once this returns; from another thread, not for a change the loop
    /// handles after this call.
    /// - Returns: `true` if this call ended the watch; `false` if it had already ended.
    @discardableResult
    public func cancel() -> Bool {
        guard end() else { return false }
        _ = loop.onLoopThread { [self] in closer.value?() }
        return true
    }

    /// Marks the watch ended, once, and tells the async face. Any thread.
    func end() -> Bool {
        guard !ended.exchange(true, ordering: .acquiringAndReleasing) else { return false }
        onEnd?()
        return true
    }

    /// The error of a watch that cannot start, naming the path and saying what to do.
    static func startError(_ status: Int32, path: String, function: String) -> LoopError {
        if status == UV_ENOENT.rawValue {
            return .invalidArgument(
                "cannot watch \(path): no such file or directory; watch its directory to see it appear, or poll it (pollFile), which reports when it exists")
        }
        return .libuv(function: "\(function) (\(path))", code: status)
    }
}

extension FileWatch: CancellableWatch {}

/// The loop-thread side of a notification watch: its `uv_fs_event_t` and its handler.
final class FileEventWatchCore: IOHandleCore<FileEventHandle> {
    private var watch: FileWatch?
    private var handler: (@Sendable (FileWatch, Result<FileChange, LoopError>) -> Void)?

    init(
        watch: FileWatch, keepsOwnerLoopAlive: Bool,
        handler: @escaping @Sendable (FileWatch, Result<FileChange, LoopError>) -> Void
    ) throws(LoopError) {
        self.watch = watch
        self.handler = handler
        try super.init(loop: watch.loop)
        let opened = try FileEventHandle(loop: loop.native)
        let status = opened.start(watch.path) { [unowned self] name, events, status in
            asLoopCallback { event(name: name, events: events, status: status) }
        }
        guard status == 0 else {
            opened.close()
            throw FileWatch.startError(status, path: watch.path, function: "uv_fs_event_start")
        }
        open(opened, keepsOwnerLoopAlive: keepsOwnerLoopAlive)
        watch.closer.value = { [unowned self] in close(reason: .streamClosed) }
    }

    private func event(name: String?, events: Int32, status: Int32) {
        guard let watch, let handler, watch.isActive else { return }
        guard status == 0 else {
            guard watch.end() else { return }
            close(reason: .libuv(status, "uv_fs_event (\(watch.path))"))
            return handler(watch, .failure(.libuv(status, "uv_fs_event (\(watch.path))")))
        }
        let change = FileChange(
            name: name, renamed: events & FileEventHandle.renamed != 0, changed: events & FileEventHandle.changed != 0)
        handler(watch, .success(change))
        // The watched path itself is gone: the kernel reports nothing more for it.
        if change.renamed, !pathExists(watch.path), watch.end() { close(reason: .streamClosed) }
    }

    override func didClose(reason: LoopError) {
        _ = watch?.end()
        watch?.closer.value = nil
        watch = nil
        handler = nil
    }
}

/// The loop-thread side of a polling watch: its `uv_fs_poll_t` and its handler.
final class FilePollWatchCore: IOHandleCore<FilePollHandle> {
    private var watch: FileWatch?
    private var handler: (@Sendable (FileWatch, Result<FileStatusChange, LoopError>) -> Void)?

    init(
        watch: FileWatch, interval: Duration, keepsOwnerLoopAlive: Bool,
        handler: @escaping @Sendable (FileWatch, Result<FileStatusChange, LoopError>) -> Void
    ) throws(LoopError) {
        let milliseconds = interval.components.seconds * 1_000 + interval.components.attoseconds / 1_000_000_000_000_000
        guard milliseconds >= 1, let interval = UInt32(exactly: milliseconds) else {
            throw .invalidArgument("a poll interval must be 1 ms to 49 days (got \(interval))")
        }
        self.watch = watch
        self.handler = handler
        try super.init(loop: watch.loop)
        let opened = try FilePollHandle(loop: loop.native)
        let status = opened.start(watch.path, intervalMilliseconds: interval) { [unowned self] status, previous, current in
            asLoopCallback { poll(status: status, previous: previous, current: current) }
        }
        guard status == 0 else {
            opened.close()
            throw FileWatch.startError(status, path: watch.path, function: "uv_fs_poll_start")
        }
        open(opened, keepsOwnerLoopAlive: keepsOwnerLoopAlive)
        watch.closer.value = { [unowned self] in close(reason: .streamClosed) }
    }

    /// A path that does not exist is a change like any (it appears or disappears): libuv reports
    /// it as `UV_ENOENT` with all-zero readings.
    private func poll(status: Int32, previous: FileStatus?, current: FileStatus?) {
        guard let watch, let handler, watch.isActive else { return }
        if status != 0 && status != UV_ENOENT.rawValue {
            guard watch.end() else { return }
            close(reason: .libuv(status, "uv_fs_poll (\(watch.path))"))
            return handler(watch, .failure(.libuv(status, "uv_fs_poll (\(watch.path))")))
        }
        handler(watch, .success(FileStatusChange(previous: previous, current: status == 0 ? current : nil)))
    }

    override func didClose(reason: LoopError) {
        _ = watch?.end()
        watch?.closer.value = nil
        watch = nil
        handler = nil
    }
}
