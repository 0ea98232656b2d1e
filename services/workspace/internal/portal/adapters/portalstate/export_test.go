package portalstate

// The Redis keys, for the tests to look at what is stored.
var (
	LinkKey    = linkKey
	OpenKey    = openKey
	SessionKey = sessionKey
)
