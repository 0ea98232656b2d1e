package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/liveproctor/workspaces/deploy/local/loadgen"
)

// measureAll runs every scenario in turn.
func measureAll(ctx context.Context, cfg config, e *env) (*report, error) {
	rep := &report{Date: time.Now(), Machine: describeMachine(), Config: cfg}
	steps := []struct {
		name string
		run  func(context.Context, config, *env, *report) error
	}{
		{"login: reference and stack, alternating", measureLogin},
		{"GetWorkspace: REST through the gateway and direct gRPC", measureHop},
		{"token introspection over gRPC", measureIntrospection},
		{"filtered list", measureLists},
	}
	for _, s := range steps {
		progress("%s", s.name)
		if err := s.run(ctx, cfg, e, rep); err != nil {
			return nil, err
		}
	}
	var err error
	if rep.MemoryEnd, err = readAll(e); err != nil {
		return nil, err
	}
	return rep, nil
}

// postJSON posts body to the gateway with the root pair and decodes a 2xx
// answer into v.
func (e *env) postJSON(ctx context.Context, path, body string, v any) error {
	req, err := loadgen.HTTPRequest{Method: http.MethodPost, URL: e.stack.GatewayURL + path, Header: e.basic}.
		NewRequest(ctx, []byte(body))
	if err != nil {
		return err
	}
	resp, err := e.http.Do(req)
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
