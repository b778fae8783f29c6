print("demo")
do {
    try runOperationsSection()
} catch {
    print("operations section failed: \(error)")
}
