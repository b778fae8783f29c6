import CLibUV

/// The ways a ``Loop`` refuses a request. Each says what happened and what to do instead.
///
/// Every error a UVLoop call throws is a `LoopError`, most of them through typed throws
/// (`throws(LoopError)`), so a `catch` can switch over the cases exhaustively.
public enum LoopError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The loop has begun shutting down (or has shut down); it accepts no new work.
    ///
    /// The work whose call threw was not queued and will not run.
    case shutDown
    /// The loop was attached from C code and has been detached (``Loop/detach()``); it accepts no
    /// new work.
    case detached
    /// Waiting here would block a thread on work that needs that same thread: the loop's own
    /// thread waiting for its loop, or a cycle of loops whose threads wait for each other in
    /// synchronous invokes. `operation` names the wait.
    case wouldDeadlock(operation: String)
    /// An ``Inbox`` of `capacity` values is full and the sender is the loop's own thread, which
    /// would have to wait for itself to drain it.
    case inboxFull(capacity: Int)
    /// The `Inbox` was closed with `close()`; its loop may still be running.
    case inboxClosed
    /// A wait with a timeout ran out before the work completed.
    case timedOut
    /// An argument was out of range; the message names it.
    case invalidArgument(String)
    /// libuv's `function` returned the error `code` (a negative `errno`-style value such as
    /// `UV_EMFILE`).
    case libuv(function: String, code: Int32)
    /// ``MainLoop/install(_:)`` was called after the process-wide loop was chosen.
    case mainLoopAlreadyChosen
    /// ``Loop/attach(_:postBudget:)-(UnsafeMutablePointer<uv_loop_t>,_)`` was called on a
    /// `uv_loop_t` that UVLoop is already attached to and has not detached from.
    case alreadyAttached
    /// The connection, listener, datagram socket or name lookup was closed with `close()` (or
    /// reset) before this call, or while the operation was pending.
    case streamClosed
    /// A write on a connection whose writing side was shut down with
    /// ``StreamConnection/shutdownWrites(_:)`` (a half-close).
    case writesShutDown
    /// The task waiting in an async call (a read, write, accept, connect or name lookup) was
    /// cancelled, so the call returned without its result.
    ///
    /// What the call waits on stays usable: the connection or listener is still open, and a
    /// write's bytes stay queued. A connect or name lookup in progress is abandoned.
    case cancelled
    /// A child process wrote more than `limit` bytes to the output that
    /// ``Loop/run(_:outputLimit:timeout:)`` collects; the child was killed.
    case outputLimitExceeded(limit: Int)
    /// A frame read with ``StreamFraming`` was longer than its `maxLength` (a line without its
    /// end, a length prefix announcing more): reading stopped there. The connection stays open
    /// for writing: answer, then close it (``StreamConnection/closeAfterFlushing(within:)->()``).
    case frameTooLong(maxLength: Int)
    /// The stream ended in the middle of a length-prefixed frame; `byteCount` bytes of it had
    /// arrived.
    case incompleteFrame(byteCount: Int)
    /// A file-system `operation` (`"open"`, `"read"`, `"rename"`, …) on `path` failed with the
    /// system's error `code` (a negative `errno`-style value such as `UV_ENOENT`). `path` is empty
    /// for an operation on an open file whose path is not known.
    case fileSystem(operation: String, path: String, code: Int32)
    /// The file was closed with `close()` before this call, or while the operation
    /// waited to start.
    case fileClosed
    /// The file at `path` holds more than `limit` bytes, the most that
    /// ``LoopFileSystem/readFile(at:limit:)`` was allowed to read; nothing was returned.
    case fileTooLarge(path: String, limit: Int)

    static func libuv(_ code: Int32, _ function: String) -> LoopError {
        .libuv(function: function, code: code)
    }

    /// What went wrong and what to do instead.
    public var description: String {
        switch self {
        case .shutDown:
            return "the loop is shut down (or shutting down) and accepts no new work; post before calling shutdown(), or create a new Loop"
        case .detached:
            return "the loop was detached from its C owner and accepts no new work; attach the uv_loop_t again to keep using it"
        case .wouldDeadlock(let operation):
            return "\(operation) would wait for work that needs the waiting thread itself (deadlock); await it, post, or use a completion callback instead"
        case .inboxFull(let capacity):
            return "the inbox is full (\(capacity) values waiting) and this send is on the loop's thread, which must drain it first; create the inbox with a larger capacity, or send from another thread (which waits for room)"
        case .inboxClosed:
            return "the inbox was closed with close() and accepts no more values (the loop itself still runs); make a new inbox with loop.makeInbox to go on sending"
        case .timedOut:
            return "the wait timed out before the work completed"
        case .invalidArgument(let message):
            return "invalid argument: \(message)"
        case .mainLoopAlreadyChosen:
            return "the process-wide main loop was already chosen (by an earlier install, or by the first use of MainLoop.shared or @MainLoopActor, which starts one on its own thread); call MainLoop.install(_:) once, at startup, before anything uses the main loop"
        case .alreadyAttached:
            return "UVLoop is already attached on this uv_loop_t; keep using the Loop that attach returned, or detach() it before attaching again"
        case .streamClosed:
            return "the connection (or listener, datagram socket, or name lookup) was closed with close() and accepts no more operations; open a new one"
        case .writesShutDown:
            return "the connection's writing side was shut down (shutdownWrites) and accepts no more writes; write everything before shutting down writes"
        case .cancelled:
            return "the waiting task was cancelled, so the call returned without its result; the connection or listener stays open (a write's bytes stay queued), and a new call may wait again"
        case .outputLimitExceeded(let limit):
            return "the child process wrote more than \(limit) bytes of output and was killed; raise outputLimit, or read its output as a stream (Loop.spawn with .pipe)"
        case .frameTooLong(let maxLength):
            return "a frame was longer than its limit of \(maxLength) bytes, and reading stopped; answer the peer if the protocol says so, then close the connection (closeAfterFlushing), or raise maxLength"
        case .incompleteFrame(let byteCount):
            return "the stream ended inside a length-prefixed frame (\(byteCount) bytes of it had arrived); the peer closed early"
        case .fileSystem(let operation, let path, let code):
            let subject = path.isEmpty ? operation : "\(operation) \"\(path)\""
            return "\(subject) failed: \(String(cString: uv_err_name(code))) (\(String(cString: uv_strerror(code))))\(Self.advice(forFileError: code))"
        case .fileClosed:
            return "the file was closed with close() and accepts no more operations; open it again"
        case .fileTooLarge(let path, let limit):
            return "\"\(path)\" holds more than the limit of \(limit) bytes; raise the limit, or read it in parts with loop.fileSystem.open"
        case .libuv(let function, let code):
            return "\(function) failed: \(String(cString: uv_err_name(code))) (\(String(cString: uv_strerror(code))))"
        }
    }
}

extension LoopError {
    /// What to do about a file-system error, for the common codes.
    static func advice(forFileError code: Int32) -> String {
        switch code {
        case UV_ENOENT.rawValue: "; check the path, or create it first"
        case UV_EEXIST.rawValue: "; remove it first, or open it without exclusive creation"
        case UV_EACCES.rawValue, UV_EPERM.rawValue: "; check the permissions of the path and its directories"
        case UV_ENOTDIR.rawValue: "; a part of the path is not a directory"
        case UV_EISDIR.rawValue: "; the path is a directory"
        case UV_ENOTEMPTY.rawValue: "; remove the directory's contents first"
        case UV_EMFILE.rawValue, UV_ENFILE.rawValue: "; too many open files: close some, or raise the limit (ulimit -n)"
        case UV_ENOSPC.rawValue: "; the file system is full"
        default: ""
        }
    }
}
