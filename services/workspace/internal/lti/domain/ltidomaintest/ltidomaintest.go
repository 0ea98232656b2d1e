// Package ltidomaintest is what the tests of registrations' rules build on,
// in the LTI domain and in the workspace domain that holds registrations:
// one valid registration, and the fields an error names.
package ltidomaintest

import (
	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// ValidRegistration is a registration every rule accepts, as Canvas gives
// one; each call returns a new value a test may change.
func ValidRegistration() ltidomain.NewRegistration {
	token := "https://sso.canvaslms.com/login/oauth2/token"
	return ltidomain.NewRegistration{
		Issuer:        "https://canvas.instructure.com",
		ClientID:      "10000000000001",
		DeploymentIDs: []string{"1:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"},
		AuthLoginURL:  "https://sso.canvaslms.com/api/lti/authorize_redirect",
		JWKSURL:       "https://sso.canvaslms.com/api/lti/security/jwks",
		AuthTokenURL:  &token,
	}
}

// Violated lists the fields err names, with their descriptions.
func Violated(err error) map[string]string {
	out := map[string]string{}
	if e, ok := fault.As(err); ok {
		for _, f := range e.Fields {
			out[f.Field] = f.Description
		}
	}
	return out
}
