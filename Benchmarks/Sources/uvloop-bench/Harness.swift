// The harness: interleaved repetitions, medians, allocation counting, the table and the JSON file.
import CMallocCount
import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// One measurement: `value` is the per-operation figure (ns/op, or the workload's own unit), `ops`
/// the number of operations it covered (allocations are divided by it).
struct Sample {
    var value: Double
    var ops: Int
    /// Allocations per operation counted by the session itself (used when the case has no warm-up).
    var allocsPerOp: Double? = nil
}

/// A prepared implementation of one workload: `run` may be called many times; `close` once.
final class Session {
    let run: () throws -> Sample
    let close: () -> Void
    init(run: @escaping () throws -> Sample, close: @escaping () -> Void = {}) {
        self.run = run
        self.close = close
    }
}

typealias SessionMaker = () throws -> Session

struct ImplSpec {
    let impl: String
    /// nil: the UVLoop feature this workload measures is not in the library yet.
    let make: SessionMaker?
}

struct BenchCase {
    let workload: String
    let n: Int
    let unit: String
    var impls: [ImplSpec]
    /// Make and close a session around every single run (idle_cpu, timer_memory), so that no other
    /// impl's loop is alive while one is measured.
    var freshSessionPerRun = false
    /// Repetitions in quick mode (nil: the suite's quick default); heavy cases use fewer.
    var quickReps: Int? = nil
    /// A counted warm-up run per impl before the timed ones (allocations/op come from it). Without
    /// it, allocations/op come from the sessions' own counts (Sample.allocsPerOp), if any.
    var warmUp = true
}

struct BenchResult: Sendable {
    let workload: String
    let n: Int
    let impl: String
    let unit: String
    let value: Double?          // median; nil when pending
    let allocsPerOp: Double?
    let samples: [Double]
    /// Why there is no value although the impl exists (a hang, an error).
    var failure: String? = nil
}

struct RunOptions {
    var reps = 7
    var quick = false
    var verbose = false
}

/// Seconds one run (or session setup or close) may take before it counts as a hang.
final class Limits: @unchecked Sendable {
    static let shared = Limits()
    var hangSeconds: Double = 120 // set once, before any run
}

/// Carries a guarded body to its thread and the result back (under the semaphore's happens-before).
final class GuardedOutcome<T>: @unchecked Sendable {
    var result: Result<T, any Error>?
    let body: () throws -> T
    init(_ body: @escaping () throws -> T) { self.body = body }
}

/// Runs `body` on a thread of its own and waits at most `Limits.shared.hangSeconds` for it. A body
/// that does not finish by then is reported as a hang (`BenchError.hang`) and abandoned with what it
/// holds, so that the rest of the suite still runs and the table shows which impl hung.
func guarded<T>(_ what: String, _ body: @escaping () throws -> T) throws -> T {
    let outcome = GuardedOutcome(body)
    let done = DispatchSemaphore(value: 0)
    let thread = BenchThread {
        outcome.result = Result { try outcome.body() }
        done.signal()
    }
    let limit = DispatchTime.now() + .nanoseconds(Int(Limits.shared.hangSeconds * 1e9))
    if done.wait(timeout: limit) == .timedOut {
        FileHandleOut.err("uvloop-bench: HANG: \(what) did not finish within \(Int(Limits.shared.hangSeconds)) s; abandoned")
        throw BenchError.hang(what)
    }
    thread.join()
    return try outcome.result!.get()
}

func median(_ xs: [Double]) -> Double {
    let s = xs.sorted()
    if s.isEmpty { return .nan }
    return s.count % 2 == 1 ? s[s.count / 2] : (s[s.count / 2 - 1] + s[s.count / 2]) / 2
}

/// Runs one case: a counted warm-up run per impl (allocations/op come from it, its time is not used),
/// then `reps` timed rounds, impls interleaved (A B A B ...), and the median per impl.
func runCase(_ c: BenchCase, options: RunOptions) -> [BenchResult] {
    let reps = options.quick ? (c.quickReps ?? options.reps) : options.reps
    let live = c.impls.filter { $0.make != nil }
    var sessions: [Session?] = Array(repeating: nil, count: live.count)
    var allocs: [Double?] = Array(repeating: nil, count: live.count)
    var samples: [[Double]] = Array(repeating: [], count: live.count)
    var failed: [String?] = Array(repeating: nil, count: live.count)

    func session(_ i: Int) throws -> Session {
        if let s = sessions[i] { return s }
        let s = try guarded("\(c.workload) n=\(c.n) \(live[i].impl) (setup)") { try live[i].make!() }
        sessions[i] = s
        return s
    }
    func release(_ i: Int) {
        if let s = sessions[i] {
            do { try guarded("\(c.workload) n=\(c.n) \(live[i].impl) (close)") { s.close() } } catch {}
        }
        sessions[i] = nil
    }

    if !c.freshSessionPerRun {
        for i in live.indices {
            do { _ = try session(i) } catch { failed[i] = "setup failed: \(error)" }
        }
    }

    // Warm-up, counting allocations.
    for i in live.indices where failed[i] == nil && c.warmUp {
        do {
            let s = try session(i)
            // Counting is switched on inside the guarded thread, around the run only (the guard's
            // own thread and semaphore must not count).
            let (sample, before, after) = try guarded("\(c.workload) n=\(c.n) \(live[i].impl) (warm-up)") {
                mc_set_enabled(true)
                defer { mc_set_enabled(false) }
                let before = mc_snapshot()
                let sample = try s.run()
                return (sample, before, mc_snapshot())
            }
            allocs[i] = Double(after.allocations - before.allocations) / Double(max(sample.ops, 1))
            if c.freshSessionPerRun { release(i) }
            waitUntilQuiet()
        } catch {
            mc_set_enabled(false)
            failed[i] = "\(error)"
            if case BenchError.hang = error { sessions[i] = nil } // abandoned, never closed
        }
    }

    // Timed rounds, interleaved; the order alternates each round so no impl always runs first.
    for r in 0..<reps {
        let order = r % 2 == 0 ? Array(live.indices) : Array(live.indices.reversed())
        for i in order where failed[i] == nil {
            do {
                let s = try session(i)
                let sample = try guarded("\(c.workload) n=\(c.n) \(live[i].impl) (run \(r + 1))") { try s.run() }
                samples[i].append(sample.value)
                if !c.warmUp, let a = sample.allocsPerOp { allocs[i] = a }
                if c.freshSessionPerRun { release(i) }
                waitUntilQuiet()
            } catch {
                failed[i] = "\(error)"
                if case BenchError.hang = error { sessions[i] = nil }
            }
        }
    }
    for i in live.indices { release(i) }

    var results: [BenchResult] = []
    for spec in c.impls {
        if let i = live.firstIndex(where: { $0.impl == spec.impl }) {
            if let f = failed[i] {
                FileHandleOut.err("\(c.workload) n=\(c.n) \(spec.impl): \(f)")
                results.append(BenchResult(workload: c.workload, n: c.n, impl: spec.impl, unit: c.unit,
                                           value: nil, allocsPerOp: nil, samples: [], failure: f))
                continue
            }
            results.append(BenchResult(workload: c.workload, n: c.n, impl: spec.impl, unit: c.unit,
                                       value: median(samples[i]), allocsPerOp: allocs[i], samples: samples[i]))
        } else {
            results.append(BenchResult(workload: c.workload, n: c.n, impl: spec.impl, unit: c.unit,
                                       value: nil, allocsPerOp: nil, samples: []))
        }
    }
    return results
}

enum FileHandleOut {
    static func err(_ s: String) {
        var line = s + "\n"
        line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    }
}


// MARK: - Output

func format(_ v: Double) -> String {
    if v.isNaN { return "nan" }
    if v >= 1_000_000 { return String(Int(v.rounded())) }
    if v >= 100 { return String(Int(v.rounded())) }
    if v >= 10 { return fixed(v, 1) }
    return fixed(v, 2)
}

func fixed(_ v: Double, _ digits: Int) -> String {
    var p = 1.0
    for _ in 0..<digits { p *= 10 }
    let r = (v * p).rounded() / p
    var s = String(r)
    if let dot = s.firstIndex(of: ".") {
        let decimals = s.distance(from: dot, to: s.endIndex) - 1
        if decimals < digits { s += String(repeating: "0", count: digits - decimals) }
    } else {
        s += "." + String(repeating: "0", count: digits)
    }
    if s.contains("e") { return String(v) }
    return s
}

func pad(_ s: String, _ width: Int, right: Bool = false) -> String {
    if s.count >= width { return s }
    let fill = String(repeating: " ", count: width - s.count)
    return right ? fill + s : s + fill
}

/// value / uvloop's value in the same case (so 3.00x means UVLoop is three times cheaper). An async
/// peer (`nio_async`) is compared with UVLoop's async row (`uvloop_async`) where the case has one.
func ratioToUVLoop(_ r: BenchResult, in all: [BenchResult]) -> Double? {
    let sameCase = all.filter { $0.workload == r.workload && $0.n == r.n }
    let reference = r.impl.hasSuffix("_async") && sameCase.contains { $0.impl == "uvloop_async" }
        ? "uvloop_async" : "uvloop"
    guard let v = r.value, let u = sameCase.first(where: { $0.impl == reference })?.value, u > 0 else { return nil }
    return v / u
}

func printTable(_ results: [BenchResult]) {
    let header = [pad("workload", 26), pad("n", 9, right: true), "  " + pad("impl", 17),
                  pad("value", 12, right: true), "  " + pad("unit", 12), pad("allocs/op", 10, right: true),
                  pad("vs uvloop", 11, right: true)].joined()
    print(header)
    print(String(repeating: "-", count: header.count))
    var last = ""
    for r in results {
        let key = "\(r.workload) \(r.n)"
        if !last.isEmpty && key != last && r.workload != last.split(separator: " ").first.map(String.init) {
            print("")
        }
        last = key
        let value = r.value.map(format) ?? (r.failure.map { $0.hasPrefix("hang") ? "HANG" : "FAILED" } ?? "pending")
        let allocs = r.allocsPerOp.map { fixed($0, 2) } ?? "-"
        let ratio = ratioToUVLoop(r, in: results).map { fixed($0, 2) + "x" } ?? "-"
        print([pad(r.workload, 26), pad(String(r.n), 9, right: true), "  " + pad(r.impl, 17),
               pad(value, 12, right: true), "  " + pad(r.unit, 12), pad(allocs, 10, right: true),
               pad(ratio, 11, right: true)].joined())
    }
}

func jsonString(_ s: String) -> String {
    var out = "\""
    for ch in s.unicodeScalars {
        switch ch {
        case "\"": out += "\\\""
        case "\\": out += "\\\\"
        case "\n": out += "\\n"
        default: out.unicodeScalars.append(ch)
        }
    }
    return out + "\""
}

func jsonNumber(_ v: Double?) -> String {
    guard let v, v.isFinite else { return "null" }
    return String(v)
}

func writeJSON(_ results: [BenchResult], to path: String, meta: [String: String]) throws {
    var lines: [String] = []
    for r in results where r.value != nil {
        lines.append("    {\"workload\": \(jsonString(r.workload)), \"n\": \(r.n), \"impl\": \(jsonString(r.impl)), "
            + "\"ns_per_op\": \(jsonNumber(r.value)), \"allocs_per_op\": \(jsonNumber(r.allocsPerOp)), "
            + "\"unit\": \(jsonString(r.unit)), \"samples\": [\(r.samples.map { jsonNumber($0) }.joined(separator: ", "))]}")
    }
    let failed = results.filter { $0.failure != nil }.map {
        "{\"workload\": \(jsonString($0.workload)), \"n\": \($0.n), \"impl\": \(jsonString($0.impl)), \"failure\": \(jsonString($0.failure!))}"
    }
    let pending = results.filter { $0.value == nil && $0.failure == nil }.map {
        "{\"workload\": \(jsonString($0.workload)), \"n\": \($0.n), \"impl\": \(jsonString($0.impl))}"
    }
    let metaLines = meta.sorted { $0.key < $1.key }.map { "    \(jsonString($0.key)): \(jsonString($0.value))" }
    let text = "{\n  \"results\": [\n" + lines.joined(separator: ",\n") + "\n  ],\n"
        + "  \"pending\": [" + pending.joined(separator: ", ") + "],\n"
        + "  \"failed\": [" + failed.joined(separator: ", ") + "],\n"
        + "  \"meta\": {\n" + metaLines.joined(separator: ",\n") + "\n  }\n}\n"
    guard let f = fopen(path, "w") else { throw BenchError.cannotWrite(path) }
    defer { fclose(f) }
    var t = text
    t.withUTF8 { _ = fwrite($0.baseAddress, 1, $0.count, f) }
}

enum BenchError: Error, CustomStringConvertible {
    case cannotWrite(String)
    case failed(String)
    case hang(String)
    var description: String {
        switch self {
        case .cannotWrite(let p): "cannot write \(p)"
        case .failed(let s): s
        case .hang(let what): "hang: \(what) did not finish within \(Int(Limits.shared.hangSeconds)) s"
        }
    }
}
