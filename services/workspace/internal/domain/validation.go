package domain

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
)

// Limits of the interface (contract section 4).
const (
	MaxPageSize     = 1000
	MaxListElements = 1000
	maxNameLength   = 200
	maxCityLength   = 200
	maxSearchLength = 200
	maxBankIDLength = 200
	maxDocLength    = 500
	maxStateLength  = 64
)

// Violations collects what is wrong with a request, field by field, so one
// answer names every problem.
type Violations []fault.FieldViolation

// Add records a problem with field.
func (v *Violations) Add(field, description string) {
	*v = append(*v, fault.FieldViolation{Field: field, Description: description})
}

// Err returns nil when nothing was recorded, else a fault.Invalid error.
func (v Violations) Err() error { return fault.InvalidFields(v) }

// CheckID checks a workspace id: 1–128 characters of A-Z a-z 0-9 . _ -
// (no ':', which would clash with the ":undelete" verb).
func CheckID(v *Violations, field, id string) {
	if id == "" {
		v.Add(field, "is required")
		return
	}
	if !ident.ValidWorkspaceID(id) {
		v.Add(field, ident.WorkspaceIDRule)
	}
}

// CheckName checks a display name and returns it trimmed: at most 200
// characters as sent (the published document can state no other bound), not
// empty after trimming, no control characters.
func CheckName(v *Violations, field, name string) string {
	sent := utf8.RuneCountInString(name)
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		v.Add(field, "is required")
	case sent > maxNameLength:
		v.Add(field, fmt.Sprintf("must be at most %d characters", maxNameLength))
	case hasControl(name):
		v.Add(field, "must not contain control characters")
	}
	return name
}

// CheckType checks a workspace type.
func CheckType(v *Violations, field, t string) Type {
	for _, known := range Types {
		if t == string(known) {
			return known
		}
	}
	if t == "" {
		v.Add(field, "is required: one of "+typeList())
	} else {
		v.Add(field, "must be one of "+typeList())
	}
	return ""
}

func typeList() string {
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// CheckAddress checks an address; field is its prefix ("address").
func CheckAddress(v *Violations, field string, a Address) {
	if utf8.RuneCountInString(a.City) > maxCityLength {
		v.Add(field+".city", fmt.Sprintf("must be at most %d characters", maxCityLength))
	} else if hasControl(a.City) {
		v.Add(field+".city", "must not contain control characters")
	}
	if a.Country != "" && !countries[a.Country] {
		v.Add(field+".country", "must be an ISO 3166-1 alpha-2 country code such as US")
	}
	if a.State == "" {
		return
	}
	prefix, sub, ok := strings.Cut(a.State, "-")
	if !ok || len(prefix) != 2 || len(sub) < 1 || len(sub) > 3 || strings.IndexFunc(sub, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		v.Add(field+".state", "must be an ISO 3166-2 code starting with the country, such as US-CA")
		return
	}
	switch {
	case a.Country == "":
		v.Add(field+".country", "is required when address.state is set")
	case prefix != a.Country:
		v.Add(field+".state", "must start with the country code "+a.Country+"-")
	}
}

// CheckProducts checks shared products given as bank ids
// (<publisher>/<bank>); field is "products".
func CheckProducts(v *Violations, field string, bankIDs []string) {
	if len(bankIDs) > MaxListElements {
		v.Add(field, fmt.Sprintf("must have at most %d elements", MaxListElements))
		return
	}
	first := make(map[string]int, len(bankIDs))
	for i, id := range bankIDs {
		f := fmt.Sprintf("%s[%d].bank.id", field, i)
		publisher, bank, ok := strings.Cut(id, "/")
		switch {
		case id == "":
			v.Add(f, "is required")
		case len(id) > maxBankIDLength:
			v.Add(f, fmt.Sprintf("must be at most %d characters", maxBankIDLength))
		case !ok || publisher == "" || bank == "" || strings.Contains(bank, "/") || strings.IndexFunc(id, unicode.IsSpace) >= 0 || hasControl(id):
			v.Add(f, "must be <publisher>/<bank>: two non-empty parts without '/' or spaces")
		default:
			if j, dup := first[id]; dup {
				v.Add(f, fmt.Sprintf("duplicate of %s[%d]", field, j))
			} else {
				first[id] = i
			}
		}
	}
}

// CheckObjectiveDocuments checks ids of the form
// <authority>#<set>#<subject>:<year>.
func CheckObjectiveDocuments(v *Violations, field string, docs []string) {
	if len(docs) > MaxListElements {
		v.Add(field, fmt.Sprintf("must have at most %d elements", MaxListElements))
		return
	}
	for i, doc := range docs {
		if !validObjectiveDocument(doc) {
			v.Add(fmt.Sprintf("%s[%d]", field, i), "must be <authority>#<set>#<subject>:<year> with a four-digit year")
		}
	}
}

func validObjectiveDocument(doc string) bool {
	if len(doc) > maxDocLength {
		return false
	}
	head, year, ok := strings.Cut(doc, ":")
	if !ok || len(year) != 4 || strings.IndexFunc(year, func(r rune) bool { return r < '0' || r > '9' }) >= 0 {
		return false
	}
	parts := strings.Split(head, "#")
	if len(parts) != 3 {
		return false
	}
	for _, p := range parts {
		if p == "" || strings.IndexFunc(p, unicode.IsSpace) >= 0 || hasControl(p) {
			return false
		}
	}
	return true
}

// CheckStates checks the values of a list's address.state filter.
func CheckStates(v *Violations, field string, states []string) {
	if len(states) > MaxListElements {
		v.Add(field, fmt.Sprintf("must have at most %d elements", MaxListElements))
		return
	}
	for i, s := range states {
		if s == "" || len(s) > maxStateLength || hasControl(s) {
			v.Add(fmt.Sprintf("%s[%d]", field, i), fmt.Sprintf("must be 1 to %d characters without control characters", maxStateLength))
		}
	}
}

// CheckSearch checks a list's name search text.
func CheckSearch(v *Violations, field, s string) {
	if utf8.RuneCountInString(s) > maxSearchLength {
		v.Add(field, fmt.Sprintf("must be at most %d characters", maxSearchLength))
	} else if hasControl(s) {
		v.Add(field, "must not contain control characters")
	}
}

// CheckPageSize returns the page size to use: nil means MaxPageSize.
func CheckPageSize(v *Violations, field string, n *int32) int {
	switch {
	case n == nil:
		return MaxPageSize
	case *n < 1 || *n > MaxPageSize:
		v.Add(field, fmt.Sprintf("must be between 1 and %d", MaxPageSize))
		return MaxPageSize
	}
	return int(*n)
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0 || !utf8.ValidString(s)
}
