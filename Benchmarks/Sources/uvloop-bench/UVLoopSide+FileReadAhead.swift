// UVLoop's side of file_read_ahead and file_stat_concurrent (see FileSides+Concurrent.swift).
//   - "uvloop": the callback face on the loop's thread: `LoopFile.readChunks(chunkLength:readAhead:_:)`
//     with the default read-ahead (8), and `fileSystem.status(ofEach:concurrency:_:)` with the
//     default concurrency (16). The handler is made once: no allocation per chunk.
//   - "uvloop_ra2", "uvloop_ra4", "uvloop_k4", "uvloop_k64": the same with 2 or 4 reads, 4 or 64
//     stats in flight, to choose the defaults.
//   - "uvloop_async": the async face from a task: `for try await chunk in file.readChunks()`
//     (each chunk copied into an array on the loop's thread; the task takes the chunks ready
//     together and waits to be woken only when none is), and `await fileSystem.status(ofEach:)`.
import Dispatch
import UVLoop

extension UVLoopSide {
    static func fileReadAhead(_ counts: Counts, readAhead: Int = LoopFile.defaultReadAhead) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let r = try UVLoopRunner()
            let loop = r.loop
            let path = fixture.readFile
            return Session(run: {
                let outcome = FileRunOutcome()
                let t0 = nowNs()
                try loop.invoke {
                    try loop.fileSystem.open(path) { opened in
                        switch opened {
                        case .success(let file):
                            var chunks = 0
                            do {
                                try file.readChunks(chunkLength: FileBenchFixture.chunkBytes, readAhead: readAhead) { result in
                                    switch result {
                                    case .success(.some): chunks += 1
                                    case .success(nil):
                                        file.close()
                                        outcome.finish(.success(chunks))
                                    case .failure(let error):
                                        file.close()
                                        outcome.finish(.failure(error))
                                    }
                                }
                            } catch {
                                outcome.finish(.failure(error))
                            }
                        case .failure(let error): outcome.finish(.failure(error))
                        }
                    }
                }
                let (ok, chunks) = outcome.wait()
                let ns = Double(nowNs() - t0)
                guard ok, chunks == counts.fileReadChunks else {
                    throw BenchError.failed("uvloop read \(chunks) of \(counts.fileReadChunks) chunks: \(outcome.message)")
                }
                return Sample(value: ns / Double(chunks), ops: chunks)
            }, close: {
                r.close()
                FileBenchFixture.release()
            })
        }
    }

    static func fileReadAheadAsync(_ counts: Counts) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let r = try UVLoopRunner()
            let loop = r.loop
            let path = fixture.readFile
            return Session(run: {
                let (ns, bytes) = try runBenchTask { () async throws -> Int in
                    let file = try await loop.fileSystem.open(path)
                    var bytes = 0
                    for try await chunk in try file.readChunks(chunkLength: FileBenchFixture.chunkBytes) { bytes += chunk.count }
                    try await file.close()
                    return bytes
                }
                let expected = counts.fileReadChunks * FileBenchFixture.chunkBytes
                guard bytes == expected else { throw BenchError.failed("uvloop_async read \(bytes) of \(expected) bytes") }
                return Sample(value: ns / Double(counts.fileReadChunks), ops: counts.fileReadChunks)
            }, close: {
                r.close()
                FileBenchFixture.release()
            })
        }
    }

    static func fileStatConcurrent(_ counts: Counts, concurrency: Int = LoopFileSystem.defaultStatusConcurrency) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let r = try UVLoopRunner()
            let loop = r.loop
            let n = counts.fileStatN
            let paths = (0..<n).map { "\(fixture.statDirectory)/\($0)" }
            return Session(run: {
                let outcome = FileRunOutcome()
                let t0 = nowNs()
                try loop.invoke {
                    try loop.fileSystem.status(ofEach: paths, concurrency: concurrency) { results in
                        switch results {
                        case .success(let each): outcome.finish(.success(Self.found(each)))
                        case .failure(let error): outcome.finish(.failure(error))
                        }
                    }
                }
                let (ok, found) = outcome.wait()
                let ns = Double(nowNs() - t0)
                guard ok, found == n else { throw BenchError.failed("uvloop stat \(found) of \(n) files: \(outcome.message)") }
                return Sample(value: ns / Double(n), ops: n)
            }, close: {
                r.close()
                FileBenchFixture.release()
            })
        }
    }

    static func fileStatConcurrentAsync(_ counts: Counts) -> SessionMaker? {
        return {
            let fixture = try FileBenchFixture.acquire(counts)
            let r = try UVLoopRunner()
            let loop = r.loop
            let n = counts.fileStatN
            let paths = (0..<n).map { "\(fixture.statDirectory)/\($0)" }
            return Session(run: {
                let (ns, found) = try runBenchTask { () async throws -> Int in
                    Self.found(try await loop.fileSystem.status(ofEach: paths))
                }
                guard found == n else { throw BenchError.failed("uvloop_async stat \(found) of \(n) files") }
                return Sample(value: ns / Double(n), ops: n)
            }, close: {
                r.close()
                FileBenchFixture.release()
            })
        }
    }

    /// How many stats found their file, without copying a status out (the C peer checks
    /// `req->result < 0`): `(try? $0.get()) != nil` took about 340 instructions per stat on the
    /// loop's thread, inside the timed run, and `count(where:)` with a pattern match about 170
    /// (each element copied out of the array for the closure, then destroyed); matching each
    /// element in place reads only its case.
    private static func found(_ results: [Result<FileStatus, LoopError>]) -> Int {
        var found = 0
        for index in results.indices {
            if case .success = results[index] { found += 1 }
        }
        return found
    }
}
