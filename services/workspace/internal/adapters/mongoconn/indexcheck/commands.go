package indexcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/event"
)

// Log watches every command a package's tests send through their client:
// it keeps them per database (each test has its own), so a test can count
// the round trips of one operation, and it checks each query against the
// indexes the adapter declares, so that the package's TestMain fails when
// any query, the background work's included, would read a collection
// without an index.
type Log struct {
	declared Indexes
	expected []string
	mu       sync.Mutex
	byDB     map[string][]Command
	unserved []string
	checked  map[string]int // by command name
}

// Command is a command as the store received it: its name and collection,
// as "update workspaces".
type Command string

// NewLog returns a log checking queries against declared; expected are
// the commands with a filter (checkedCommands) that the adapter sends, of
// which a whole run of its tests must have seen at least one each.
func NewLog(declared Indexes, expected ...string) *Log {
	return &Log{declared: declared, expected: expected, byDB: map[string][]Command{}, checked: map[string]int{}}
}

// checkedCommands are the commands that read by a filter.
var checkedCommands = []string{"find", "count", "distinct", "aggregate", "update", "delete", "findAndModify"}

// Monitor is the client's command monitor.
func (l *Log) Monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		collection := ""
		if el, err := e.Command.IndexErr(0); err == nil {
			collection, _ = el.Value().StringValueOK()
		}
		why := Unserved(e.Command, l.declared)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.byDB[e.DatabaseName] = append(l.byDB[e.DatabaseName], Command(e.CommandName+" "+collection))
		if slices.Contains(checkedCommands, e.CommandName) {
			l.checked[e.CommandName]++
		}
		if why != "" {
			l.unserved = append(l.unserved, e.DatabaseName+": "+why)
		}
	}}
}

// Mark is how many commands database db has received so far.
func (l *Log) Mark(db string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byDB[db])
}

// Since returns the commands db received after mark m.
func (l *Log) Since(db string, m int) []Command {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byDB[db][m:])
}

// Verdict is what TestMain reports once every test has run: the queries no
// declared index serves, and, when the whole package ran, whether the
// tests sent each expected kind of query at all (a check that saw nothing
// proves nothing).
func (l *Log) Verdict(whole bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var problems []string
	for _, name := range l.expected {
		if whole && l.checked[name] == 0 {
			problems = append(problems, fmt.Sprintf("no %s command was seen: the index check did not run", name))
		}
	}
	problems = append(problems, l.unserved...)
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("every query has an index: %d problem(s):\n  %s", len(problems), strings.Join(problems, "\n  "))
}

// Sequence writes commands as one line, for messages.
func Sequence(cmds []Command) string {
	parts := make([]string, len(cmds))
	for i, c := range cmds {
		parts[i] = string(c)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
