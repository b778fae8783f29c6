// file_read_ahead: read the 256 MiB file of file_read_sequential in 64 KiB chunks with several
// reads in flight; ns per chunk.
// file_stat_concurrent: stat the 10,000 files of file_stat_small with several stats in flight;
// ns per stat.
//   - "libuv_c": C on a libuv loop of its own with the same number of requests in flight as
//     UVLoop's default (8 reads, 16 stats), each completion starting the next (CPeers).
//   - "pread_c" / "stat_c": the system calls on one thread, the floor (CPeers).
//   - "nio_fs": NIOFileSystem from a task: `readChunks(chunkLength:)` (its own read-ahead), and
//     a task group keeping 16 `info(forFileAt:)` in flight.
// UVLoop's rows are in UVLoopSide+FileReadAhead.swift.
import CPeers
import Dispatch
import NIOCore
import NIOFileSystem

/// The requests in flight of the concurrent rows: UVLoop's defaults, which the peers use too.
enum FileConcurrency {
    static let reads = 8
    static let stats = 16
}

extension CSide {
    static func fileReadAhead(_ counts: Counts, depth: Int) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            return Session(run: {
                var bytes: Int64 = 0
                let chunk = FileBenchFixture.chunkBytes
                let ns = cp_uv_read_ahead(fixture.readFile, chunk, Int32(depth), &bytes)
                guard ns >= 0, bytes == Int64(counts.fileReadChunks * chunk) else {
                    throw BenchError.failed("reading \(fixture.readFile) with \(depth) reads in flight failed (\(bytes) bytes)")
                }
                return Sample(value: ns, ops: counts.fileReadChunks)
            }, close: FileBenchFixture.release)
        }
    }

    static func fileStatConcurrent(_ counts: Counts, depth: Int) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            return Session(run: {
                let n = counts.fileStatN
                let ns = cp_uv_stat_concurrent(fixture.statDirectory, n, Int32(depth))
                guard ns >= 0 else { throw BenchError.failed("stat of the files in \(fixture.statDirectory) failed") }
                return Sample(value: ns, ops: n)
            }, close: FileBenchFixture.release)
        }
    }
}

extension NIOFileSystemSide {
    static func fileStatConcurrent(_ counts: Counts, depth: Int) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let n = counts.fileStatN
            let paths = (0..<n).map { FilePath("\(fixture.statDirectory)/\($0)") }
            return Session(run: {
                let (ns, found) = try runBenchTask { () async throws -> Int in
                    try await withThrowingTaskGroup(of: Bool.self) { group in
                        var found = 0
                        var next = 0
                        while next < min(depth, n) {
                            let path = paths[next]
                            group.addTask { try await FileSystem.shared.info(forFileAt: path) != nil }
                            next += 1
                        }
                        while let exists = try await group.next() {
                            if exists { found += 1 }
                            if next < n {
                                let path = paths[next]
                                group.addTask { try await FileSystem.shared.info(forFileAt: path) != nil }
                                next += 1
                            }
                        }
                        return found
                    }
                }
                guard found == n else { throw BenchError.failed("NIOFileSystem found \(found) of \(n) files") }
                return Sample(value: ns / Double(n), ops: n)
            }, close: FileBenchFixture.release)
        }
    }
}

/// Runs `body` in a task and waits for it; returns the ns it took (from before the task was
/// made) and its result.
func runBenchTask<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) throws -> (Double, T) {
    let done = DispatchSemaphore(value: 0)
    let outcome = TaskOutcome<T>()
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
private final class TaskOutcome<T: Sendable>: @unchecked Sendable {
    var result: Result<T, any Error>?
    func set(_ value: Result<T, any Error>) { result = value }
}
