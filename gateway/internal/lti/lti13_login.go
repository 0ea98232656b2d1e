package lti

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"unicode/utf8"

	"github.com/grpc-ecosystem/grpc-gateway/v2/runtime"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/gateway/internal/reqstate"
	"github.com/liveproctor/workspaces/pkg/fault"
	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// LTI13LoginPath is the tool's OIDC login initiation URL, which platforms
// are given with the launch URL: they send the browser to it, by GET or
// by a form POST, before every LTI 1.3 launch.
const LTI13LoginPath = "/lti/v1p3/login"

// LTI13LoginStarter is the call a login initiation makes.
type LTI13LoginStarter interface {
	StartLti13Login(ctx context.Context, in *workspacev1.StartLti13LoginRequest, opts ...grpc.CallOption) (*workspacev1.Lti13LoginRedirect, error)
}

// LTI13Login answers a platform's OIDC login initiation on LTI13LoginPath,
// GET (the query) or POST (the form body, and the query): the workspace
// service checks it and stores a nonce under a new state, and the browser
// goes on to the platform's authorization endpoint, keeping the state for
// the launch to present (lti13_storage.go): a login with
// lti_storage_target gets a page that puts it in the platform's storage;
// a login in a frame, the state cookie (StateCookie) and a page that
// checks the frame keeps cookies, or offers a new window;
// any other, the state cookie and a redirect (302). A refused login gets
// a short page saying why. Nothing is cached.
func LTI13Login(logins LTI13LoginStarter, md Metadata, maxBodyBytes int64, logger *slog.Logger) runtime.HandlerFunc {
	maxParams := max(1, int(maxBodyBytes/bytesPerParameter))
	return func(w http.ResponseWriter, r *http.Request, _ map[string]string) {
		req, params, ok := readLTI13Login(w, r, maxParams, maxBodyBytes)
		if !ok {
			return
		}
		ctx := metadata.NewOutgoingContext(r.Context(), md(r.Context(), r))
		redirect, err := logins.StartLti13Login(ctx, req)
		if err != nil {
			refuseError(w, r, err, logger)
			return
		}
		switch {
		case redirect.GetLtiStorageTarget() != "":
			writeStoragePage(w, storageView{
				Mode: "login", Redirect: redirect.GetRedirectUrl(),
				Fallback: loginWithoutStorage(params) + "&" + paramStorageFailed + "=1",
				Target:   redirect.GetLtiStorageTarget(), Origin: redirect.GetPlatformOrigin(),
				State: redirect.GetState(), Nonce: redirect.GetNonce(),
			})
		case framed(r):
			http.SetCookie(w, StateCookie(redirect.GetState(), int(redirect.GetStateTtlSeconds())))
			http.SetCookie(w, probeCookie())
			writeStoragePage(w, storageView{
				Mode: "probe", Redirect: redirect.GetRedirectUrl(), Fallback: loginWithoutStorage(params),
				ProbeCookie: probeCookieName, Capabilities: !hasParam(params, paramStorageFailed),
			})
		default:
			header := pageHeaders(w)
			http.SetCookie(w, StateCookie(redirect.GetState(), int(redirect.GetStateTtlSeconds())))
			header.Set("Location", redirect.GetRedirectUrl())
			w.WriteHeader(http.StatusFound)
		}
	}
}

// readLTI13Login returns the login initiation's parameters, for the
// workspace service and as sent, or answers why it cannot read them and
// reports false.
func readLTI13Login(w http.ResponseWriter, r *http.Request, maxParams int, maxBodyBytes int64) (*workspacev1.StartLti13LoginRequest, []*authv1.LtiParameter, bool) {
	if r.Method == http.MethodPost && !isForm(r.Header.Get("Content-Type")) {
		refuse(w, r, httperr.New(fault.UnsupportedMediaType,
			"A login initiation posted must be a form (Content-Type: application/x-www-form-urlencoded), as LTI 1.3 platforms send it.", "", 0))
		return nil, nil, false
	}
	params, err := formPairs(r.URL.RawQuery, nil, maxParams)
	if err == nil && r.Method == http.MethodPost {
		var body []byte
		if body, err = io.ReadAll(r.Body); err == nil {
			params, err = formPairs(string(body), params, maxParams)
		}
	}
	// A body over the limit or past the deadline is answered as on every
	// route (JSON): the gateway may answer so before this runs.
	switch st := reqstate.From(r.Context()); {
	case err == nil:
	case st.BodyTooLarge:
		httperr.WriteTooLarge(w, r, maxBodyBytes)
		return nil, nil, false
	case st.BodyTimedOut:
		httperr.Write(w, r, fault.RequestTimeout, httperr.MsgBodyTimeout)
		return nil, nil, false
	default:
		refuse(w, r, httperr.New(fault.Invalid, "The login initiation's parameters are malformed: "+err.Error()+".", "", 0))
		return nil, nil, false
	}
	req, why := lti13LoginRequest(params)
	if why != "" {
		refuse(w, r, httperr.New(fault.Invalid, why, "", 0))
		return nil, nil, false
	}
	return req, params, true
}

// lti13LoginRequest picks the login initiation's parameters out of params
// (others, such as Canvas's canvas_region, are ignored, but kept in the
// login a new window opens), or says why it
// cannot: a parameter of the login sent twice with different values is
// ambiguous, and text that is not UTF-8 cannot travel. Whether they are
// present and sound is the workspace service's to say.
func lti13LoginRequest(params []*authv1.LtiParameter) (*workspacev1.StartLti13LoginRequest, string) {
	req := &workspacev1.StartLti13LoginRequest{}
	fields := map[string]*string{
		"iss": &req.Issuer, "login_hint": &req.LoginHint, "target_link_uri": &req.TargetLinkUri,
		"lti_message_hint": &req.LtiMessageHint, "client_id": &req.ClientId, "lti_deployment_id": &req.LtiDeploymentId,
		paramStorageTarget: &req.LtiStorageTarget,
	}
	seen := map[string]bool{}
	for _, p := range params {
		field, ok := fields[p.GetName()]
		switch {
		case !ok:
		case !utf8.ValidString(p.GetValue()):
			return nil, "The login initiation's " + p.GetName() + " is not valid UTF-8."
		case seen[p.GetName()] && *field != p.GetValue():
			return nil, "The login initiation's " + p.GetName() + " is given more than once, with different values."
		default:
			*field, seen[p.GetName()] = p.GetValue(), true
		}
	}
	return req, ""
}
