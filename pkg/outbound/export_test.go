package outbound

// RefusePrivate is the dialer's address check, for the tests.
var RefusePrivate = refusePrivate
