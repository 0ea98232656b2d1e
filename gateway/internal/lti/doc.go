// Package lti serves the pages an LMS opens LiveProctor with: a
// workspace's LTI configuration and the launch that opens the component
// for a teacher or student. The services check a launch; this package
// reads it from the LMS's form, asks the auth service for a session and
// renders the page, or a page saying why the launch was refused.
//
// LTI 1.1 is served by lti11_config.go (the cartridge XML) and
// lti11_launch.go (the OAuth 1.0a-signed form post). LTI 1.3's pages, the
// OIDC login initiation, the launch (an id_token form post) and the tool's
// JWKS, belong beside them as lti13_login.go, lti13_launch.go and
// lti13_jwks.go; refusal.go renders the refusal pages of every version.
package lti
