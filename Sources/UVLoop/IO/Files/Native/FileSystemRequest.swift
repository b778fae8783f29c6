import CLibUV
import Glibc

/// One libuv file-system request (`uv_fs_t`), reused for one operation after another: the
/// request's memory, what its callback calls, and the path and operation its errors name.
/// Loop thread only, apart from the pool thread that libuv runs the system call on, which touches
/// only libuv's part of the request.
///
/// Requests come from the loop's `FileSystemRequests`, which keeps each one alive while it is in
/// flight (so the unretained pointer in `data` stays valid until the callback) and takes it back
/// once its completion has run. One thin starter per libuv call lives in the extensions
/// (`FileSystemRequest+Paths.swift`, `FileSystemRequest+Descriptors.swift`); each fills the
/// request through a `uv_fs_*` call with `FileSystemRequest.callback` and returns libuv's status.
final class FileSystemRequest {
    /// Raw storage: allocated once, freed in `deinit`, never while libuv holds it (the pool keeps
    /// an in-flight request alive).
    let request: UnsafeMutablePointer<uv_fs_t>
    /// What the request is for, named in its errors: `"open"`, `"stat"`, ….
    var operation: StaticString = ""
    /// The path the operation works on, named in its errors (empty for one on a descriptor, and
    /// for a batch's request, whose client names the path).
    var path: String = ""
    /// Called on the loop's thread when libuv is done with the request; cleared before it runs.
    var completion: FileSystemCompletion?
    /// Told instead of a completion when libuv is done with the request (a batch's requests);
    /// cleared before it is told. Unmanaged, not retained by the request: a client keeps itself
    /// alive while any of its requests is in flight, and hands its hold back from
    /// `requestDidFinish` when it lets go of itself.
    private var client: Unmanaged<FileSystemRequestClient>?
    /// Set when the loop's ending withdrew the request: the completion gets this refusal.
    var endedBy: LoopError? {
        didSet { wasEnded = endedBy != nil }
    }
    /// Whether `endedBy` is set: a flag for the paths taken per request, where reading the
    /// optional error copies it out (an outlined copy and destroy) only to compare it with nil.
    private(set) var wasEnded = false
    /// This use of the request, unique in its pool, so that a late cancel of an earlier use does
    /// nothing (see `FileSystemRequests.cancel(ticket:)`).
    private(set) var ticket: UInt64 = 0
    /// The request's position in the pool's in-flight list, or -1.
    var inFlightIndex = -1
    /// A number the caller gives this use of the request and reads back in its completion (a
    /// batch's index of the path), so that one completion can serve many requests.
    var tag = 0
    /// Told when the request finishes, before its completion runs (an open file counting its
    /// operations in flight, a buffer lent to a read); cleared then. Kept alive meanwhile.
    var owner: (any FileSystemRequestOwner)?
    /// Unmanaged: the pool outlives every use of it here. A request is used only while its pool
    /// holds it (in flight, which keeps the pool alive, or in the pool's free list), and a
    /// reference, even `unowned`, would pay a retain and a release of the pool per use.
    private let poolReference: Unmanaged<FileSystemRequests>

    init(pool: FileSystemRequests) {
        poolReference = .passUnretained(pool)
        request = .allocate(capacity: 1)
        UnsafeMutableRawPointer(request).initializeMemory(as: UInt8.self, repeating: 0, count: MemoryLayout<uv_fs_t>.size)
    }

    deinit { request.deallocate() }

    var loopPointer: UnsafeMutablePointer<uv_loop_t> { poolReference._withUnsafeGuaranteedRef { $0.native.pointer } }

    /// Prepares the request for a new operation on `path`; the caller then sets what it calls
    /// when finished (`completion`, or `setClient`).
    func begin(_ operation: StaticString, path: String, ticket: UInt64) {
        self.ticket = ticket
        self.operation = operation
        self.path = path
        if wasEnded { endedBy = nil }
        // Unmanaged: the pool holds the request strongly while it is in flight, which covers
        // every callback libuv makes with this pointer.
        request.pointee.data = Unmanaged.passUnretained(self).toOpaque()
    }

    /// Makes `client` the one told when the request finishes, for this use.
    func setClient(_ client: FileSystemRequestClient) { self.client = .passUnretained(client) }

    /// Tells the request's client, if it has one, that the request finished, and forgets it.
    /// The client is not retained for the call: it holds itself while its requests are in
    /// flight, and when it lets go of itself it returns that hold instead of dropping it.
    /// - Returns: whether the request had a client, and the client's hold on itself if it let go
    ///   of it, for the caller to release once this call has returned.
    func tellClient() -> (told: Bool, released: FileSystemRequestClient?) {
        guard let client else { return (false, nil) }
        self.client = nil
        return (true, client._withUnsafeGuaranteedRef { $0.requestDidFinish(self) })
    }

    /// Forgets the client without telling it (the request did not start).
    func dropClient() { client = nil }

    /// libuv's result: a count or descriptor when zero or more, a negative error code otherwise.
    var result: Int { request.pointee.result }

    /// The error for a failed request: the loop's refusal when its ending withdrew it, otherwise
    /// `code` with the operation and path.
    func error(code: Int32) -> LoopError {
        if let endedBy { return endedBy }
        if code == UV_ECANCELED.rawValue { return .cancelled }
        return .fileSystem(operation: "\(operation)", path: path, code: code)
    }

    /// The result as a status (`stat`, `lstat`, `fstat`), or the error.
    var statusResult: Result<FileStatus, LoopError> {
        if let endedBy { return .failure(endedBy) }
        return result >= 0 ? .success(status) : .failure(error(code: Int32(truncatingIfNeeded: result)))
    }

    /// The result as a count, or the error.
    var countResult: Result<Int, LoopError> {
        if let endedBy { return .failure(endedBy) }
        return result >= 0 ? .success(result) : .failure(error(code: Int32(truncatingIfNeeded: result)))
    }

    /// Withdraws the request if no pool thread has started it (`uv_cancel`); the callback then
    /// reports `UV_ECANCELED`. Returns whether it was withdrawn. Loop thread only, while in flight.
    func cancel() -> Bool {
        return uv_cancel(UnsafeMutableRawPointer(request).assumingMemoryBound(to: uv_req_t.self)) == 0
    }

    /// The callback every starter passes to libuv. Neither the request nor its pool is retained
    /// for the call: the pool holds the request (its in-flight list, then its free list or the
    /// pool's own `finish`) and holds itself while requests are in flight; `finish` hands that
    /// hold back, to be let go only once the pool's call has returned.
    static let callback: uv_fs_cb = { request in
        let released = Unmanaged<FileSystemRequest>.fromOpaque(request!.pointee.data!)._withUnsafeGuaranteedRef { owner in
            owner.poolReference._withUnsafeGuaranteedRef { $0.finish(owner) }
        }
        withExtendedLifetime(released) {}
    }

    /// Frees what libuv allocated for the result (a path, a directory listing); the request can
    /// then be reused.
    func cleanUp() { uv_fs_req_cleanup(request) }

    /// The status libuv read (`stat`, `lstat`, `fstat`).
    var status: FileStatus { FileStatus(stat: &request.pointee.statbuf) }

    /// Writes the status libuv read into `results[index]` as a success, in place. The slot must
    /// hold a placeholder that owns nothing (`.failure(.cancelled)`): it is overwritten without
    /// being destroyed, which spares a destroy through `Result`'s value witness and a copy of the
    /// status per path (a batch's result for each path it stats).
    func storeStatus(in results: inout [Result<FileStatus, LoopError>], at index: Int) {
        results.withUnsafeMutableBufferPointer { buffer in
            precondition(index >= 0 && index < buffer.count, "result index out of range")
            assert({ if case .failure(.cancelled) = buffer[index] { return true } else { return false } }())
            (buffer.baseAddress! + index).initialize(to: .success(FileStatus(stat: &request.pointee.statbuf)))
        }
    }

    /// The path libuv produced (`readlink`, `realpath`, `mkdtemp`), or nil.
    var resultPath: String? {
        if request.pointee.fs_type == UV_FS_MKDTEMP || request.pointee.fs_type == UV_FS_MKSTEMP {
            return request.pointee.path.map { String(cString: $0) }
        }
        return request.pointee.ptr.map { String(cString: $0.assumingMemoryBound(to: CChar.self)) }
    }
}

/// What an operation on an open file keeps informed: told on the loop's thread that `request`
/// finished, before the request's completion runs and while its result can still be read.
protocol FileSystemRequestOwner: AnyObject {
    func requestWillComplete(_ request: FileSystemRequest)
}

/// What the requests of a batch that all finish the same way tell instead of a completion per
/// request (see `FileSystemRequests.start(_:path:client:tag:_:)`): the request is set up with no
/// closure and no enum to copy in and out. A subclass overrides `requestDidFinish`.
class FileSystemRequestClient {
    /// Called on the loop's thread when `request` finished, while its result can still be read;
    /// the request's `tag` says which of the client's requests it is.
    /// - Returns: the client's hold on itself when it let go of it (its last request finished),
    ///   for the caller to release after the call; nil otherwise. The client must not drop that
    ///   hold during the call: the request does not retain it for the call.
    func requestDidFinish(_ request: FileSystemRequest) -> FileSystemRequestClient? { nil }
}

/// What a finished request calls, stored without wrapping so that a call from the loop's thread
/// allocates nothing: a count (bytes, a descriptor), a status, or the request itself for a
/// result of another shape (a path, a listing), read before the request is reused.
enum FileSystemCompletion {
    case count((Result<Int, LoopError>) -> Void)
    case status((Result<FileStatus, LoopError>) -> Void)
    case request((FileSystemRequest) -> Void)
}

extension FileStatus {
    /// The status in libuv's `uv_stat_t`.
    init(stat: UnsafePointer<uv_stat_t>) {
        let s = stat.pointee
        // In attoseconds, with wrapping arithmetic (a 64-bit count of seconds times 10^18 fits
        // in 128 bits): `.seconds(_:) + .nanoseconds(_:)` calls into the standard library for
        // each step, with overflow checks, four times per status.
        func time(_ t: uv_timespec_t) -> Duration {
            Duration(attoseconds: Int128(t.tv_sec) &* 1_000_000_000_000_000_000 &+ Int128(t.tv_nsec) &* 1_000_000_000)
        }
        self.init(
            size: s.st_size, inode: s.st_ino, mode: UInt32(truncatingIfNeeded: s.st_mode),
            modified: time(s.st_mtim), device: s.st_dev, links: s.st_nlink, userID: UInt32(truncatingIfNeeded: s.st_uid),
            groupID: UInt32(truncatingIfNeeded: s.st_gid), blockSize: s.st_blksize, blocks: s.st_blocks,
            accessed: time(s.st_atim), statusChanged: time(s.st_ctim), created: time(s.st_birthtim))
    }
}
