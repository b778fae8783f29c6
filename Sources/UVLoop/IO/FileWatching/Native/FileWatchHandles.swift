import CLibUV
import Glibc

/// A `uv_fs_event_t`: the kernel's notifications (inotify) for one path. Loop thread only.
///
/// libuv 1.44 on Linux adds an inotify watch for the path: for a directory, its entries'
/// creation, deletion, renaming and changes, each with the entry's name; for a file, its own
/// changes. `UV_RENAME` covers creation, deletion and renaming, `UV_CHANGE` contents and
/// attributes. A watched path that is deleted gets a last `UV_RENAME` and no event after it.
struct FileEventHandle: NativeIOHandle {
    let handle: LibUVHandle<uv_fs_event_t>

    init(loop: NativeLoop) throws(LoopError) {
        handle = try LibUVHandle(
            "uv_fs_event_init", initialize: { uv_fs_event_init(loop.pointer, $0) },
            context: FileEventContext())
    }

    /// Starts watching `path`; `onEvent` gets the entry's name (nil when libuv has none), the
    /// `UV_RENAME`/`UV_CHANGE` bits and libuv's status. Returns libuv's status for the call.
    func start(_ path: String, onEvent: @escaping (String?, Int32, Int32) -> Void) -> Int32 {
        LibUVHandle<uv_fs_event_t>.context(of: handle.pointer, as: FileEventContext.self).onEvent = onEvent
        return uv_fs_event_start(handle.pointer, { handle, name, events, status in
            guard let handle else { return }
            let context = LibUVHandle<uv_fs_event_t>.context(of: handle, as: FileEventContext.self)
            context.onEvent?(name.map { String(cString: $0) }, events, status)
        }, path, 0)
    }

    func close() { handle.close() }

    func unref() { handle.unref() }

    static let renamed = Int32(UV_RENAME.rawValue)
    static let changed = Int32(UV_CHANGE.rawValue)
}

final class FileEventContext: HandleContext {
    var onEvent: ((String?, Int32, Int32) -> Void)?

    override func handleDidClose() { onEvent = nil }
}

/// A `uv_fs_poll_t`: `stat` of one path every interval, for file systems without notifications
/// (network and FUSE mounts). Loop thread only. libuv compares the results and calls back when
/// they differ, or with an error status while the path cannot be read (once per new error).
struct FilePollHandle: NativeIOHandle {
    let handle: LibUVHandle<uv_fs_poll_t>

    init(loop: NativeLoop) throws(LoopError) {
        handle = try LibUVHandle(
            "uv_fs_poll_init", initialize: { uv_fs_poll_init(loop.pointer, $0) }, context: FilePollContext())
    }

    /// Starts polling `path` every `intervalMilliseconds`; `onPoll` gets libuv's status and the
    /// previous and current status (nil when the path did not exist then).
    func start(
        _ path: String, intervalMilliseconds: UInt32, onPoll: @escaping (Int32, FileStatus?, FileStatus?) -> Void
    ) -> Int32 {
        LibUVHandle<uv_fs_poll_t>.context(of: handle.pointer, as: FilePollContext.self).onPoll = onPoll
        return uv_fs_poll_start(handle.pointer, { handle, status, previous, current in
            guard let handle else { return }
            let context = LibUVHandle<uv_fs_poll_t>.context(of: handle, as: FilePollContext.self)
            context.onPoll?(status, previous.flatMap(FileStatus.init(polled:)), current.flatMap(FileStatus.init(polled:)))
        }, path, intervalMilliseconds)
    }

    func close() { handle.close() }

    func unref() { handle.unref() }
}

final class FilePollContext: HandleContext {
    var onPoll: ((Int32, FileStatus?, FileStatus?) -> Void)?

    override func handleDidClose() { onPoll = nil }
}

extension FileStatus {
    /// The status libuv read, or nil for the all-zero status it reports for a path that does not
    /// exist.
    init?(polled stat: UnsafePointer<uv_stat_t>) {
        guard stat.pointee.st_ino != 0 || stat.pointee.st_mode != 0 else { return nil }
        self.init(stat: stat)
    }
}

/// Whether `path` exists now (`access(F_OK)`).
func pathExists(_ path: String) -> Bool { access(path, F_OK) == 0 }
