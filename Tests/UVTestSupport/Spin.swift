/// Keeps the calling thread busy until `duration` has passed: a callback that holds its loop up,
/// for tests of stalls, delays and utilization.
public func spin(for duration: Duration) {
    let clock = ContinuousClock()
    let end = clock.now.advanced(by: duration)
    while clock.now < end {}
}
