import ServiceLifecycle
import Synchronization

/// A service that reports when it starts and how it was asked to stop.
final class ProbeService: Service, Sendable {
    enum Ending: Sendable, Equatable {
        case gracefulShutdown
        case cancelled
    }

    private let startedStream: AsyncStream<Void>
    private let startedContinuation: AsyncStream<Void>.Continuation
    private let ending = Mutex<Ending?>(nil)

    init() {
        (startedStream, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    }

    func run() async throws {
        startedContinuation.yield()
        startedContinuation.finish()
        do {
            try await gracefulShutdown()
            ending.withLock { $0 = .gracefulShutdown }
        } catch {
            ending.withLock { $0 = .cancelled }
        }
    }

    /// Returns once ``run()`` has started.
    func started() async {
        for await _ in startedStream { return }
    }

    /// How ``run()`` ended; nil while it runs.
    var ended: Ending? { ending.withLock { $0 } }
}
