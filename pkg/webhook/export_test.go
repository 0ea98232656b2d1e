package webhook

// The answer's readers, for the tests.
var (
	Classify        = classify
	ParseRetryAfter = parseRetryAfter
	Excerpt         = excerpt
)
