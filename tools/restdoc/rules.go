package restdoc

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/protojson"
	"sigs.k8s.io/yaml"
)

// binding is one HTTP method and path of an RPC.
type binding struct {
	selector     string // the RPC's full name
	method       string // GET, POST, …
	template     string // the path template, with proto field paths
	body         string // "", "*" or a field name
	responseBody string // "" or a field name
	additional   bool   // an additional_bindings entry
}

// loadBindings reads the HTTP rules from a google.api.Service YAML, the same
// file protoc-gen-grpc-gateway reads through grpc_api_configuration.
func loadBindings(path string) ([]binding, error) {
	var service struct {
		HTTP json.RawMessage `json:"http"`
	}
	if err := readYAML(path, &service); err != nil {
		return nil, err
	}
	var rules annotations.Http
	if err := protojson.Unmarshal(service.HTTP, &rules); err != nil {
		return nil, fmt.Errorf("%s: http: %w", path, err)
	}
	var out []binding
	for _, r := range rules.GetRules() {
		b, err := bindingOf(r.GetSelector(), r, false)
		if err != nil {
			return nil, err
		}
		out = append(out, b)
		for _, extra := range r.GetAdditionalBindings() {
			b, err := bindingOf(r.GetSelector(), extra, true)
			if err != nil {
				return nil, err
			}
			out = append(out, b)
		}
	}
	return out, nil
}

// readYAML decodes the YAML file at path into v as if it were JSON.
func readYAML(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	asJSON, err := yaml.YAMLToJSON(data)
	if err == nil {
		err = json.Unmarshal(asJSON, v)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func bindingOf(selector string, r *annotations.HttpRule, additional bool) (binding, error) {
	b := binding{selector: selector, body: r.GetBody(), responseBody: r.GetResponseBody(), additional: additional}
	switch p := r.GetPattern().(type) {
	case *annotations.HttpRule_Get:
		b.method, b.template = "GET", p.Get
	case *annotations.HttpRule_Post:
		b.method, b.template = "POST", p.Post
	case *annotations.HttpRule_Put:
		b.method, b.template = "PUT", p.Put
	case *annotations.HttpRule_Delete:
		b.method, b.template = "DELETE", p.Delete
	case *annotations.HttpRule_Patch:
		b.method, b.template = "PATCH", p.Patch
	default:
		return binding{}, fmt.Errorf("%s: only get, post, put, delete and patch rules are supported", selector)
	}
	return b, nil
}

// pathVariables returns the field paths of a template's variables, in order:
// "/api/workspace/{id}:undelete" has "id". A variable with its own pattern
// ({name=shelves/*}) is not supported: the document could not describe it.
func pathVariables(template string) ([]string, error) {
	var vars []string
	rest := template
	for {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			return vars, nil
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, fmt.Errorf("path %s: unclosed variable", template)
		}
		v := rest[open+1 : open+end]
		if strings.Contains(v, "=") {
			return nil, fmt.Errorf("path %s: variables with their own pattern are not supported", template)
		}
		vars = append(vars, v)
		rest = rest[open+end+1:]
	}
}
