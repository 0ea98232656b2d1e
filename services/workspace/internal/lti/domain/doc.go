// Package domain holds the LTI context's rules: what an LTI 1.1 launch and
// an LTI 1.3 login, launch, deep linking reply and Dynamic Registration
// must be, a workspace's platform registrations and their bounds, the
// tool's signing keys and their rotation, the lti1p1 migration claim, and
// the outbound rule of the platform URLs the service stores and calls.
//
// It is named domain, like every context's domain package (its folder,
// internal/lti/domain, says which context), so the LTI context reads like
// the workspace one; a file that imports both names this one ltidomain.
// It imports nothing of the workspace context: the workspace domain holds
// the registrations (Registrations) and records the events of their
// changes, so the dependency runs from the workspace to LTI, never back.
// Besides the standard library it imports pkg/fault (error kinds), pkg/jose
// (an id_token's claims), pkg/outbound (the outbound URL Policy),
// pkg/ltistorage (the platform storage target's bound) and pkg/clip (a
// quoted value shortened for a message).
package domain
