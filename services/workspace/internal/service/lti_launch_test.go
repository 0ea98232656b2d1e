package service_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	dghubble "github.com/dghubble/oauth1"
	"github.com/redis/go-redis/v9"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
	"github.com/liveproctor/workspaces/pkg/oauth1"
	"github.com/liveproctor/workspaces/pkg/ratelimit"
	"github.com/liveproctor/workspaces/pkg/testenv"
)

// The launch URL an LMS posts to: config's LTIBaseURL + /lti/v1/launch.
const ltiLaunchURL = "https://lti.example.test/lti/v1/launch"

// captureTransport keeps the request a client sends instead of sending it.
type captureTransport struct{ req *http.Request }

func (c *captureTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.req = r
	return &http.Response{StatusCode: http.StatusNoContent, Body: http.NoBody, Request: r}, nil
}

// lmsLaunch signs a launch form with an independent OAuth 1.0a signer,
// github.com/dghubble/oauth1, as an LMS does, and returns it as the gateway
// passes it on: the form body's parameters, then the protocol parameters
// (the library puts them in the Authorization header; LMSes put them in the
// body, which signs the same).
func lmsLaunch(t *testing.T, form url.Values, key, secret string, sha256 bool) *workspacev1.VerifyLtiLaunchRequest {
	t.Helper()
	cfg := dghubble.NewConfig(key, secret)
	if sha256 {
		cfg.Signer = &dghubble.HMAC256Signer{ConsumerSecret: secret}
	}
	tr := &captureTransport{}
	ctx := context.WithValue(context.Background(), dghubble.HTTPClient, &http.Client{Transport: tr})
	resp, err := cfg.Client(ctx, dghubble.NewToken("", "")).Post(ltiLaunchURL, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	body, err := io.ReadAll(tr.req.Body)
	if err != nil {
		t.Fatal(err)
	}
	params, err := oauth1.ParseForm(string(body), 0)
	if err != nil {
		t.Fatal(err)
	}
	header, _ := strings.CutPrefix(tr.req.Header.Get("Authorization"), "OAuth ")
	for pair := range strings.SplitSeq(header, ", ") {
		name, quoted, _ := strings.Cut(pair, "=")
		value, err := url.PathUnescape(strings.Trim(quoted, `"`))
		if err != nil {
			t.Fatal(err)
		}
		params = append(params, oauth1.Param{Name: name, Value: value})
	}
	return toRequest(params)
}

// ownLaunch signs a launch with our own signer, for what dghubble/oauth1
// cannot set (the timestamp).
func ownLaunch(t *testing.T, form url.Values, key, secret string, at time.Time) *workspacev1.VerifyLtiLaunchRequest {
	t.Helper()
	params := []oauth1.Param{
		{Name: "oauth_consumer_key", Value: key}, {Name: "oauth_signature_method", Value: oauth1.HMACSHA1},
		{Name: "oauth_timestamp", Value: strconv.FormatInt(at.Unix(), 10)}, {Name: "oauth_nonce", Value: strconv.FormatInt(at.UnixNano(), 36)},
		{Name: "oauth_version", Value: "1.0"},
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range form {
			_ = yield(k)
		}
	}) {
		params = append(params, oauth1.Param{Name: name, Value: form.Get(name)})
	}
	base, err := oauth1.BaseString("POST", ltiLaunchURL, params)
	if err != nil {
		t.Fatal(err)
	}
	sig, err := oauth1.Sign(oauth1.HMACSHA1, base, secret, "")
	if err != nil {
		t.Fatal(err)
	}
	return toRequest(append(params, oauth1.Param{Name: "oauth_signature", Value: sig}))
}

func toRequest(params []oauth1.Param) *workspacev1.VerifyLtiLaunchRequest {
	req := &workspacev1.VerifyLtiLaunchRequest{Method: "POST"}
	for _, p := range params {
		req.Parameters = append(req.Parameters, &workspacev1.LtiParameter{Name: p.Name, Value: p.Value})
	}
	return req
}

func launchForm(edit func(url.Values)) url.Values {
	v := url.Values{}
	v.Set("lti_message_type", "basic-lti-launch-request")
	v.Set("lti_version", "LTI-1p0")
	v.Set("resource_link_id", "course-7 link+1")
	v.Set("user_id", "292832126")
	v.Set("lis_person_contact_email_primary", "ada@school.edu")
	v.Set("custom_exam_config_id", "0f8fad5b-d9cb-469f-a165-70867728950e")
	v.Set("launch_presentation_return_url", "https://lms.example/return?a=1&b=2")
	if edit != nil {
		edit(v)
	}
	return v
}

// redisOptions are the options of a client of r, failing fast as the
// service's defaults do.
func redisOptions(r *testenv.Server) redis.UniversalOptions {
	return redis.UniversalOptions{Addrs: []string{r.Addr()}, MaxRetries: -1,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond}
}

func startRedis(t *testing.T) *testenv.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := testenv.StartRedis(ctx, testenv.RedisOptions{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Stop() })
	return r
}

func wantLaunchRefused(t *testing.T, err error, code codes.Code, says string) {
	t.Helper()
	wantCode(t, err, code)
	if msg := status.Convert(err).Message(); !strings.Contains(msg, says) {
		t.Fatalf("message %q, want it to say %q", msg, says)
	}
}

// VerifyLtiLaunch against the real stores: launches signed by an
// independent signer are accepted, and each way a launch can be wrong is
// refused with its code and a reason a teacher can act on.
func TestVerifyLTILaunch(t *testing.T) {
	f := startStore(t)
	rs := startRedis(t)
	cfg := config(t, f.URI())
	cfg.Redis = redisOptions(rs)
	cfg.Limits.Failures = ratelimit.FailureLimits{PerKey: 3, PerAddress: 100, Window: time.Minute}
	_, client, _ := startService(t, cfg, io.Discard)
	root := as(rootKey, rootSecret)
	create := func(id string) *workspacev1.CreateWorkspaceResponse {
		t.Helper()
		res, err := client.CreateWorkspace(root, &workspacev1.CreateWorkspaceRequest{Id: id, Name: id, Type: "DISTRICT"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	school := create("school")
	lti, server := school.GetAppKeys().GetLti(), school.GetAppKeys().GetServer()
	key, secret := lti.GetConsumerKey(), lti.GetSharedSecret()

	// Accepted: HMAC-SHA1 with the user's e-mail.
	req := lmsLaunch(t, launchForm(nil), key, secret, false)
	got, err := client.VerifyLtiLaunch(root, req)
	if err != nil {
		t.Fatal(err)
	}
	if got.GetWorkspaceId() != "school" || got.GetConsumerKey() != key || got.GetEmail() != "ada@school.edu" || got.GetEmailDerived() ||
		got.GetUserId() != "292832126" || got.GetResourceLinkId() != "course-7 link+1" ||
		got.GetLaunchPresentationReturnUrl() != "https://lms.example/return?a=1&b=2" ||
		len(got.GetCustomParameters()) != 1 || got.GetCustomParameters()[0].GetValue() != "0f8fad5b-d9cb-469f-a165-70867728950e" {
		t.Fatalf("launch = %v", got)
	}
	// Replayed: the same launch again.
	_, err = client.VerifyLtiLaunch(root, req)
	wantLaunchRefused(t, err, codes.Unauthenticated, "already used")

	// Accepted: HMAC-SHA256 without an e-mail: the derived identity.
	got, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(func(v url.Values) { v.Del("lis_person_contact_email_primary") }), key, secret, true))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(key + ":292832126"))
	if want := hex.EncodeToString(sum[:])[:32] + "@lti.invalid"; got.GetEmail() != want || !got.GetEmailDerived() {
		t.Fatalf("derived user %q (derived %v), want %q", got.GetEmail(), got.GetEmailDerived(), want)
	}

	tampered := lmsLaunch(t, launchForm(nil), key, secret, false)
	for _, p := range tampered.Parameters {
		if p.Name == "custom_exam_config_id" {
			p.Value = "11111111-d9cb-469f-a165-70867728950e"
		}
	}
	_, err = client.VerifyLtiLaunch(root, tampered)
	wantLaunchRefused(t, err, codes.Unauthenticated, "check the shared secret")

	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), key, "wrong-secret", false))
	wantLaunchRefused(t, err, codes.Unauthenticated, "signature does not match")

	_, err = client.VerifyLtiLaunch(root, ownLaunch(t, launchForm(nil), key, secret, time.Now().Add(-10*time.Minute)))
	wantLaunchRefused(t, err, codes.Unauthenticated, "older than 5 minutes")

	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(func(v url.Values) { v.Del("resource_link_id") }), key, secret, false))
	wantLaunchRefused(t, err, codes.InvalidArgument, "resource_link_id")

	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), server.GetConsumerKey(), server.GetSharedSecret(), false))
	wantLaunchRefused(t, err, codes.Unauthenticated, "not an LTI key pair")

	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), "3f9a1c2e-0000-4000-8000-000000000000", secret, false))
	wantLaunchRefused(t, err, codes.Unauthenticated, "unknown consumer key")

	// Only the root workspace's key pairs may verify launches.
	_, err = client.VerifyLtiLaunch(as(server.GetConsumerKey(), server.GetSharedSecret()), lmsLaunch(t, launchForm(nil), key, secret, false))
	wantCode(t, err, codes.PermissionDenied)

	// A deleted workspace's LTI pair is refused.
	gone := create("gone").GetAppKeys().GetLti()
	if _, err := client.DeleteWorkspace(root, &workspacev1.DeleteWorkspaceRequest{Id: "gone"}); err != nil {
		t.Fatal(err)
	}
	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), gone.GetConsumerKey(), gone.GetSharedSecret(), false))
	wantLaunchRefused(t, err, codes.Unauthenticated, "deleted")

	// Guessing: after three wrong signatures with one consumer key from
	// one address, that address is refused for that key, even signed right.
	guessed := create("guessed").GetAppKeys().GetLti()
	for range 3 {
		_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), guessed.GetConsumerKey(), "guess", false))
		wantCode(t, err, codes.Unauthenticated)
	}
	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), guessed.GetConsumerKey(), guessed.GetSharedSecret(), false))
	wantLaunchRefused(t, err, codes.ResourceExhausted, "too many failed authentications")
	// Other keys are not affected.
	if _, err := client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), key, secret, false)); err != nil {
		t.Fatalf("another key after the guesses: %v", err)
	}

	// With Redis down a replay cannot be ruled out: UNAVAILABLE.
	if err := rs.Stop(); err != nil {
		t.Fatal(err)
	}
	_, err = client.VerifyLtiLaunch(root, lmsLaunch(t, launchForm(nil), key, secret, false))
	wantLaunchRefused(t, err, codes.Unavailable, "replays")
}
