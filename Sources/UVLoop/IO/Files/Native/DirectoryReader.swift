import CLibUV

/// An open directory read in batches (`uv_dir_t` from `uv_fs_opendir`, `uv_fs_readdir` into a
/// buffer of entries), for ``DirectoryEntries``.
///
/// `@unchecked Sendable`: the reader is handed to the loop's thread for each request, but only
/// one thing touches its memory at a time. Its one consumer (a ``DirectoryEntries`` iterator)
/// awaits each request, so the open, each read (libuv's pool thread fills `entries`, the loop's
/// thread reads them in the completion) and the close never overlap, and every completion keeps
/// the reader alive until it has run. `deinit` closes the directory when nobody holds it.
final class DirectoryReader: @unchecked Sendable {
    /// The directory's path, for the entries and for errors.
    let path: String
    /// How many entries one read asks for.
    let capacity: Int
    /// libuv's directory, from a successful open until closed.
    private var directory: UnsafeMutablePointer<uv_dir_t>?
    /// The buffer `uv_fs_readdir` fills; the names in it are libuv's, freed by the request's
    /// cleanup after the completion has copied them.
    private let entries: UnsafeMutablePointer<uv_dirent_t>

    init(path: String, capacity: Int) {
        self.path = path
        self.capacity = capacity
        entries = .allocate(capacity: capacity)
        entries.initialize(repeating: uv_dirent_t(), count: capacity)
    }

    deinit {
        close()
        entries.deallocate()
    }

    /// Whether the directory is open.
    var isOpen: Bool { directory != nil }

    func startOpen(_ request: FileSystemRequest) -> Int32 {
        uv_fs_opendir(request.loopPointer, request.request, path, FileSystemRequest.callback)
    }

    /// Takes the directory a finished open made, if it made one. Call from the open's
    /// completion whatever its outcome, so that a directory opened as the loop ended is closed.
    func adoptOpened(_ request: FileSystemRequest) {
        guard request.result >= 0, let opened = request.request.pointee.ptr else { return }
        let directory = opened.assumingMemoryBound(to: uv_dir_t.self)
        directory.pointee.dirents = entries
        directory.pointee.nentries = capacity
        self.directory = directory
    }

    /// Reads the next batch; the completion takes it with `finishRead(_:)`. The directory must
    /// be open.
    func startRead(_ request: FileSystemRequest) -> Int32 {
        uv_fs_readdir(request.loopPointer, request.request, directory, FileSystemRequest.callback)
    }

    /// The batch a finished read got, or its error; call from the read's completion, whatever its
    /// outcome. It cleans the request up there and then: libuv's cleanup of a read frees the
    /// names through the directory's entry buffer, so it must run before the iterator, resumed
    /// by the completion on another thread, can close the directory.
    func finishRead(_ request: FileSystemRequest) -> Result<[DirectoryEntry], LoopError> {
        let result = request.countResult.map { count in
            (0..<min(count, capacity)).map { index in
                DirectoryEntry(name: String(cString: entries[index].name), type: FileType(entries[index].type), directory: path)
            }
        }
        request.cleanUp()
        return result
    }

    /// Closes the directory at once, on the calling thread (`closedir` releases a descriptor and
    /// touches no disk); nothing when it is not open.
    func close() {
        guard let directory else { return }
        self.directory = nil
        var request = uv_fs_t()
        // Synchronous (no callback): libuv runs closedir here and never touches the loop.
        _ = uv_fs_closedir(nil, &request, directory, nil)
        uv_fs_req_cleanup(&request)
    }
}
