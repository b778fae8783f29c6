/// What a scheduled timer runs when it fires.
enum TimerWork: Sendable {
    case closure(@Sendable () -> Void)
    /// An `await loop.sleep(for:)`: resumed when it fires, failed when the loop shuts down.
    case sleeper(SleepWaiter)
    /// A `loop.ticks(every:)` sequence: handed each tick, finished when the loop shuts down.
    case ticker(TickWaiter)
}
