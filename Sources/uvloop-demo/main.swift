print("demo")
try runConcurrencySection()
