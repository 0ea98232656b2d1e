// Package domain holds the administrator's portal's rules: a portal link
// (made for one workspace, opened once within LinkTTL, revocable), the
// session its opening starts (SessionTTL, fixed), the bearer secrets both
// are reached by, and the rule of a link's returnUrl.
//
// It is named domain, like every context's domain package (its folder,
// internal/portal/domain, says which context); a file that imports both
// names this one portaldomain. It imports nothing of the workspace
// context: what a link needs of its workspace (whether it is active, its
// token cut-off) is given in. Besides the standard library it imports
// pkg/fault (error kinds).
package domain
