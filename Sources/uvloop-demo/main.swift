print("demo")
try runEventsSection()
