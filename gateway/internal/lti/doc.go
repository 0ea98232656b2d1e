// Package lti serves the pages an LMS opens LiveProctor with: a
// workspace's LTI configuration and the launch that opens the component
// for a teacher or student. The services check a launch; this package
// reads it from the LMS's form, asks the auth service for a session and
// renders the page, or a page saying why the launch was refused.
//
// LTI 1.1 is served by lti11_config.go (the cartridge XML) and
// lti11_launch.go (the OAuth 1.0a-signed form post). LTI 1.3's pages are
// lti13_login.go (the OIDC login initiation), lti13_launch.go (the launch,
// an id_token form post, and the deep-linking page), lti13_deep_linking.go
// (the page's reply, posted back to the platform), lti13_jwks.go (the
// tool's public keys) and lti13_canvas.go (a workspace's Canvas
// developer-key JSON); lti13_state.go names the cookie that carries a
// login's state to its launch. refusal.go renders the refusal pages of
// every version.
package lti
