// Package indexcheck lets an adapter's tests fail on a query that would
// scan a collection: a Log watches every command a test client sends and
// checks each against the indexes the adapter declares
// (mongoconn.Declared). Only tests import it.
package indexcheck

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// The rules below let a test fail on a query that would scan a collection,
// without a database. They are the project's reading of MongoDB's "The ESR
// Rule" and "Indexing strategies":
//
//   - find, count, distinct, aggregate (a leading $match and a $sort right
//     after it), update and delete (each q) and findAndModify are checked;
//     other commands pass. An empty filter, or an aggregate not starting with
//     $match, reads the whole collection.
//   - $and is flattened and $or multiplied out; each branch must be served.
//   - A condition is an equality when its value is not an operator document
//     or is {$eq: v}; anything else, a regex value too, is a range.
//   - An equality or $in on _id is served by the implicit _id index. Else an
//     index needs the equality fields first (any order), then the sort fields
//     they do not fix (in order), and the range fields after the equalities.

// Indexes maps a collection name to the key patterns of the indexes an
// adapter declares on it (the _id index is implicit and never listed).
type Indexes map[string][]bson.D

// cmdQuery is one filter and sort that a command runs.
type cmdQuery struct {
	label  string // "statement i, " for an update or delete, else ""
	filter any
	sort   any
}

// Unserved returns "" when every query of cmd (a command document as the
// driver's CommandStartedEvent.Command gives it) is served by an index in ix,
// and otherwise a one-line reason for the test to report.
func Unserved(cmd bson.Raw, ix Indexes) string {
	var doc bson.D
	if err := bson.Unmarshal(cmd, &doc); err != nil {
		return fmt.Sprintf("unreadable command: %v", err)
	}
	if len(doc) == 0 {
		return ""
	}
	name, coll := doc[0].Key, fmt.Sprint(doc[0].Value)
	where, declared := name+" on "+coll, formatIndexes(ix[coll])
	qs, why := cmdQueries(name, doc)
	if why != "" {
		return fmt.Sprintf("%s: %s (declared: %s)", where, why, declared)
	}
	for _, q := range qs {
		if why, detail := checkQuery(q, ix[coll]); why != "" {
			return fmt.Sprintf("%s: %sfilter %s sort %s %s (declared: %s)%s",
				where, q.label, extJSON(q.filter), extJSON(q.sort), why, declared, detail)
		}
	}
	return ""
}

// cmdQueries lists the filters and sorts of a checked command; other commands
// have none. A non-empty second result makes the whole command unserved.
func cmdQueries(name string, cmd bson.D) ([]cmdQuery, string) {
	switch name {
	case "find":
		return []cmdQuery{{filter: docValue(cmd, "filter"), sort: docValue(cmd, "sort")}}, ""
	case "findAndModify":
		return []cmdQuery{{filter: docValue(cmd, "query"), sort: docValue(cmd, "sort")}}, ""
	case "count", "distinct":
		return []cmdQuery{{filter: docValue(cmd, "query")}}, ""
	case "update", "delete":
		// The driver folds the statements' document sequence back into an
		// array for the started event.
		stmts, _ := docValue(cmd, name+"s").(bson.A)
		qs := make([]cmdQuery, 0, len(stmts))
		for i, s := range stmts {
			stmt, _ := s.(bson.D)
			qs = append(qs, cmdQuery{label: fmt.Sprintf("statement %d, ", i), filter: docValue(stmt, "q")})
		}
		return qs, ""
	case "aggregate":
		pipeline, _ := docValue(cmd, "pipeline").(bson.A)
		first := pipelineStage(pipeline, 0)
		if len(first) != 1 || first[0].Key != "$match" {
			return nil, "pipeline does not start with $match, so it reads the whole collection"
		}
		q := cmdQuery{filter: first[0].Value}
		if next := pipelineStage(pipeline, 1); len(next) == 1 && next[0].Key == "$sort" {
			q.sort = next[0].Value
		}
		return []cmdQuery{q}, ""
	}
	return nil, ""
}

func pipelineStage(pipeline bson.A, i int) bson.D {
	if i < len(pipeline) {
		stage, _ := pipeline[i].(bson.D)
		return stage
	}
	return nil
}

// checkQuery returns why q is not served by indexes ("" when it is) and, for
// an ESR miss, the fields that decided it, to print after the declared ones.
func checkQuery(q cmdQuery, indexes []bson.D) (why, detail string) {
	filter, fok := q.filter.(bson.D)
	sort, sok := q.sort.(bson.D)
	if q.filter != nil && !fok || q.sort != nil && !sok {
		return "has a filter or sort that is not a document", ""
	}
	branches, why := branchesOf(filter)
	if why != "" {
		return why, ""
	}
	sortKeys := make([]string, len(sort))
	for i, e := range sort {
		sortKeys[i] = e.Key
	}
	for _, b := range branches {
		if why, detail := checkBranch(b, sortKeys, indexes); why != "" {
			return why, detail
		}
	}
	return "", ""
}

// branchesOf flattens $and and multiplies out $or, returning the filter as a
// disjunction of branches, each a conjunction of field conditions.
func branchesOf(filter bson.D) ([]bson.D, string) {
	out := []bson.D{{}}
	for _, e := range filter {
		if e.Key != "$and" && e.Key != "$or" {
			if strings.HasPrefix(e.Key, "$") {
				return nil, "uses " + e.Key
			}
			out = joinBranches(out, []bson.D{{e}})
			continue
		}
		subs, _ := e.Value.(bson.A)
		if len(subs) == 0 {
			return nil, "has an empty or malformed " + e.Key
		}
		var alts []bson.D // what this operator contributes: one conjunction for $and
		if e.Key == "$and" {
			alts = []bson.D{{}}
		}
		for _, s := range subs {
			sub, _ := s.(bson.D)
			branches, why := branchesOf(sub)
			if why != "" {
				return nil, why
			}
			if e.Key == "$and" {
				alts = joinBranches(alts, branches)
			} else {
				alts = append(alts, branches...)
			}
		}
		out = joinBranches(out, alts)
	}
	return out, ""
}

// joinBranches conjoins every branch of a with every branch of b.
func joinBranches(a, b []bson.D) []bson.D {
	out := make([]bson.D, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, slices.Concat(x, y))
		}
	}
	return out
}

// checkBranch applies the ESR rule to one conjunction of field conditions.
func checkBranch(branch bson.D, sortKeys []string, indexes []bson.D) (why, detail string) {
	if len(branch) == 0 {
		return "reads the whole collection", ""
	}
	eq, rng := map[string]bool{}, map[string]bool{}
	for _, c := range branch {
		if isEquality(c.Value) {
			eq[c.Key] = true
		} else {
			rng[c.Key] = true
		}
	}
	if id, _ := docValue(branch, "_id").(bson.D); eq["_id"] || len(id) == 1 && id[0].Key == "$in" {
		return "", ""
	}
	for f := range eq {
		delete(rng, f) // an equality already pins the field
	}
	sorts := slices.DeleteFunc(slices.Clone(sortKeys), func(f string) bool { return eq[f] })
	for _, key := range indexes {
		if indexServes(key, eq, sorts, rng) {
			return "", ""
		}
	}
	return "is served by no declared index", fmt.Sprintf("; equality %v, sort %v, range %v",
		slices.Sorted(maps.Keys(eq)), sorts, slices.Sorted(maps.Keys(rng)))
}

// indexServes reports whether key holds the equality fields, then the sort
// fields, then (anywhere after the equalities) the range fields.
func indexServes(key bson.D, eq map[string]bool, sorts []string, rng map[string]bool) bool {
	if len(key) < len(eq)+len(sorts) {
		return false
	}
	for _, k := range key[:len(eq)] {
		if !eq[k.Key] {
			return false // index keys are distinct, so len(eq) hits cover eq
		}
	}
	rest := key[len(eq):]
	for i, f := range sorts {
		if rest[i].Key != f {
			return false
		}
	}
	for f := range rng {
		if !slices.ContainsFunc(rest, func(k bson.E) bool { return k.Key == f }) {
			return false
		}
	}
	return true
}

func isEquality(v any) bool {
	switch v := v.(type) {
	case bson.Regex:
		return false
	case bson.D:
		if len(v) == 1 && v[0].Key == "$eq" {
			return true
		}
		return !slices.ContainsFunc(v, func(e bson.E) bool { return strings.HasPrefix(e.Key, "$") })
	}
	return true
}

// docValue returns the value of the first element of d named key, or nil.
func docValue(d bson.D, key string) any {
	for _, e := range d {
		if e.Key == key {
			return e.Value
		}
	}
	return nil
}

// extJSON renders a filter or sort as relaxed extended JSON ({} when absent).
func extJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, err := bson.MarshalExtJSON(v, false, false)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// formatIndexes renders key patterns compactly: {a:1,b:-1}, {c:1}.
func formatIndexes(indexes []bson.D) string {
	if len(indexes) == 0 {
		return "none"
	}
	parts := make([]string, len(indexes))
	for i, key := range indexes {
		fields := make([]string, len(key))
		for j, e := range key {
			fields[j] = fmt.Sprintf("%s:%v", e.Key, e.Value)
		}
		parts[i] = "{" + strings.Join(fields, ",") + "}"
	}
	return strings.Join(parts, ", ")
}
