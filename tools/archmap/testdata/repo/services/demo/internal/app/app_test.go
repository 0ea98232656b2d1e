package app

// testOnly is in a test file, which the map does not count.
func testOnly() {}
