package domain_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// fields returns the fields err names, in order.
func fields(err error) []string {
	out := []string{}
	if e, ok := fault.As(err); ok {
		for _, f := range e.Fields {
			out = append(out, f.Field)
		}
	}
	return out
}

func expect(t *testing.T, err error, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := fields(err); !slices.Equal(got, want) {
		t.Errorf("violations on %q, want %q (%v)", got, want, err)
	}
	if err != nil && fault.KindOf(err) != fault.Invalid {
		t.Errorf("kind %v, want invalid", fault.KindOf(err))
	}
}

// valid are details that break no rule.
func valid() domain.Details {
	return domain.Details{Name: "Springfield", Type: domain.TypeDistrict}
}

func TestCheckID(t *testing.T) {
	tests := []struct {
		id   string
		want []string
	}{
		{"district-42_a.b", nil},
		{strings.Repeat("a", 128), nil},
		{"", []string{"id"}},
		{strings.Repeat("a", 129), []string{"id"}},
		{"a:undelete", []string{"id"}},
		{"a/b", []string{"id"}},
		{"école", []string{"id"}},
		{"a b", []string{"id"}},
	}
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			_, err := domain.CheckNewWorkspace(tt.id, valid())
			expect(t, err, tt.want...)
		})
	}
}

func TestCheckParent(t *testing.T) {
	d := valid()
	d.ParentID = "a:b"
	_, err := domain.CheckNewWorkspace("w", d)
	expect(t, err, "parent")
	d.ParentID = "" // no parent
	_, err = domain.CheckNewWorkspace("w", d)
	expect(t, err)
}

func TestCheckName(t *testing.T) {
	tests := []struct {
		name, trimmed string
		want          []string
	}{
		{"  Springfield  ", "Springfield", nil},
		{strings.Repeat("é", 200), strings.Repeat("é", 200), nil},
		{strings.Repeat("é", 201), strings.Repeat("é", 201), []string{"name"}},
		// The bound is on the name as sent, as the OpenAPI document states it.
		{" " + strings.Repeat("é", 200), strings.Repeat("é", 200), []string{"name"}},
		{"   ", "", []string{"name"}},
		{"", "", []string{"name"}},
		{"tab\there", "tab\there", []string{"name"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%.20q", tt.name), func(t *testing.T) {
			d := valid()
			d.Name = tt.name
			got, err := domain.CheckNewWorkspace("w", d)
			if got.Name != tt.trimmed {
				t.Errorf("trimmed = %q, want %q", got.Name, tt.trimmed)
			}
			expect(t, err, tt.want...)
		})
	}
}

func TestCheckType(t *testing.T) {
	for _, tt := range []struct {
		in  domain.Type
		bad bool
	}{
		{"DISTRICT", false},
		{"CAMPUS", false},
		{"campus", true},
		{"SCHOOL", true},
		{"", true},
	} {
		d := valid()
		d.Type = tt.in
		_, err := domain.CheckNewWorkspace("w", d)
		if (err != nil) != tt.bad {
			t.Errorf("type %q: %v", tt.in, err)
		}
		if tt.bad && !strings.Contains(err.Error(), "DISTRICT, CAMPUS") {
			t.Errorf("message %q does not list the allowed values", err)
		}
	}
}

func TestCheckAddress(t *testing.T) {
	tests := []struct {
		name string
		a    domain.Address
		want []string
	}{
		{"empty", domain.Address{}, nil},
		{"full", domain.Address{City: "Austin", State: "US-TX", Country: "US"}, nil},
		{"numeric subdivision", domain.Address{State: "FR-75", Country: "FR"}, nil},
		{"country only", domain.Address{Country: "GB"}, nil},
		{"unknown country", domain.Address{Country: "XX"}, []string{"address.country"}},
		{"lower-case country", domain.Address{Country: "us"}, []string{"address.country"}},
		{"three letters", domain.Address{Country: "USA"}, []string{"address.country"}},
		{"state of another country", domain.Address{State: "US-CA", Country: "CA"}, []string{"address.state"}},
		{"state without country", domain.Address{State: "US-CA"}, []string{"address.country"}},
		{"state of an unknown country", domain.Address{State: "US-CA", Country: strings.Repeat("X", 1000)}, []string{"address.country"}},
		{"state not ISO", domain.Address{State: "California", Country: "US"}, []string{"address.state"}},
		{"state suffix too long", domain.Address{State: "US-CALI", Country: "US"}, []string{"address.state"}},
		{"city 200", domain.Address{City: strings.Repeat("c", 200)}, nil},
		{"city 201", domain.Address{City: strings.Repeat("c", 201)}, []string{"address.city"}},
		{"city control", domain.Address{City: "a\nb"}, []string{"address.city"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := valid()
			d.Address = tt.a
			_, err := domain.CheckNewWorkspace("w", d)
			expect(t, err, tt.want...)
		})
	}
}

func TestCheckProducts(t *testing.T) {
	many := func(n int) []string {
		out := make([]string, n)
		for i := range out {
			out[i] = fmt.Sprintf("pub/bank-%d", i)
		}
		return out
	}
	tests := []struct {
		name string
		ids  []string
		want []string
	}{
		{"none", nil, nil},
		{"good", []string{"acme/math", "acme/ela"}, nil},
		{"1000", many(1000), nil},
		{"1001", many(1001), []string{"products"}},
		{"no slash", []string{"math"}, []string{"products[0]"}},
		{"empty publisher", []string{"/math"}, []string{"products[0]"}},
		{"empty bank", []string{"acme/"}, []string{"products[0]"}},
		{"two slashes", []string{"a/b/c"}, []string{"products[0]"}},
		{"space", []string{"acme/ma th"}, []string{"products[0]"}},
		{"empty", []string{"acme/math", ""}, []string{"products[1]"}},
		{"duplicate", []string{"acme/math", "acme/ela", "acme/math"}, []string{"products[2]"}},
		{"too long", []string{"a/" + strings.Repeat("b", 199)}, []string{"products[0]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := valid()
			d.Products = tt.ids
			_, err := domain.CheckNewWorkspace("w", d)
			expect(t, err, tt.want...)
		})
	}
}

func TestCheckObjectiveDocuments(t *testing.T) {
	tests := []struct {
		name string
		docs []string
		want []string
	}{
		{"good", []string{"CCSS#Math#Grade5:2010", "TEKS#ELA#G3:2017"}, nil},
		{"1001", slices.Repeat([]string{"A#B#C:2020"}, 1001), []string{"objectiveDocuments"}},
		{"letter in year", []string{"CCSS#Math#Grade5:20a4"}, []string{"objectiveDocuments[0]"}},
		{"short year", []string{"CCSS#Math#Grade5:210"}, []string{"objectiveDocuments[0]"}},
		{"no year", []string{"CCSS#Math#Grade5"}, []string{"objectiveDocuments[0]"}},
		{"two parts", []string{"CCSS#Math:2010"}, []string{"objectiveDocuments[0]"}},
		{"four parts", []string{"A#B#C#D:2010"}, []string{"objectiveDocuments[0]"}},
		{"empty part", []string{"A##C:2010"}, []string{"objectiveDocuments[0]"}},
		{"space", []string{"A#B C#D:2010"}, []string{"objectiveDocuments[0]"}},
		{"second bad", []string{"A#B#C:2010", "x"}, []string{"objectiveDocuments[1]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := domain.Changes{ObjectiveDocuments: &tt.docs}.Check()
			expect(t, err, tt.want...)
		})
	}
}

// Changes are checked field by field, only the fields they set, in the
// order a create names them.
func TestCheckChanges(t *testing.T) {
	name, typ, parent, clear := "  Renamed ", domain.Type("SCHOOL"), "a b", ""
	products := []string{"nobank"}
	address := domain.Address{Country: "XX"}
	c, err := domain.Changes{Name: &name}.Check()
	if err != nil || *c.Name != "Renamed" {
		t.Errorf("name change = %q, %v; want it trimmed", *c.Name, err)
	}
	_, err = domain.Changes{ParentID: &clear}.Check()
	expect(t, err)
	_, err = domain.Changes{}.Check()
	expect(t, err)
	blank := ""
	_, err = domain.Changes{Name: &blank, Type: &typ, ParentID: &parent, Address: &address, Products: &products}.Check()
	expect(t, err, "name", "type", "parent", "address.country", "products[0]")
}

func TestCheckListQuery(t *testing.T) {
	_, err := domain.CheckListQuery(strings.Repeat("s", 200), []string{"US-TX", "3fa85f64-5717-4562-b3fc-2c963f66afa6"}, nil)
	expect(t, err)
	_, err = domain.CheckListQuery("", []string{"US-TX", ""}, nil)
	expect(t, err, "states[1]")
	_, err = domain.CheckListQuery("", make([]string, 1001), nil)
	expect(t, err, "states")
	_, err = domain.CheckListQuery(strings.Repeat("s", 201), nil, nil)
	expect(t, err, "search")

	size := func(n int32) *int32 { return &n }
	for _, tt := range []struct {
		in   *int32
		want int
		bad  bool
	}{{nil, 1000, false}, {size(0), 1000, true}, {size(1), 1, false}, {size(1000), 1000, false}, {size(1001), 1000, true}, {size(-1), 1000, true}} {
		got, err := domain.CheckListQuery("", nil, tt.in)
		if got != tt.want || (err != nil) != tt.bad {
			t.Errorf("CheckListQuery(page size %v) = %d, %v", tt.in, got, err)
		}
		if tt.bad {
			expect(t, err, "pageSize")
		}
	}
}

func TestViolationsNameEveryField(t *testing.T) {
	_, err := domain.CheckNewWorkspace("", domain.Details{Type: "SCHOOL"})
	e, ok := fault.As(err)
	if !ok || e.Kind != fault.Invalid || len(e.Fields) != 3 || e.Message != "id: is required (and 2 more)" {
		t.Fatalf("error = %#v", err)
	}
}

func TestRenameFields(t *testing.T) {
	upper := func(f string) string { return strings.ToUpper(f) }
	_, invalid := domain.CheckNewWorkspace("", domain.Details{Name: "N", Type: "SCHOOL"})
	tests := []struct {
		name    string
		err     error
		message string
		fields  []string
	}{
		{"violations", invalid, "ID: is required (and 1 more)", []string{"ID", "TYPE"}},
		{"one field", fault.InvalidField("parent", "would make a cycle"), "PARENT: would make a cycle", []string{"PARENT"}},
		{"message about another thing", &fault.Error{Kind: fault.PermissionDenied, Message: "no",
			Fields: []fault.FieldViolation{{Field: "products[1]", Description: "not held"}}}, "no", []string{"PRODUCTS[1]"}},
		{"no fields", fault.New(fault.NotFound, "name: not found"), "name: not found", []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := domain.RenameFields(tt.err, upper)
			if got.Error() != tt.message || !slices.Equal(fields(got), tt.fields) || fault.KindOf(got) != fault.KindOf(tt.err) {
				t.Errorf("renamed = %q on %q (kind %v)", got, fields(got), fault.KindOf(got))
			}
		})
	}
	plain := errors.New("boom")
	if got := domain.RenameFields(plain, upper); got != plain {
		t.Errorf("a plain error became %v", got)
	}
	if domain.RenameFields(nil, upper) != nil {
		t.Error("nil became an error")
	}
}
