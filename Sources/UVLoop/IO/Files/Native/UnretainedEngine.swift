/// The loop's engine as the file-system request pool reaches it on every completion: with no
/// reference counting (a retain and a release per completion otherwise, or, through a weak
/// reference, a side-table load and a slow release).
///
/// Safe because the pool holds the engine strongly while any request is in flight
/// (`FileSystemRequests.engineInFlight`), and otherwise uses it only from calls made on the loop's
/// thread of a live loop (starting a request, the loop's ending); a completion after the loop's
/// handles are closed does not use it.
struct UnretainedEngine {
    private let reference: Unmanaged<LoopEngine>

    init(_ engine: LoopEngine) { reference = .passUnretained(engine) }

    /// Calls `body` with the engine, not retained for the call.
    @inline(__always)
    func with<Result>(_ body: (LoopEngine) -> Result) -> Result { reference._withUnsafeGuaranteedRef(body) }

    /// `LoopEngine.beginIOCallback`, with no closure around the caller's work.
    @inline(__always)
    func beginIOCallback() -> Bool { reference._withUnsafeGuaranteedRef { $0.beginIOCallback() } }

    /// `LoopEngine.endBurstIOCallback`.
    @inline(__always)
    func endBurstIOCallback(_ outermost: Bool) { reference._withUnsafeGuaranteedRef { $0.endBurstIOCallback(outermost) } }

    /// The engine, retained by the caller: to keep it alive while requests are in flight.
    var retained: LoopEngine { reference.takeUnretainedValue() }
}
