import CLibUV
import CUVLoop
import UVLoop

extension LoopError {
    /// The C API's error code for this error (one of the `UVLOOP_E*` codes of uvloop.h, or the
    /// libuv code of `LoopError.libuv(function:code:)`): what a Swift component's `@c` entry
    /// point returns to its C caller.
    public var cErrorCode: Int32 {
        switch self {
        case .shutDown, .inboxClosed: return UVLOOP_ESHUTDOWN
        case .detached: return UVLOOP_EDETACHED
        case .alreadyAttached: return UVLOOP_EALREADY
        case .wouldDeadlock: return UVLOOP_EDEADLOCK
        case .libuv(_, let code), .fileSystem(_, _, let code): return code
        case .fileClosed: return Int32(UV_EBADF.rawValue)
        case .fileTooLarge: return Int32(UV_EFBIG.rawValue)
        case .timedOut: return Int32(UV_ETIMEDOUT.rawValue)
        case .inboxFull: return Int32(UV_ENOBUFS.rawValue)
        case .streamClosed: return Int32(UV_EBADF.rawValue)
        case .writesShutDown: return Int32(UV_EPIPE.rawValue)
        case .cancelled: return Int32(UV_ECANCELED.rawValue)
        case .outputLimitExceeded: return Int32(UV_ENOBUFS.rawValue)
        case .frameTooLong: return Int32(UV_E2BIG.rawValue)
        case .incompleteFrame: return Int32(UV_EOF.rawValue)
        case .invalidArgument, .mainLoopAlreadyChosen:
            return UVLOOP_EINVAL
        }
    }
}

/// Runs `body`, returning 0, or the C code of the `LoopError` it threw.
@inline(__always)
func cResult(_ body: () throws(LoopError) -> Void) -> Int32 {
    do {
        try body()
        return 0
    } catch {
        return error.cErrorCode
    }
}
