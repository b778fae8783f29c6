// process_spawn_wait: start a program that does nothing (/bin/true) and wait until it has exited,
// n times in a row, one child at a time; ns per child.
//   - "uvloop": `Loop.spawn` on a loop thread; each child's exit handler spawns the next.
//   - "posix_spawn_c": the C floor, `posix_spawn` + `waitpid` on one thread (CPeers).
//   - "subprocess": swift-subprocess 1.0 (`Subprocess.run`, output discarded), awaited one by one
//     from a task.
import CPeers
import Dispatch
import Subprocess
import UVLoop

let spawnedProgram = "/bin/true"

extension UVLoopSide {
    static func processSpawnWait(n: Int) -> SessionMaker? {
        return {
            let r = try UVLoopRunner()
            let loop = r.loop
            return Session(run: {
                let done = DispatchSemaphore(value: 0)
                let t0 = nowNs()
                try loop.invoke {
                    let left = LoopBound(n, loop: loop)
                    func next() {
                        do {
                            _ = try loop.spawn(Command(spawnedProgram)) { _ in
                                left.value -= 1
                                if left.value == 0 { done.signal() } else { next() }
                            }
                        } catch {
                            fatalError("uvloop-bench: spawn failed: \(error)")
                        }
                    }
                    next()
                }
                done.wait()
                return Sample(value: Double(nowNs() - t0) / Double(n), ops: n)
            }, close: r.close)
        }
    }
}

extension CSide {
    static func processSpawnWait(n: Int) -> SessionMaker? {
        return {
            Session(run: {
                let ns = cp_spawn_wait(spawnedProgram, n)
                guard ns >= 0 else { throw BenchError.failed("posix_spawn failed") }
                return Sample(value: ns, ops: n)
            })
        }
    }
}

/// swift-subprocess's side of process_spawn_wait.
enum SubprocessSide {
    static func processSpawnWait(n: Int) -> SessionMaker? {
        return {
            Session(run: {
                let done = DispatchSemaphore(value: 0)
                let failure = Failure()
                let t0 = nowNs()
                Task {
                    do {
                        for _ in 0..<n {
                            _ = try await Subprocess.run(.path("/bin/true"), output: .discarded, error: .discarded)
                        }
                    } catch {
                        failure.set("\(error)")
                    }
                    done.signal()
                }
                done.wait()
                if let message = failure.message { throw BenchError.failed("swift-subprocess: \(message)") }
                return Sample(value: Double(nowNs() - t0) / Double(n), ops: n)
            })
        }
    }

    /// The first error of a run, set by its task.
    final class Failure: @unchecked Sendable {
        private let lock = DispatchSemaphore(value: 1)
        private var text: String?
        func set(_ message: String) {
            lock.wait()
            if text == nil { text = message }
            lock.signal()
        }
        var message: String? {
            lock.wait()
            defer { lock.signal() }
            return text
        }
    }
}
