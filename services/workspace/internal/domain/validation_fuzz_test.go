package domain_test

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// The documented shapes, stated independently of the checks under test.
var (
	stateShape   = regexp.MustCompile(`^([A-Z]{2})-[A-Z0-9]{1,3}$`)
	countryShape = regexp.MustCompile(`^[A-Z]{2}$`)
	bankIDShape  = regexp.MustCompile(`^[^/]+/[^/]+$`)
	docShape     = regexp.MustCompile(`^[^#:]+#[^#:]+#[^#:]+:[0-9]{4}$`)
	// elementField is the field of one list element.
	elementField = regexp.MustCompile(`^(products|objectiveDocuments|states)\[(\d+)\]$`)
)

// Whatever a caller sends for a new workspace, CheckNewWorkspace answers nil
// or one Invalid error naming only the request's fields (list elements by
// index), each with a description that echoes nothing of the input; it
// names id and parent exactly when the id rule refuses them; and what it
// accepts keeps every documented rule.
func FuzzCheckNewWorkspace(f *testing.F) {
	f.Add("springfield-district", "Springfield District", "DISTRICT", "", "Springfield", "US-IL", "US", "pub/math\npub/ela", "CCSS#Math#Grade5:2010")
	f.Add("", "", "", "", "", "", "", "", "")
	f.Add("a:b", "  ", "campus", "a/b", "\x00", "US-CA", "", "pub/math\npub/math", "CCSS#Math#Grade5:10")
	f.Add("x", " n ", "CAMPUS", "x", strings.Repeat("é", 201), "CA-ON", "US", "a/b/c\n/b\na/\n\n", "a#b#c:2010\na#b:2010\na b#c#d:2010")
	f.Add("x", "\xff", "DISTRICT", "p", "\u0085", "us-ca", "ZZ", "a\u00a0/b", "a#b#c\u0085:2010")
	f.Add("x", "name\u200b", "DISTRICT", "", "", "US-", "US", "\xff/b", "a#b#c:٢٠١٠")
	f.Fuzz(func(t *testing.T, id, name, typ, parent, city, state, country, products, docs string) {
		d := domain.Details{
			Name: name, Type: domain.Type(typ), ParentID: parent,
			Address:  domain.Address{City: city, State: state, Country: country},
			Products: lines(products), ObjectiveDocuments: lines(docs),
		}
		kept, err := domain.CheckNewWorkspace(id, d)
		named := checkViolations(t, err, map[string]int{"products": len(d.Products), "objectiveDocuments": len(d.ObjectiveDocuments)},
			"id", "name", "type", "parent", "address.city", "address.state", "address.country", "products")
		if named["id"] == ident.ValidWorkspaceID(id) {
			t.Fatalf("id %q: refused = %v, the id rule says valid = %v", id, named["id"], !named["id"])
		}
		if named["parent"] == (parent == "" || ident.ValidWorkspaceID(parent)) {
			t.Fatalf("parent %q: refused = %v", parent, named["parent"])
		}
		if err != nil {
			return
		}

		if kept.Name != strings.TrimSpace(name) || kept.Name == "" || utf8.RuneCountInString(name) > 200 || !plain(kept.Name) {
			t.Fatalf("name %q accepted as %q", name, kept.Name)
		}
		if !slices.Contains(domain.Types, d.Type) {
			t.Fatalf("type %q accepted", typ)
		}
		if utf8.RuneCountInString(city) > 200 || !plain(city) {
			t.Fatalf("city %q accepted", city)
		}
		if country != "" && !countryShape.MatchString(country) {
			t.Fatalf("country %q accepted", country)
		}
		if m := stateShape.FindStringSubmatch(state); state != "" && (m == nil || m[1] != country) {
			t.Fatalf("state %q accepted with the country %q", state, country)
		}
		for i, p := range d.Products {
			if len(p) > 200 || !bankIDShape.MatchString(p) || !plain(p) || strings.IndexFunc(p, unicode.IsSpace) >= 0 || slices.Index(d.Products, p) != i {
				t.Fatalf("products[%d] %q accepted", i, p)
			}
		}
		for i, doc := range d.ObjectiveDocuments {
			if len(doc) > 500 || !docShape.MatchString(doc) || !plain(doc) || strings.IndexFunc(doc, unicode.IsSpace) >= 0 {
				t.Fatalf("objectiveDocuments[%d] %q accepted", i, doc)
			}
		}
	})
}

// A list's filter and page size: nil or one Invalid error naming only
// search, states[i] and pageSize; an accepted page size is the one asked
// for (1 to 1000) or 1000 when none is, and accepted filters hold no
// control characters.
func FuzzCheckListQuery(f *testing.F) {
	f.Add("spring", "US-IL", int32(50), true)
	f.Add("", "", int32(0), false)
	f.Add(strings.Repeat("é", 201), "\x00", int32(1001), true)
	f.Add("\xff", strings.Repeat("S", 65), int32(-1), true)
	f.Add("a\u0085b", "US-IL\nUS-CA", int32(1000), true)
	f.Fuzz(func(t *testing.T, search, states string, pageSize int32, sized bool) {
		var size *int32
		if sized {
			size = &pageSize
		}
		list := lines(states)
		got, err := domain.CheckListQuery(search, list, size)
		checkViolations(t, err, map[string]int{"states": len(list)}, "search", "pageSize")
		if err != nil {
			return
		}
		if want := int(pageSize); !sized && got != domain.MaxPageSize || sized && (got != want || want < 1 || want > domain.MaxPageSize) {
			t.Fatalf("page size %d (given: %v) accepted as %d", pageSize, sized, got)
		}
		if utf8.RuneCountInString(search) > 200 || !plain(search) {
			t.Fatalf("search %q accepted", search)
		}
		for i, s := range list {
			if s == "" || len(s) > 64 || !plain(s) {
				t.Fatalf("states[%d] %q accepted", i, s)
			}
		}
	})
}

// lines splits s at line breaks into a list, none when s is empty. The
// rules refuse white space in list elements, so every list is reachable.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// plain reports valid UTF-8 without control characters.
func plain(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
}

// checkViolations fails unless err is nil or an Invalid error whose message
// names its first field and whose fields are among fields or an element of
// a list (by its length in lists) and whose descriptions are short texts
// of their own. It returns the fields named.
func checkViolations(t *testing.T, err error, lists map[string]int, fields ...string) map[string]bool {
	t.Helper()
	named := map[string]bool{}
	if err == nil {
		return named
	}
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.Invalid || len(e.Fields) == 0 || !strings.HasPrefix(e.Message, e.Fields[0].Field+": "+e.Fields[0].Description) {
		t.Fatalf("error %v (kind %v), want an Invalid error naming fields", err, fault.KindOf(err))
	}
	for _, v := range e.Fields {
		if m := elementField.FindStringSubmatch(v.Field); m != nil {
			n, _ := strconv.Atoi(m[2])
			if length, ok := lists[m[1]]; !ok || n >= length {
				t.Fatalf("%v names %s, past the list's %d elements", err, v.Field, length)
			}
		} else if !slices.Contains(fields, v.Field) {
			t.Fatalf("%v names the field %q", err, v.Field)
		}
		if named[v.Field] {
			t.Fatalf("%v names %s twice", err, v.Field)
		}
		named[v.Field] = true
		if len(v.Description) > 120 || !plain(v.Description) {
			t.Fatalf("%s: the description %q is not a short text of its own", v.Field, v.Description)
		}
	}
	return named
}
