package domain

import (
	"net/mail"
	"strings"
	"unicode"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
)

// maxEmailLength is the longest address accepted (RFC 5321's path limit).
const maxEmailLength = 254

// CheckLogin checks the user and workspace of a login or logout, naming
// every bad field.
func CheckLogin(email, workspaceID string) error {
	var v []fault.FieldViolation
	if msg := checkEmail(email); msg != "" {
		v = append(v, fault.FieldViolation{Field: "email", Description: msg})
	}
	if msg := checkWorkspaceID(workspaceID); msg != "" {
		v = append(v, fault.FieldViolation{Field: "workspaceId", Description: msg})
	}
	return fault.InvalidFields(v)
}

// checkEmail accepts a single address without a display name, such as
// ada@example.com, of at most 254 characters, none of them a control
// character (net/mail admits the C1 controls, U+0080 to U+009F).
func checkEmail(email string) string {
	switch {
	case email == "":
		return "is required"
	case len(email) > maxEmailLength:
		return "must be at most 254 characters"
	case strings.IndexFunc(email, unicode.IsControl) >= 0:
		return "must not contain control characters"
	}
	addr, err := mail.ParseAddress(email)
	if err != nil || addr.Name != "" || addr.Address != email || !strings.Contains(email, "@") {
		return "must be a plain email address such as ada@example.com, without a display name"
	}
	return ""
}

// checkWorkspaceID applies the workspace service's id rule.
func checkWorkspaceID(id string) string {
	switch {
	case id == "":
		return "is required"
	case !ident.ValidWorkspaceID(id):
		return ident.WorkspaceIDRule
	}
	return ""
}

// CheckWorkspaceID checks a workspace id on its own.
func CheckWorkspaceID(id string) error {
	if msg := checkWorkspaceID(id); msg != "" {
		return fault.InvalidField("workspaceId", msg)
	}
	return nil
}
