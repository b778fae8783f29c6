// uvloop-integrations-demo: UVLoop with the Swift server ecosystem, run for real and narrated:
// a loop group as a swift-service-lifecycle service, stopped gracefully by SIGTERM watched on a
// loop, and its loops' metrics reported through swift-metrics. `scripts/demo` runs it after the
// main demo.
import Glibc
import Logging
import MetricsTestKit
import ServiceLifecycle
import UVLoop
import UVLoopMetrics
import UVLoopServiceLifecycle

/// A service that says when it runs and when the service group asks it to stop.
struct AnnouncingService: Service {
    let started: @Sendable () -> Void

    func run() async throws {
        started()
        try? await gracefulShutdown()
        print("  the service group asked the services to stop (graceful shutdown)")
    }
}

print("== Integrations: swift-service-lifecycle and swift-metrics")
let loops = try LoopGroup(loopCount: 2, name: "service")
let metrics = TestMetrics()   // swift-metrics' in-memory backend, so the demo can print what was recorded
let reporter = try LoopMetricsReporter(group: loops, interval: .milliseconds(50), factory: metrics)
let logger = Logger(label: "uvloop-integrations-demo")

let (startedStream, startedContinuation) = AsyncStream<Void>.makeStream()
let serviceGroup = ServiceGroup(
    services: [LoopGroupService(loops), AnnouncingService { startedContinuation.yield() }], logger: logger)
let running = Task { try await serviceGroup.run(watchingSignalsOn: loops.loops[0]) }
for await _ in startedStream { break }
print("  a ServiceGroup runs the loop group (2 loops) and a service; SIGTERM and SIGINT are watched on a loop")

try await loops.loops[1].sleep(for: .milliseconds(200))   // a few reports, 50 ms apart
for index in 0..<2 {
    let dimensions = [("loop", "\(index)")]
    let iterations = try metrics.expectCounter("uvloop_iterations", dimensions).totalValue
    let utilization = try metrics.expectGauge("uvloop_utilization", dimensions).lastValue ?? 0
    let timers = try metrics.expectGauge("uvloop_waiting_timers", dimensions).lastValue ?? 0
    print("  swift-metrics got, for loop \(index): uvloop_iterations \(iterations), uvloop_utilization \((utilization * 10_000).rounded() / 10_000), uvloop_waiting_timers \(Int(timers))")
}
reporter.cancel()

print("  sending SIGTERM to this process")
kill(getpid(), SIGTERM)
try await running.value
print("  ServiceGroup.run returned: SIGTERM shut the loops down gracefully; accepting work: \(loops.loops.map(\.isAcceptingWork))")
