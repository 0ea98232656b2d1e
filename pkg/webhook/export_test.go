package webhook

// The answer's readers, for the tests.
var (
	Classify = classify
	Excerpt  = excerpt
)
