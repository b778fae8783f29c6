print("demo")
try runChunkedLoopSection()
