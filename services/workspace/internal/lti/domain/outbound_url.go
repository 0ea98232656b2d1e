package domain

import (
	"github.com/liveproctor/workspaces/pkg/outbound"
)

// The URLs a registration stores are the platform URLs the service calls
// later (a platform's keys, its token endpoint) or sends browsers to (its
// login endpoint): they follow the rule of stored URLs, pkg/outbound's
// StoredURLProblem (https on public addresses, but for the host:port
// entries of LTI_ALLOW_INSECURE_HOSTS, which tests' platforms on loopback
// use). The same Policy checks them again when they are called.

// URLPolicy is the outbound rule URLs are stored under.
type URLPolicy = outbound.Policy

// MaxURLBytes bounds a stored URL.
const MaxURLBytes = outbound.MaxURLLen

// insecureHostsSetting is the setting a refusal of http names.
const insecureHostsSetting = "LTI_ALLOW_INSECURE_HOSTS"

// checkURL checks raw against the rule, as an issuer (no query) when
// issuer is set, and returns what is wrong with it ("" when nothing).
func checkURL(policy URLPolicy, raw string, issuer bool) string {
	form := outbound.AnyURL
	if issuer {
		form = outbound.URLWithoutQuery
	}
	return policy.StoredURLProblem(raw, form, insecureHostsSetting)
}
