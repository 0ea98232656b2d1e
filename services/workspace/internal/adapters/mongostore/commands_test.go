package mongostore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.mongodb.org/mongo-driver/v2/event"

	"github.com/liveproctor/workspaces/services/workspace/internal/adapters/mongostore"
)

// commandLog watches every command the package's tests send through the
// shared client: it keeps them per database (each test has its own), so a
// test can count the round trips of one operation, and it checks each
// query against the indexes the adapter declares (indexrules_test.go), so
// that TestMain fails the package when any query, the background work's
// included, would read a collection without an index.
type commandLog struct {
	declared declaredIndexes
	mu       sync.Mutex
	byDB     map[string][]sentCommand
	unserved []string
	checked  map[string]int // by command name
}

// sentCommand is a command as the store received it: its name and
// collection, as "update workspaces".
type sentCommand string

func newCommandLog() *commandLog {
	return &commandLog{declared: mongostore.DeclaredIndexes(), byDB: map[string][]sentCommand{}, checked: map[string]int{}}
}

// checkedCommands are the commands that read by a filter.
var checkedCommands = []string{"find", "count", "distinct", "aggregate", "update", "delete", "findAndModify"}

func (l *commandLog) monitor() *event.CommandMonitor {
	return &event.CommandMonitor{Started: func(_ context.Context, e *event.CommandStartedEvent) {
		collection := ""
		if el, err := e.Command.IndexErr(0); err == nil {
			collection, _ = el.Value().StringValueOK()
		}
		why := unserved(e.Command, l.declared)
		l.mu.Lock()
		defer l.mu.Unlock()
		l.byDB[e.DatabaseName] = append(l.byDB[e.DatabaseName], sentCommand(e.CommandName+" "+collection))
		if slices.Contains(checkedCommands, e.CommandName) {
			l.checked[e.CommandName]++
		}
		if why != "" {
			l.unserved = append(l.unserved, e.DatabaseName+": "+why)
		}
	}}
}

// mark is how many commands database db has received so far.
func (l *commandLog) mark(db string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.byDB[db])
}

// since returns the commands db received after mark m.
func (l *commandLog) since(db string, m int) []sentCommand {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byDB[db][m:])
}

// verdict is what TestMain reports once every test has run: the queries no
// declared index serves, and whether the tests sent each kind of query the
// adapter uses at all (a check that saw nothing proves nothing).
func (l *commandLog) verdict(whole bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	var problems []string
	for _, name := range []string{"find", "update", "delete"} {
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

// sequence writes commands as one line, for messages.
func sequence(cmds []sentCommand) string {
	parts := make([]string, len(cmds))
	for i, c := range cmds {
		parts[i] = string(c)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}
