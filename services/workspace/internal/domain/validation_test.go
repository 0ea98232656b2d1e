package domain_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// fields returns the fields a check reported, in order.
func fields(v domain.Violations) []string {
	out := []string{}
	for _, f := range v {
		out = append(out, f.Field)
	}
	return out
}

func expect(t *testing.T, v domain.Violations, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := fields(v); !slices.Equal(got, want) {
		t.Errorf("violations on %q, want %q (%v)", got, want, v)
	}
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
			var v domain.Violations
			domain.CheckID(&v, "id", tt.id)
			expect(t, v, tt.want...)
		})
	}
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
			var v domain.Violations
			if got := domain.CheckName(&v, "name", tt.name); got != tt.trimmed {
				t.Errorf("trimmed = %q, want %q", got, tt.trimmed)
			}
			expect(t, v, tt.want...)
		})
	}
}

func TestCheckType(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want domain.Type
		bad  bool
	}{
		{"DISTRICT", domain.TypeDistrict, false},
		{"CAMPUS", domain.TypeCampus, false},
		{"campus", "", true},
		{"SCHOOL", "", true},
		{"", "", true},
	} {
		var v domain.Violations
		got := domain.CheckType(&v, "type", tt.in)
		if got != tt.want || (len(v) > 0) != tt.bad {
			t.Errorf("CheckType(%q) = %q, %v", tt.in, got, v)
		}
		if tt.bad && !strings.Contains(v[0].Description, "DISTRICT, CAMPUS") {
			t.Errorf("message %q does not list the allowed values", v[0].Description)
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
		{"state not ISO", domain.Address{State: "California", Country: "US"}, []string{"address.state"}},
		{"state suffix too long", domain.Address{State: "US-CALI", Country: "US"}, []string{"address.state"}},
		{"city 200", domain.Address{City: strings.Repeat("c", 200)}, nil},
		{"city 201", domain.Address{City: strings.Repeat("c", 201)}, []string{"address.city"}},
		{"city control", domain.Address{City: "a\nb"}, []string{"address.city"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v domain.Violations
			domain.CheckAddress(&v, "address", tt.a)
			expect(t, v, tt.want...)
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
		{"no slash", []string{"math"}, []string{"products[0].bank.id"}},
		{"empty publisher", []string{"/math"}, []string{"products[0].bank.id"}},
		{"empty bank", []string{"acme/"}, []string{"products[0].bank.id"}},
		{"two slashes", []string{"a/b/c"}, []string{"products[0].bank.id"}},
		{"space", []string{"acme/ma th"}, []string{"products[0].bank.id"}},
		{"empty", []string{"acme/math", ""}, []string{"products[1].bank.id"}},
		{"duplicate", []string{"acme/math", "acme/ela", "acme/math"}, []string{"products[2].bank.id"}},
		{"too long", []string{"a/" + strings.Repeat("b", 199)}, []string{"products[0].bank.id"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var v domain.Violations
			domain.CheckProducts(&v, "products", tt.ids)
			expect(t, v, tt.want...)
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
			var v domain.Violations
			domain.CheckObjectiveDocuments(&v, "objectiveDocuments", tt.docs)
			expect(t, v, tt.want...)
		})
	}
}

func TestCheckListInputs(t *testing.T) {
	f := "filter.address.state.include"
	var v domain.Violations
	domain.CheckStates(&v, f, []string{"US-TX", "3fa85f64-5717-4562-b3fc-2c963f66afa6"})
	expect(t, v)
	v = nil
	domain.CheckStates(&v, f, []string{"US-TX", ""})
	expect(t, v, f+"[1]")
	v = nil
	domain.CheckStates(&v, f, make([]string, 1001))
	expect(t, v, f)

	v = nil
	domain.CheckSearch(&v, "filter.search", strings.Repeat("s", 200))
	expect(t, v)
	domain.CheckSearch(&v, "filter.search", strings.Repeat("s", 201))
	expect(t, v, "filter.search")

	size := func(n int32) *int32 { return &n }
	for _, tt := range []struct {
		in   *int32
		want int
		bad  bool
	}{{nil, 1000, false}, {size(0), 1000, true}, {size(1), 1, false}, {size(1000), 1000, false}, {size(1001), 1000, true}, {size(-1), 1000, true}} {
		var v domain.Violations
		if got := domain.CheckPageSize(&v, "pageSize", tt.in); got != tt.want || (len(v) > 0) != tt.bad {
			t.Errorf("CheckPageSize(%v) = %d, %v", tt.in, got, v)
		}
	}
}

func TestViolationsErr(t *testing.T) {
	var v domain.Violations
	if v.Err() != nil {
		t.Fatal("empty violations are an error")
	}
	v.Add("name", "is required")
	v.Add("type", "must be one of DISTRICT, CAMPUS")
	e, ok := fault.As(v.Err())
	if !ok || e.Kind != fault.Invalid || len(e.Fields) != 2 || e.Fields[1].Field != "type" {
		t.Fatalf("Err() = %#v", v.Err())
	}
}
