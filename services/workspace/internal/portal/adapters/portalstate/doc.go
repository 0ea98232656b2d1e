// Package portalstate keeps the administrator's portal's links and the
// ways to them (a link's secret, a session's token) for the portal's use
// cases (portalapp.Store): in Redis, shared by every replica, or in this
// process's memory when the service runs without Redis (one replica).
// Links live minutes to an hour, so neither keeps them longer: each record
// expires when it stops mattering (portaldomain.Link.ForgetAt), and a
// secret or a token is kept as its digest only.
package portalstate
