package docvalidation

import (
	"bytes"
	"context"
	"net/http"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// A login's route, headers and body held to the document by kin-openapi's
// openapi3filter, as a gateway middleware would (the request's making
// included: BenchmarkNewRequest is that part alone).
func BenchmarkKinOpenAPILogin(b *testing.B) {
	doc, err := openapi3.NewLoader().LoadFromData(document(b))
	if err != nil {
		b.Fatal(err)
	}
	doc.Servers = openapi3.Servers{{URL: "http://127.0.0.1:8080"}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		b.Fatal(err)
	}
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}
	b.ReportAllocs()
	for b.Loop() {
		req := newLogin()
		route, params, err := router.FindRoute(req)
		if err != nil {
			b.Fatal(err)
		}
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: opts}
		if err := openapi3filter.ValidateRequest(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkNewRequest(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		newLogin()
	}
}

func newLogin() *http.Request {
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:8080/api/login/sdk", bytes.NewReader(loginBody))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Basic YTpi")
	return req
}
