// UVLoop's side of file_read_sequential and file_stat_small (see FileSides.swift): the callback
// face on a loop thread, each request made from the previous one's completion, as the C peer on
// libuv does. The read goes into one FileBuffer of 64 KiB; the completions are stored closures,
// so a request allocates nothing.
import Dispatch
import UVLoop

extension UVLoopSide {
    static func fileReadSequential(_ counts: Counts) -> SessionMaker? {
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
                            do {
                                let reader = try SequentialReader(file: file, outcome: outcome)
                                reader.readNext()
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

    static func fileStatSmall(_ counts: Counts) -> SessionMaker? {
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
                    let chain = StatChain(loop: loop, paths: paths, outcome: outcome)
                    chain.statNext()
                }
                let (ok, done) = outcome.wait()
                let ns = Double(nowNs() - t0)
                guard ok, done == n else { throw BenchError.failed("uvloop stat \(done) of \(n) files: \(outcome.message)") }
                return Sample(value: ns / Double(n), ops: n)
            }, close: {
                r.close()
                FileBenchFixture.release()
            })
        }
    }
}

/// How a run on the loop ended, handed to the harness thread (the semaphore orders the accesses).
final class FileRunOutcome: @unchecked Sendable {
    private let done = DispatchSemaphore(value: 0)
    private var ok = false
    private var count = 0
    private(set) var message = ""

    func finish(_ result: Result<Int, any Error>) {
        switch result {
        case .success(let count):
            ok = true
            self.count = count
        case .failure(let error): message = "\(error)"
        }
        done.signal()
    }

    func wait() -> (Bool, Int) {
        done.wait()
        return (ok, count)
    }
}

/// Reads a file from start to end into one buffer, each read from the previous one's
/// completion. Loop thread only.
private final class SequentialReader {
    let file: LoopFile
    let buffer: FileBuffer
    let outcome: FileRunOutcome
    var offset: Int64 = 0
    var chunks = 0
    /// The one completion every read gets (a stored closure: no allocation per read).
    var completion: ((Result<Int, LoopError>) -> Void)?

    init(file: LoopFile, outcome: FileRunOutcome) throws {
        self.file = file
        self.outcome = outcome
        buffer = try FileBuffer(capacity: FileBenchFixture.chunkBytes)
        completion = { [self] result in didRead(result) }    // a cycle until end() breaks it: it keeps the reader alive
    }

    func readNext() {
        do {
            try file.read(into: buffer, at: offset, completion!)
        } catch {
            end(.failure(error))
        }
    }

    private func didRead(_ result: Result<Int, LoopError>) {
        switch result {
        case .success(0): end(.success(chunks))
        case .success(let count):
            offset += Int64(count)
            chunks += 1
            readNext()
        case .failure(let error): end(.failure(error))
        }
    }

    private func end(_ result: Result<Int, any Error>) {
        completion = nil    // lets the reader go
        file.close()
        outcome.finish(result)
    }
}

/// Stats the paths one after the other, each from the previous one's completion. Loop thread only.
private final class StatChain {
    let loop: Loop
    let paths: [String]
    let outcome: FileRunOutcome
    var next = 0
    var completion: ((Result<FileStatus, LoopError>) -> Void)?

    init(loop: Loop, paths: [String], outcome: FileRunOutcome) {
        self.loop = loop
        self.paths = paths
        self.outcome = outcome
        completion = { [self] result in didStat(result) }    // a cycle until end() breaks it
    }

    func statNext() {
        do {
            try loop.fileSystem.status(of: paths[next], completion!)
        } catch {
            end(.failure(error))
        }
    }

    private func didStat(_ result: Result<FileStatus, LoopError>) {
        guard case .success = result else {
            if case .failure(let error) = result { end(.failure(error)) }
            return
        }
        next += 1
        if next == paths.count { end(.success(next)) } else { statNext() }
    }

    private func end(_ result: Result<Int, any Error>) {
        completion = nil
        outcome.finish(result)
    }
}
