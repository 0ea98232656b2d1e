package domain

import (
	"fmt"
	"slices"
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

// violations collects what is wrong with a request, field by field, so one
// answer names every problem. Fields are named in the domain's words (name,
// parent, address.city, products[2]); RenameFields gives them the names a
// caller knows them by.
type violations []fault.FieldViolation

func (v *violations) add(field, description string) {
	*v = append(*v, fault.FieldViolation{Field: field, Description: description})
}

// err returns nil when nothing was recorded, else a fault.Invalid error.
func (v violations) err() error { return fault.InvalidFields(v) }

// RenameFields returns err with the fields it names renamed by name, and
// its message too where the message starts with its first field (as
// fault.InvalidField's and the domain's own do). Other errors pass as they
// are. A port renames fields to its API's paths, the service to the
// configuration variables they came from.
func RenameFields(err error, name func(field string) string) error {
	e, ok := fault.As(err)
	if !ok || len(e.Fields) == 0 {
		return err
	}
	renamed := *e
	renamed.Fields = make([]fault.FieldViolation, len(e.Fields))
	for i, f := range e.Fields {
		renamed.Fields[i] = fault.FieldViolation{Field: name(f.Field), Description: f.Description}
	}
	if rest, ok := strings.CutPrefix(e.Message, e.Fields[0].Field+": "); ok {
		renamed.Message = renamed.Fields[0].Field + ": " + rest
	}
	return &renamed
}

// CheckNewWorkspace checks what a caller chooses for a new workspace,
// naming every field that breaks a rule, and returns the details as they
// are kept (the name trimmed). NewWorkspace checks the same; checking first
// answers a bad request before anything is read.
func CheckNewWorkspace(id string, d Details) (Details, error) {
	var v violations
	checkID(&v, "id", id)
	d = d.check(&v)
	return d, v.err()
}

func (d Details) check(v *violations) Details {
	d.Name = checkName(v, d.Name)
	checkType(v, d.Type)
	if d.ParentID != "" {
		checkID(v, "parent", d.ParentID)
	}
	checkAddress(v, d.Address)
	checkProducts(v, d.Products)
	checkObjectiveDocuments(v, d.ObjectiveDocuments)
	if d.RateLimit != nil {
		checkRateLimit(v, *d.RateLimit)
	}
	return d
}

// Check checks the fields the changes set, naming every one that breaks a
// rule, and returns them as they are kept (a name trimmed).
func (c Changes) Check() (Changes, error) {
	var v violations
	if c.Name != nil {
		name := checkName(&v, *c.Name)
		c.Name = &name
	}
	if c.Type != nil {
		checkType(&v, *c.Type)
	}
	if c.ParentID != nil && *c.ParentID != "" {
		checkID(&v, "parent", *c.ParentID)
	}
	if c.Address != nil {
		checkAddress(&v, *c.Address)
	}
	if c.Products != nil {
		checkProducts(&v, *c.Products)
	}
	if c.ObjectiveDocuments != nil {
		checkObjectiveDocuments(&v, *c.ObjectiveDocuments)
	}
	if c.RateLimit != nil && !c.RemoveRateLimit {
		checkRateLimit(&v, *c.RateLimit)
	}
	return c, v.err()
}

// CheckListQuery checks a list's filter (search, states) and pageSize, and
// returns the page size to use: MaxPageSize when none is given.
func CheckListQuery(search string, states []string, pageSize *int32) (int, error) {
	var v violations
	checkSearch(&v, search)
	checkStates(&v, states)
	size := checkPageSize(&v, pageSize)
	return size, v.err()
}

// checkID checks a workspace id (field is id, or parent for a reference):
// 1–128 characters of A-Z a-z 0-9 . _ - (no ':', which would clash with the
// ":undelete" verb).
func checkID(v *violations, field, id string) {
	if id == "" {
		v.add(field, "is required")
		return
	}
	if !ident.ValidWorkspaceID(id) {
		v.add(field, ident.WorkspaceIDRule)
	}
}

// checkName checks a display name and returns it trimmed: at most 200
// characters as sent (the published document can state no other bound), not
// empty after trimming, no control characters.
func checkName(v *violations, name string) string {
	sent := utf8.RuneCountInString(name)
	name = strings.TrimSpace(name)
	switch {
	case name == "":
		v.add("name", "is required")
	case sent > maxNameLength:
		v.add("name", fmt.Sprintf("must be at most %d characters", maxNameLength))
	case hasControl(name):
		v.add("name", "must not contain control characters")
	}
	return name
}

// checkType checks a workspace type.
func checkType(v *violations, t Type) {
	switch {
	case slices.Contains(Types, t):
	case t == "":
		v.add("type", "is required: one of "+typeList())
	default:
		v.add("type", "must be one of "+typeList())
	}
}

func typeList() string {
	names := make([]string, len(Types))
	for i, t := range Types {
		names[i] = string(t)
	}
	return strings.Join(names, ", ")
}

// checkAddress checks an address.
func checkAddress(v *violations, a Address) {
	if utf8.RuneCountInString(a.City) > maxCityLength {
		v.add("address.city", fmt.Sprintf("must be at most %d characters", maxCityLength))
	} else if hasControl(a.City) {
		v.add("address.city", "must not contain control characters")
	}
	if a.Country != "" && !countries[a.Country] {
		v.add("address.country", "must be an ISO 3166-1 alpha-2 country code such as US")
	}
	if a.State == "" {
		return
	}
	prefix, sub, ok := strings.Cut(a.State, "-")
	if !ok || len(prefix) != 2 || len(sub) < 1 || len(sub) > 3 || strings.IndexFunc(sub, func(r rune) bool {
		return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) >= 0 {
		v.add("address.state", "must be an ISO 3166-2 code starting with the country, such as US-CA")
		return
	}
	switch {
	case a.Country == "":
		v.add("address.country", "is required when address.state is set")
	case !countries[a.Country]:
		// Already named above; the state cannot be held to it, and the
		// description would echo whatever the caller sent as a country.
	case prefix != a.Country:
		v.add("address.state", "must start with the country code "+a.Country+"-")
	}
}

// checkProducts checks shared products given as bank ids
// (<publisher>/<bank>).
func checkProducts(v *violations, bankIDs []string) {
	if len(bankIDs) > MaxListElements {
		v.add("products", fmt.Sprintf("must have at most %d elements", MaxListElements))
		return
	}
	first := make(map[string]int, len(bankIDs))
	for i, id := range bankIDs {
		f := fmt.Sprintf("products[%d]", i)
		publisher, bank, ok := strings.Cut(id, "/")
		switch {
		case id == "":
			v.add(f, "is required")
		case len(id) > maxBankIDLength:
			v.add(f, fmt.Sprintf("must be at most %d characters", maxBankIDLength))
		case !ok || publisher == "" || bank == "" || strings.Contains(bank, "/") || strings.IndexFunc(id, unicode.IsSpace) >= 0 || hasControl(id):
			v.add(f, "must be <publisher>/<bank>: two non-empty parts without '/' or spaces")
		default:
			if j, dup := first[id]; dup {
				v.add(f, fmt.Sprintf("duplicate of products[%d]", j))
			} else {
				first[id] = i
			}
		}
	}
}

// checkObjectiveDocuments checks ids of the form
// <authority>#<set>#<subject>:<year>.
func checkObjectiveDocuments(v *violations, docs []string) {
	if len(docs) > MaxListElements {
		v.add("objectiveDocuments", fmt.Sprintf("must have at most %d elements", MaxListElements))
		return
	}
	for i, doc := range docs {
		if !validObjectiveDocument(doc) {
			v.add(fmt.Sprintf("objectiveDocuments[%d]", i), "must be <authority>#<set>#<subject>:<year> with a four-digit year")
		}
	}
}

// Bounds of a workspace's own rate limit.
const (
	MaxRateLimitPerSecond = 100_000
	MaxRateLimitBurst     = 1_000_000
)

// checkRateLimit checks a workspace's own rate limit.
func checkRateLimit(v *violations, r RateLimit) {
	if r.PerSecond < 1 || r.PerSecond > MaxRateLimitPerSecond {
		v.add("rateLimit.perSecond", fmt.Sprintf("must be 1 to %d", MaxRateLimitPerSecond))
	}
	if r.Burst < 1 || r.Burst > MaxRateLimitBurst {
		v.add("rateLimit.burst", fmt.Sprintf("must be 1 to %d", MaxRateLimitBurst))
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

// checkStates checks the values of a list's address.state filter.
func checkStates(v *violations, states []string) {
	if len(states) > MaxListElements {
		v.add("states", fmt.Sprintf("must have at most %d elements", MaxListElements))
		return
	}
	for i, s := range states {
		if s == "" || len(s) > maxStateLength || hasControl(s) {
			v.add(fmt.Sprintf("states[%d]", i), fmt.Sprintf("must be 1 to %d characters without control characters", maxStateLength))
		}
	}
}

// checkSearch checks a list's name search text.
func checkSearch(v *violations, s string) {
	if utf8.RuneCountInString(s) > maxSearchLength {
		v.add("search", fmt.Sprintf("must be at most %d characters", maxSearchLength))
	} else if hasControl(s) {
		v.add("search", "must not contain control characters")
	}
}

// checkPageSize returns the page size to use: nil means MaxPageSize.
func checkPageSize(v *violations, n *int32) int {
	switch {
	case n == nil:
		return MaxPageSize
	case *n < 1 || *n > MaxPageSize:
		v.add("pageSize", fmt.Sprintf("must be between 1 and %d", MaxPageSize))
		return MaxPageSize
	}
	return int(*n)
}

func hasControl(s string) bool {
	return strings.IndexFunc(s, unicode.IsControl) >= 0 || !utf8.ValidString(s)
}
