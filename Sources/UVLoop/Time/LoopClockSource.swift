/// Where a loop's time comes from.
public enum LoopClockSource: Sendable, Equatable {
    /// The system's monotonic clock (libuv's `uv_hrtime`). The default.
    case system
    /// A clock that starts at `LoopInstant.zero` and moves only when a test advances it
    /// (see `UVLoopTesting`). Everything else is the real loop: real `uv_run`, real handles.
    case manual
}
