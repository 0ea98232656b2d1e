// Package ltistate keeps what an LTI flow holds between one request and
// the next, for minutes, each record used or taken once: LTI 1.1 launch
// nonces, LTI 1.3 logins (their state and nonce) until their launch and the
// cap on those pending, deep-linking requests until their reply, and
// Dynamic Registration links until a platform uses them; and the tool's
// access tokens to platforms, with the lock one fetch holds. In Redis,
// shared by every replica, or in this process's memory when the service
// runs without Redis.
package ltistate
