// Package portal serves the administrator's portal: the pages under /portal/
// where a school's or district's IT administrator, sent a link by the
// vendor, sets up LTI for one workspace (the values an LMS asks for, the
// registrations and their launch health, the LTI 1.1 credentials), manages
// its key pairs and reads its audit trail.
//
// The link (/portal/open/{secret}) starts a session in the workspace
// service, whose token the browser keeps in a cookie (session.go). Every
// call a page makes carries the token as `portal-session` metadata, never as
// Authorization, so the session never becomes a credential of the REST
// routes; the workspace service decides what a session may do and for
// which workspace. The gateway only renders: it holds no state of its own.
//
// portal.go holds the routes and the headers every answer carries; open.go
// the link and signing out; session.go the cookie, the CSRF token and the
// same-origin check; render.go the templates and the refusal pages; the
// other files one section each (lti13.go, registrations.go, keys.go with
// LTI 1.1, events.go).
package portal
