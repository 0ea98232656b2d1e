// Package archmap holds docs/architecture.md's "Where each rule lives" table
// to the code: every file or folder a row names exists, and every Go name it
// gives is declared in the files or folders of its row. A map of where rules
// live is worth reading only while it is true; the test beside this package
// runs the check on the repository's table, so `make test` fails when code
// moves and the row does not follow.
//
// How a row is read (the line under the table says the same):
//
//   - Only backticked text counts. The rule column is prose; the file column
//     and the name column give places, the name column gives names.
//   - A place is backticked text without spaces that holds a `/` or ends in a
//     file extension (`.go`, `.proto`, …); `*` in it is a glob, which must
//     match something.
//   - A place that starts with a top-level folder of the repository
//     (`services/`, `pkg/`, `gateway/`, …) is a full path. Any other place
//     with a `/` is relative to the service of the row's first full path
//     under `services/<svc>/`: `app/…`, `domain/…`, `ports/…`, `service/…`
//     and `adapters/…` start at `services/<svc>/internal/`, `internal/…` at
//     `services/<svc>/`, and anything else names an adapter
//     (`mongostore/list_mongo.go` is `internal/adapters/mongostore/…`). A
//     bare file name (`scripts.go`) sits in the folder of the place before it
//     in the row.
//   - A Go name is backticked text that is an identifier or two or three
//     joined by dots (`gcra`, `App.Authenticate`, `fault.Kind`); it starts
//     with a letter and holds no `_` (Go's names are camel case), is not all
//     capitals (environment variables such as `CREDENTIAL_CACHE_TTL`, Redis
//     commands such as `GETDEL`), and has no part that is a version (`rest.v1`
//     is a proto package). Everything else (`lti13:pending`,
//     `updateOne({_id, revision})`, `If-Match`) is prose.
package archmap

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Row is one row of the table, its places resolved to paths from the
// repository's root.
type Row struct {
	Rule   string
	Places []string
	Names  []string
	// Unresolved are the places the row writes that the rules above cannot
	// turn into a path, with why.
	Unresolved []string
}

// topLevel are the repository's top-level folders a full path starts with.
var topLevel = map[string]bool{
	"services": true, "pkg": true, "gateway": true, "proto": true,
	"deploy": true, "tools": true, "docs": true, "bench": true,
}

// sourceExtensions mark a bare file name (`scripts.go`), which would
// otherwise read as a Go name.
var sourceExtensions = map[string]bool{
	".go": true, ".proto": true, ".md": true, ".yaml": true, ".lua": true, ".mjs": true,
}

// internalRooms are the folders of a service's internal/ a relative path
// may start with; any other first element is an adapter's folder.
var internalRooms = map[string]bool{
	"app": true, "domain": true, "ports": true, "service": true, "adapters": true,
}

var (
	identifier = `[A-Za-z][A-Za-z0-9]*`
	goName     = regexp.MustCompile(`^` + identifier + `(\.` + identifier + `){0,2}$`)
	version    = regexp.MustCompile(`^v[0-9]+$`)
	backticked = regexp.MustCompile("`([^`]*)`")
)

// ReadTable returns the rows of the table that follows the heading (a
// line such as "## Where each rule lives") in a Markdown document.
func ReadTable(markdown []byte, heading string) ([]Row, error) {
	lines := bufio.NewScanner(bytes.NewReader(markdown))
	lines.Buffer(nil, 1<<20)
	found, inTable, header := false, false, 0
	var rows []Row
	for lines.Scan() {
		line := strings.TrimSpace(lines.Text())
		switch {
		case !found:
			found = line == heading
		case strings.HasPrefix(line, "|"):
			inTable = true
			header++
			if header <= 2 { // the column names and the separator
				continue
			}
			row, err := readRow(line)
			if err != nil {
				return nil, err
			}
			rows = append(rows, row)
		case inTable:
			return rows, nil
		}
	}
	if err := lines.Err(); err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("no table under %q", heading)
	}
	return rows, nil
}

func readRow(line string) (Row, error) {
	cells := splitCells(line)
	if len(cells) != 3 {
		return Row{}, fmt.Errorf("row %q: %d cells, want rule, file, names", line, len(cells))
	}
	row := Row{Rule: cells[0]}
	service := ""
	previous := ""
	for i, cell := range cells[1:] {
		for _, m := range backticked.FindAllStringSubmatch(cell, -1) {
			token := m[1]
			switch {
			case isPlace(token):
				place, err := resolve(token, service, previous)
				if err != nil {
					row.Unresolved = append(row.Unresolved, err.Error())
					continue
				}
				if service == "" && strings.HasPrefix(place, "services/") {
					service = strings.Join(strings.SplitN(place, "/", 3)[:2], "/")
				}
				previous = place
				row.Places = append(row.Places, place)
			case i == 1 && isGoName(token): // the name column

				row.Names = append(row.Names, token)
			}
		}
	}
	return row, nil
}

// splitCells splits a table line on the bars outside backticks.
func splitCells(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(line, "|"), "|")
	var cells []string
	var cell strings.Builder
	quoted := false
	for _, r := range line {
		switch {
		case r == '`':
			quoted = !quoted
		case r == '|' && !quoted:
			cells = append(cells, strings.TrimSpace(cell.String()))
			cell.Reset()
			continue
		}
		cell.WriteRune(r)
	}
	return append(cells, strings.TrimSpace(cell.String()))
}

func isPlace(token string) bool {
	if token == "" || strings.ContainsAny(token, " ()") {
		return false
	}
	return strings.Contains(token, "/") || sourceExtensions[path.Ext(token)]
}

func isGoName(token string) bool {
	if !goName.MatchString(token) || strings.ToUpper(token) == token {
		return false
	}
	for _, part := range strings.Split(token, ".") {
		if version.MatchString(part) {
			return false
		}
	}
	return true
}

// resolve turns a place as the row writes it into a path from the
// repository's root (see the package comment).
func resolve(place, service, previous string) (string, error) {
	first, _, nested := strings.Cut(place, "/")
	switch {
	case !nested:
		if previous == "" {
			return "", fmt.Errorf("%s: a bare file name with no place before it", place)
		}
		return path.Join(path.Dir(previous), place), nil
	case topLevel[first]:
		return path.Clean(place), nil
	case service == "":
		return "", fmt.Errorf("%s: a relative path with no services/<svc>/ path before it in the row", place)
	case first == "internal":
		return path.Join(service, place), nil
	case internalRooms[first]:
		return path.Join(service, "internal", place), nil
	default:
		return path.Join(service, "internal/adapters", place), nil
	}
}
