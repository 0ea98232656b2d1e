package server

import (
	"net/http"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
)

// dropGRPCHeaders removes every header named grpc-… before the mux sees
// the request. grpc-gateway turns Grpc-Timeout into the call's deadline and
// reads other grpc- names as gRPC's own; only the gateway sets what the
// services receive (the request deadline, the request id, If-Match).
func dropGRPCHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for name := range r.Header {
			if len(name) >= 5 && strings.EqualFold(name[:5], "grpc-") {
				r.Header.Del(name)
			}
		}
		next.ServeHTTP(w, r)
	})
}

// usedHeaders are the request headers whose values the gateway uses or
// passes on, and so refuses when they are not text it can: gRPC metadata
// carries printable ASCII only, and grpc-gateway silently drops anything
// else, which for If-Match would turn a conditional update into an
// unconditional one.
var usedHeaders = []string{"If-Match", reqstate.IDHeader}

// refuseMalformedHeaders answers 400, naming the header, when a used header
// is not valid UTF-8 or, for one passed on as metadata, not printable
// ASCII. (An X-Request-Id that is text but not a sane id is replaced, not
// refused: see reqstate.WithID.)
func refuseMalformedHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, name := range usedHeaders {
			for _, v := range r.Header.Values(name) {
				problem := ""
				switch {
				case !utf8.ValidString(v):
					problem = "not valid UTF-8"
				case name == "If-Match" && !printableASCII(v):
					problem = "must be entity tags in printable ASCII"
				}
				if problem != "" {
					httperr.Write(w, r, fault.Invalid, "header "+name+": "+problem, fault.FieldViolation{Field: name, Description: problem})
					return
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 || c > 0x7e) && c != '\t' {
			return false
		}
	}
	return true
}

// refuseMalformedPathParams answers 400, naming the path variable, when a
// path segment decodes to bytes that are not UTF-8 (/api/workspace/%ff):
// proto strings must be UTF-8, and the call would otherwise fail to
// marshal and answer 500.
func refuseMalformedPathParams(next runtime.HandlerFunc) runtime.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request, params map[string]string) {
		for name, v := range params {
			if !utf8.ValidString(v) {
				field := pathParamName(name)
				httperr.Write(w, r, fault.Invalid, field+": not valid UTF-8", fault.FieldViolation{Field: field, Description: "not valid UTF-8"})
				return
			}
		}
		next(w, r, params)
	}
}

// pathParamName is a path variable as the document names it: the routing
// rules name variables by proto field (app_key), the document and every
// answer by the field's JSON name (appKey), which for these fields is
// protoc's default lowerCamelCase.
func pathParamName(name string) string {
	var b strings.Builder
	upper := false
	for _, c := range name {
		switch {
		case c == '_':
			upper = true
		case upper:
			b.WriteRune(unicode.ToUpper(c))
			upper = false
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
