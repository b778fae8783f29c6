// uvloop-demo: every UVLoop feature, run for real on libuv, narrated.
// Run it with `scripts/demo`.

print("""
UVLoop demo: a Swift event loop on libuv \(libuvVersion())
Each section runs real work on a real loop and says what it shows.

""")
try runPostingSection()
try runTimersSection()
try runChunkedLoopSection()
try runEventsSection()
try runConcurrencySection()
try runOperationsSection()
try runEmbeddingSection()
try runIOSection()
try runProcessesSection()
try runFileWatchingSection()
try runFilesSection()
try runDatagramsSection()
try runPipesSection()
try runFileSystemSection()
try runStreamServerSection()
try runGroupsAndMetricsSection()
try runSimulatedNetworkSection()
print("\nDemo complete.")
