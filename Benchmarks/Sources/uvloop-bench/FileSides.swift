// file_read_sequential: read a 256 MiB file from start to end in 64 KiB chunks, one read at a
// time (the page cache is warm: the file was just written, and every impl has a warm-up run);
// ns per chunk.
// file_stat_small: stat 10,000 small files one after the other; ns per stat.
//   - "libuv_c": C on a libuv loop of its own, each request (uv_fs_read at the next offset,
//     uv_fs_stat of the next path) made from the previous one's callback (CPeers).
//   - "pread_c" / "stat_c": the system calls on one thread, the floor (CPeers).
//   - "nio_fs": SwiftNIO's NIOFileSystem (FileSystem.shared: `readChunks` of a read handle,
//     `info(forFileAt:)`), from a task.
import CPeers
import Dispatch
import NIOCore
import NIOFileSystem
#if canImport(Glibc)
import Glibc
#endif

/// The files both workloads use, made in a temporary directory by the first session that needs
/// them and removed when the last one closes.
final class FileBenchFixture: @unchecked Sendable {
    static let chunkBytes = 64 * 1024

    /// The file to read: `readChunks` chunks of 64 KiB.
    let readFile: String
    /// The directory of the files to stat, named 0 to `statFiles - 1`.
    let statDirectory: String
    private let root: String

    private init(readChunks: Int, statFiles: Int) throws {
        var template = Array("\(Self.tmpRoot())/uvloop-bench-files-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw BenchError.failed("mkdtemp failed: errno \(errno)") }
        root = String(cString: made)
        readFile = root + "/read"
        statDirectory = root + "/stat"
        try Self.write(readFile, chunks: readChunks)
        guard mkdir(statDirectory, 0o755) == 0 else { throw BenchError.failed("mkdir \(statDirectory): errno \(errno)") }
        for index in 0..<statFiles {
            let fd = open("\(statDirectory)/\(index)", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw BenchError.failed("creating the files to stat: errno \(errno)") }
            _ = Glibc.write(fd, "small file\n", 11)
            close(fd)
        }
    }

    private static func write(_ path: String, chunks: Int) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw BenchError.failed("creating \(path): errno \(errno)") }
        defer { close(fd) }
        var block = [UInt8](repeating: 0, count: chunkBytes)
        for chunk in 0..<chunks {
            for index in stride(from: 0, to: block.count, by: 4096) { block[index] = UInt8(truncatingIfNeeded: chunk) }
            let written = block.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard written == chunkBytes else { throw BenchError.failed("writing \(path): errno \(errno)") }
        }
    }

    private func remove() {
        for index in 0..<Int.max {
            if unlink("\(statDirectory)/\(index)") != 0 { break }
        }
        rmdir(statDirectory)
        unlink(readFile)
        rmdir(root)
    }

    /// The fixture in use and its users, behind the semaphore.
    private final class Registry: @unchecked Sendable {
        let lock = DispatchSemaphore(value: 1)
        var shared: FileBenchFixture?
        var users = 0
    }

    private static let registry = Registry()

    /// The fixture, made if no session holds it; pair with `release()`.
    static func acquire(_ counts: Counts) throws -> FileBenchFixture {
        registry.lock.wait()
        defer { registry.lock.signal() }
        if registry.shared == nil {
            registry.shared = try FileBenchFixture(readChunks: counts.fileReadChunks, statFiles: counts.fileStatN)
        }
        registry.users += 1
        return registry.shared!
    }

    /// One session is done with it; the last removes the files.
    static func release() {
        registry.lock.wait()
        defer { registry.lock.signal() }
        registry.users -= 1
        if registry.users == 0 {
            registry.shared?.remove()
            registry.shared = nil
        }
    }

    private static func tmpRoot() -> String {
        if let dir = getenv("TMPDIR").map({ String(cString: $0) }), !dir.isEmpty { return dir }
        return "/tmp"
    }
}

extension CSide {
    static func fileReadSequential(_ counts: Counts, onLibUV: Bool) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            return Session(run: {
                var bytes: Int64 = 0
                let chunk = FileBenchFixture.chunkBytes
                let ns = onLibUV
                    ? cp_uv_read_sequential(fixture.readFile, chunk, &bytes)
                    : cp_pread_sequential(fixture.readFile, chunk, &bytes)
                guard ns >= 0, bytes == Int64(counts.fileReadChunks * chunk) else {
                    throw BenchError.failed("reading \(fixture.readFile) failed (\(bytes) bytes)")
                }
                return Sample(value: ns, ops: counts.fileReadChunks)
            }, close: FileBenchFixture.release)
        }
    }

    static func fileStatSmall(_ counts: Counts, onLibUV: Bool) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            return Session(run: {
                let n = counts.fileStatN
                let ns = onLibUV ? cp_uv_stat_files(fixture.statDirectory, n) : cp_stat_files(fixture.statDirectory, n)
                guard ns >= 0 else { throw BenchError.failed("stat of the files in \(fixture.statDirectory) failed") }
                return Sample(value: ns, ops: n)
            }, close: FileBenchFixture.release)
        }
    }
}

/// SwiftNIO's NIOFileSystem side of the file workloads: each run is a task, waited for.
enum NIOFileSystemSide {
    static func fileReadSequential(_ counts: Counts) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let path = FilePath(fixture.readFile)
            return Session(run: {
                let expected = Int64(counts.fileReadChunks * FileBenchFixture.chunkBytes)
                let (ns, bytes) = try runTask { () async throws -> Int64 in
                    try await FileSystem.shared.withFileHandle(forReadingAt: path) { handle in
                        var bytes: Int64 = 0
                        for try await chunk in handle.readChunks(chunkLength: .bytes(Int64(FileBenchFixture.chunkBytes))) {
                            bytes += Int64(chunk.readableBytes)
                        }
                        return bytes
                    }
                }
                guard bytes == expected else { throw BenchError.failed("NIOFileSystem read \(bytes) of \(expected) bytes") }
                return Sample(value: ns / Double(counts.fileReadChunks), ops: counts.fileReadChunks)
            }, close: FileBenchFixture.release)
        }
    }

    static func fileStatSmall(_ counts: Counts) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let n = counts.fileStatN
            let paths = (0..<n).map { FilePath("\(fixture.statDirectory)/\($0)") }
            return Session(run: {
                let (ns, found) = try runTask { () async throws -> Int in
                    var found = 0
                    for path in paths where try await FileSystem.shared.info(forFileAt: path) != nil { found += 1 }
                    return found
                }
                guard found == n else { throw BenchError.failed("NIOFileSystem found \(found) of \(n) files") }
                return Sample(value: ns / Double(n), ops: n)
            }, close: FileBenchFixture.release)
        }
    }

    /// Runs `body` in a task and waits for it; returns the ns it took (from before the task was
    /// made) and its result.
    private static func runTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> (Double, T) {
        let done = DispatchSemaphore(value: 0)
        let outcome = Outcome<T>()
        let t0 = nowNs()
        Task {
            do { outcome.set(.success(try await body())) } catch { outcome.set(.failure(error)) }
            done.signal()
        }
        done.wait()
        let ns = Double(nowNs() - t0)
        guard let result = outcome.result else { throw BenchError.failed("the task ended without a result") }
        return (ns, try result.get())
    }

    /// A task's result, handed to the waiting thread (the semaphore orders the accesses).
    private final class Outcome<T: Sendable>: @unchecked Sendable {
        var result: Result<T, any Error>?
        func set(_ value: Result<T, any Error>) { result = value }
    }
}
