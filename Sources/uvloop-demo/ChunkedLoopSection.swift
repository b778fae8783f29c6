import Glibc
import Synchronization
import UVLoop

/// A result the body writes so that the optimiser cannot drop its work.
private final class Checksum: Sendable {
    let value = Atomic<UInt64>(0)
}

/// A little arithmetic on an index: the kind of small step a chunked loop is for.
@inline(never)
private func mix(_ index: Int) -> UInt64 {
    var x = UInt64(truncatingIfNeeded: index) &+ 0x9E37_79B9_7F4A_7C15
    for _ in 0..<80 {
        x ^= x >> 31
        x &*= 0xBF58_476D_1CE4_E5B9
    }
    return x
}

private func milliseconds(_ nanoseconds: UInt64) -> String {
    let hundredths = (nanoseconds + 5_000) / 10_000
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) ms"
}

/// Runs a few million items on the loop's own thread in 2 ms chunks, with a live progress bar,
/// while a 20 ms repeating timer keeps ticking; then cancels a second chunked loop from a timer.
func runChunkedLoopSection() throws {
    print("== Chunked loops: long work on the loop's thread, a chunk per loop iteration")
    let loop = try Loop()

    struct Stats {
        var ticks = 0
        var worstLateness: UInt64 = 0
        var chunks = 0
        var lastDrawn = -1
    }
    let stats = LoopBound(Stats(), loop: loop)
    let interval: UInt64 = 20_000_000
    let firstTick = loop.now.nanoseconds + interval
    let ticker = try loop.scheduleRepeating(every: .nanoseconds(Int64(interval))) {
        let now = loop.now.nanoseconds
        stats.withValue { stats in
            let deadline = firstTick + UInt64(stats.ticks) * interval
            stats.ticks += 1
            stats.worstLateness = max(stats.worstLateness, now > deadline ? now - deadline : 0)
        }
    }

    let items = 3_000_000
    let checksum = Checksum()
    let started = loop.now
    print("   \(items) items of ~100 ns each, budget .time(2 ms); a timer ticks every 20 ms meanwhile")
    try loop.startChunkedLoop(count: items, budget: .time(.milliseconds(2))) { index in
        checksum.value.wrappingAdd(mix(index), ordering: .relaxed)
    } progress: { progress in
        stats.withValue { stats in
            stats.chunks += 1
            let percent = Int(progress.fractionCompleted * 100)
            guard percent != stats.lastDrawn else { return }
            stats.lastDrawn = percent
            let filled = percent * 30 / 100
            let bar = String(repeating: "#", count: filled) + String(repeating: ".", count: 30 - filled)
            print("\r   [\(bar)] \(percent)%  \(progress.processed)/\(progress.total)  timer ticks: \(stats.ticks)", terminator: "")
            fflush(nil)  // all streams: Swift 6 forbids touching the global `stdout`
        }
    } completion: { completion in
        let elapsed = loop.now.nanoseconds - started.nanoseconds
        ticker.cancel()
        let stats = stats.value
        print("")
        print("   completion: \(completion) in \(milliseconds(elapsed)), \(stats.chunks - 1) chunks")
        print("   the timer ticked \(stats.ticks) times meanwhile; worst lateness \(milliseconds(stats.worstLateness))")
        print("   (checksum \(checksum.value.load(ordering: .relaxed) % 1000), so the work really ran)")

        // A second chunked loop, cancelled by a timer 30 ms in: no body call after the cancel.
        do {
            let endless = try loop.startChunkedLoop(count: Int.max) { index in
                checksum.value.wrappingAdd(mix(index), ordering: .relaxed)
            } completion: { completion in
                print("   second loop, cancelled by a timer after 30 ms: \(completion)")
                loop.shutdown()
            }
            try loop.schedule(after: .milliseconds(30)) { endless.cancel() }
        } catch {
            print("   could not start the second loop: \(error)")
            loop.shutdown()
        }
    }
    try loop.run()
    print("")
}
