import Dispatch
import Foundation
import UVLoop
import UVOperations

/// Operations on libuv's thread pool: a worker with a transform and a completion, composites with
/// named results, a cancelled request, and a session cancel-all, narrated.
func runOperationsSection() throws {
    print("== Operations: workers on libuv's thread pool, completions on the loop's thread")
    let loopThread = try Loop.startThread(name: "demo-ops")
    defer { loopThread.shutdown() }
    let loop = loopThread.loop

    // A worker operation: worker, transform, completion, name.
    let operation = WorkerOperation(name: "Any name") { 1 }
        .transform { outcome in outcome.value = outcome.value.map { $0 * 2 } }
        .onCompletion { outcome in
            print("  completion of 'Any name' on the loop's thread (\(loop.isOnLoopThread)): \(outcome)")
        }
    let doubled = try operation.start(on: loop).wait()
    print("  wait() from the main thread returned: \(doubled)")

    // A sequence containing a concurrent group; named results reach through the nesting.
    let text = "the quick brown fox jumps over the lazy dog"
    let load = WorkerOperation(name: "load") { text }
    let words = WorkerOperation(name: "words") { text.split(separator: " ").count }
    let letters = WorkerOperation(name: "letters") { text.filter(\.isLetter).count }
    let analyse = try ConcurrentOperation(name: "analyse", [words, letters])
    let pipeline = try SequenceOperation(name: "pipeline", [load, analyse])
        .onCompletion { outcome in print("  'pipeline' completed, cancelled: \(outcome.isCancelled)") }
    let results = try expectValue(pipeline.start(on: loop).wait().value)
    print("  results of 'pipeline': \(results.names)")
    print("    load -> \(results.outcome(named: "load", as: String.self)?.description ?? "missing")")
    let analysed = results.results(named: "analyse")
    print("    analyse.words -> \(analysed?.outcome(named: "words", as: Int.self)?.description ?? "missing")")
    print("    analyse.letters -> \(analysed?.outcome(named: "letters", as: Int.self)?.description ?? "missing")")

    // Hold every pool thread, so that what is queued next cannot start before we cancel it.
    let poolSize = Int(ProcessInfo.processInfo.environment["UV_THREADPOOL_SIZE"] ?? "") ?? 4
    let started = DispatchSemaphore(value: 0)
    let release = DispatchSemaphore(value: 0)
    func slow(_ name: String) -> WorkerOperation<String> {
        WorkerOperation(name: name) {
            started.signal()
            release.wait()
            return "\(name) finished"
        }
    }

    print("-- cancelling a request")
    let running = try slow("running").start(on: loop)
    started.wait()
    print("  'running' is on a pool thread; cancel() -> \(running.cancel())")
    release.signal()
    print("  'running' outcome: \(try running.wait())   (the worker finished; the flag says cancelled)")

    print("-- a session's cancelAll with running, queued and finished requests")
    let session = OperationSession()
    let finished = try WorkerOperation(name: "finished") { "done early" }.start(on: loop, session: session)
    print("  'finished' outcome: \(try finished.wait()); in flight now: \(session.requestCount)")
    let busy = try (0..<poolSize).map { try slow("busy \($0)").start(on: loop, session: session) }
    for _ in busy { started.wait() }
    let queued = try (0..<2).map { index in
        try WorkerOperation(name: "queued \(index)") { "never printed" }.start(on: loop, session: session)
    }
    print("  \(busy.count) running + \(queued.count) queued behind them: in flight \(session.requestCount)")
    print("  cancelAll() cancelled \(session.cancelAll())")
    for request in queued {
        print("  '\(request.name ?? "?")' outcome: \(try request.wait())   (withdrawn: its worker never ran)")
    }
    for _ in busy { release.signal() }
    for request in busy {
        print("  '\(request.name ?? "?")' outcome: \(try request.wait())")
    }
    print("  'finished' is untouched: \(try finished.wait()); in flight now: \(session.requestCount)")

    print("-- waiting on the loop's own thread")
    let error = try loop.invoke { () -> String in
        let request = try WorkerOperation { 0 }.start(on: loop)
        do {
            _ = try request.wait()
            return "no error?"
        } catch {
            return "\(error)"
        }
    }
    print("  wait() on the loop's thread throws: \(error)")
}

/// Unwraps a value the demo expects, or stops with a message.
private func expectValue<T>(_ value: T?) throws -> T {
    guard let value else { throw LoopError.invalidArgument("the demo expected a value") }
    return value
}
