package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// scenarios are what a run measures, in order, by the names -only takes.
var scenarios = []struct {
	name  string // for -only
	title string
	run   func(context.Context, config, *env, *report) error
}{
	{"login", "login: reference, floor and stack, alternating", measureLogin},
	{"makerun", "login: the floor and a stack started as make run starts it, alternating", measureMakeRun},
	{"hop", "GetWorkspace: REST through the gateway and direct gRPC", measureHop},
	{"portal", "the administrator's portal: a page against the REST route it shows", measurePortal},
	{"introspect", "token introspection over gRPC", measureIntrospection},
	{"replicas", "login: spread over two auth replicas, and a third added under load", measureReplicas},
	// The store-scale scenario comes first: it starts from few workspaces,
	// and the list's sizes below what it leaves are skipped.
	{"store", "the store at scale: list, update and create as the store grows", measureStoreScale},
	{"list", "filtered list", measureLists},
	{"ltiflood", "LTI 1.3 login flood beside SDK logins", measureLTIFlood},
	{"webhooks", "webhook delivery: its delay, and what it costs the changes", measureWebhooks},
}

func scenarioNames() []string {
	names := make([]string, len(scenarios))
	for i, s := range scenarios {
		names[i] = s.name
	}
	return names
}

// scenarioSet is the value of -only: a comma-separated list of scenario
// names. Empty means every scenario.
type scenarioSet map[string]bool

func (s *scenarioSet) String() string {
	var names []string
	for _, n := range scenarioNames() {
		if (*s)[n] {
			names = append(names, n)
		}
	}
	return strings.Join(names, ",")
}

func (s *scenarioSet) Set(v string) error {
	*s = scenarioSet{}
	for _, n := range strings.Split(v, ",") {
		n = strings.TrimSpace(n)
		if !slices.Contains(scenarioNames(), n) {
			return fmt.Errorf("unknown scenario %q (known: %s)", n, strings.Join(scenarioNames(), ", "))
		}
		(*s)[n] = true
	}
	return nil
}

// includes reports whether the scenario is to run.
func (s scenarioSet) includes(name string) bool { return len(s) == 0 || s[name] }

// measureAll runs every selected scenario in turn. A scenario that fails
// is named in the report and the others still run, so one scenario's
// trouble (the embedded store timing out while seeding, say) does not take
// the other figures with it; the run still fails in the end.
func measureAll(ctx context.Context, cfg config, e *env) (*report, error) {
	rep := &report{Date: time.Now(), Machine: describeMachine(), Config: cfg, LoadStart: loadAverage()}
	for _, s := range scenarios {
		if !cfg.Only.includes(s.name) {
			continue
		}
		progress("%s", s.title)
		if err := s.run(ctx, cfg, e, rep); err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			progress("  %s failed: %v", s.name, err)
			rep.Failed = append(rep.Failed, fmt.Sprintf("%s: %v", s.name, err))
		}
	}
	rep.LoadEnd = loadAverage()
	var err error
	if rep.MemoryEnd, err = readAll(e); err != nil {
		return nil, err
	}
	return rep, nil
}

// postJSON posts body to the gateway with the root pair and decodes a 2xx
// answer into v.
func (e *env) postJSON(ctx context.Context, path, body string, v any) error {
	return postJSONAt(ctx, e.http, e.stack.GatewayURL, e.basic, path, body, v)
}

// postJSONAt posts body to the gateway at base with header and decodes a
// 2xx answer into v.
func postJSONAt(ctx context.Context, client *http.Client, base string, header http.Header, path, body string, v any) error {
	req, err := loadgen.HTTPRequest{Method: http.MethodPost, URL: base + path, Header: header}.
		NewRequest(ctx, []byte(body))
	if err != nil {
		return err
	}
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return &loadgen.StatusError{Status: resp.StatusCode}
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		return fmt.Errorf("decode the answer of %s: %w", path, err)
	}
	return nil
}
