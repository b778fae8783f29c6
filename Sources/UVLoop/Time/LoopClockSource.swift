/// Where a loop's time comes from; chosen when the loop is created
/// (``Loop/init(clock:postBudget:)``).
public enum LoopClockSource: Sendable, Equatable {
    /// The system's monotonic clock (libuv's `uv_hrtime`). The default.
    case system
    /// A clock that starts at ``LoopInstant/zero`` and moves only when a test advances it
    /// (see the `UVLoopTesting` module). Everything else is the real loop: real `uv_run`, real
    /// handles. Only the loop's thread may read it.
    case manual
}
