package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fuzzDir is the request generator's folder (json-schema-faker, pinned;
// `make test` installs it).
var fuzzDir = filepath.Join("..", "..", "..", "tools", "openapi-fuzz")

// fuzzRequest is one request the generator drew from the document.
type fuzzRequest struct {
	Method    string              `json:"method"`
	Path      string              `json:"path"`
	Operation string              `json:"operation"`
	Mutated   bool                `json:"mutated"`
	Query     map[string][]string `json:"query"`
	Body      json.RawMessage     `json:"body"`
}

// Requests drawn from the served document's schemas by an independent
// generator (json-schema-faker), half of them valid and half with one
// mutation each, get answers the document declares: a status it lists for
// the operation and a body of its schema (the client checks every exchange,
// see servedDocument.check), never a 5xx, and no refusal of a request the
// document takes. FUZZ_SEED picks another draw; FUZZ_PER_OPERATION more.
// unknownLaunchID has a launch id's shape (43 base64url characters) and
// names no launch: the routes under a launch answer it 404, as the
// document says.
const unknownLaunchID = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"

func TestRequestsDrawnFromTheDocument(t *testing.T) {
	if _, err := os.Stat(filepath.Join(fuzzDir, "node_modules", "json-schema-faker")); err != nil {
		t.Fatalf("the request generator is not installed: run \"make test-deps\" (%v)", err)
	}
	seed := envInt(t, "FUZZ_SEED", 20261125)
	perOperation := envInt(t, "FUZZ_PER_OPERATION", 30)
	cmd := exec.Command("node", "generate.mjs", filepath.Join("..", "..", "pkg", "gen", "openapi", "openapi.json"),
		strconv.Itoa(seed), strconv.Itoa(perOperation))
	cmd.Dir = fuzzDir
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("generate requests: %v", err)
	}
	var requests []fuzzRequest
	if err := json.Unmarshal(out, &requests); err != nil {
		t.Fatal(err)
	}
	if len(requests) < 100 {
		t.Fatalf("the generator drew only %d requests", len(requests))
	}

	root := asRoot(t)
	w := root.create(unique(t, "fuzz"), nil)
	reg := root.register(w.WorkspaceID, canvasRegistration(clientID(t, "fuzz"), "1"))
	hook := root.addWebhook(w.WorkspaceID, map[string]any{"url": "https://hooks.example.com/fuzz"})
	link := root.newPortalLink(w.WorkspaceID, nil)
	params := map[string]string{"id": w.WorkspaceID, "appKey": w.AppKeys.Server.ConsumerKey, "registrationId": reg.ID, "deploymentId": "1",
		"launchId":  unknownLaunchID,
		"webhookId": hook.ID,
		"linkId":    link.ID}
	statuses := map[int]int{}
	for i, r := range requests {
		path := r.Path
		for name, value := range params {
			path = strings.ReplaceAll(path, "{"+name+"}", url.PathEscape(value))
		}
		if len(r.Query) > 0 {
			path += "?" + url.Values(r.Query).Encode()
		}
		name := fmt.Sprintf("%d %s %s", i, r.Operation, map[bool]string{true: "mutated", false: "valid"}[r.Mutated])
		t.Run(name, func(t *testing.T) {
			var body any
			if len(r.Body) > 0 {
				body = []byte(r.Body)
			}
			resp := root.withT(t).do(r.Method, path, body)
			statuses[resp.status]++
			if resp.status >= 500 {
				t.Fatalf("%s %s: %d %s", r.Method, path, resp.status, resp.body)
			}
		})
	}
	t.Logf("seed %d, %d requests, statuses %v", seed, len(requests), statuses)
	if statuses[http.StatusOK] == 0 || statuses[http.StatusBadRequest] == 0 {
		t.Fatalf("the draw reached no success or no refusal: %v", statuses)
	}
}

func envInt(t *testing.T, name string, fallback int) int {
	v := os.Getenv(name)
	if v == "" {
		return fallback
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a positive number", name, v)
	}
	return n
}
