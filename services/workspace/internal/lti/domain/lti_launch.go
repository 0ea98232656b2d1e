package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"net/mail"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// What an LTI 1.1 basic launch must be, apart from its signature (which the
// app checks with the key pair's secret).

// Bounds of a launch. LMSes send a few dozen parameters of at most a few
// hundred bytes; these leave ample room and keep one launch's work small.
const (
	LaunchMaxParams     = 500
	LaunchMaxNameBytes  = 256
	LaunchMaxValueBytes = 16 << 10
	LaunchMaxBytes      = 256 << 10 // names and values together
	// LaunchMaxNonceBytes bounds oauth_nonce (LMSes send 32 to 64 characters).
	LaunchMaxNonceBytes = 256
	// LaunchMaxSkew is how far oauth_timestamp may be from the service's
	// clock, either way. A nonce is remembered for twice as long, which
	// covers every timestamp still accepted.
	LaunchMaxSkew = 300 * time.Second
)

// DerivedEmailDomain is the domain of the identities derived for users the
// LMS does not send an e-mail address for. ".invalid" (RFC 2606) never
// resolves, so nothing is ever mailed to one.
const DerivedEmailDomain = "lti.invalid"

// The LTI and OAuth parameters a launch is read from.
const (
	paramConsumerKey     = "oauth_consumer_key"
	paramSignature       = "oauth_signature"
	paramSignatureMethod = "oauth_signature_method"
	paramTimestamp       = "oauth_timestamp"
	paramNonce           = "oauth_nonce"
	paramVersion         = "oauth_version"
	paramMessageType     = "lti_message_type"
	paramLTIVersion      = "lti_version"
	paramResourceLinkID  = "resource_link_id"
	paramUserID          = "user_id"
	paramEmail           = "lis_person_contact_email_primary"
	paramReturnURL       = "launch_presentation_return_url"
	paramExamConfigID    = "custom_exam_config_id"
	customPrefix         = "custom_"
)

// Launch errors a teacher or an LMS administrator can act on. None says
// anything about a secret.
var (
	ErrLaunchUnknownKey = fault.New(fault.Unauthenticated,
		"unknown consumer key: paste the consumer key of the workspace's LTI key pair (appKeys.lti.consumerKey) into the LMS")
	ErrLaunchNotLTIKey = fault.New(fault.Unauthenticated,
		"this consumer key is not an LTI key pair: paste the LTI consumer key and shared secret (appKeys.lti), not the server key pair")
	ErrLaunchWorkspaceDeleted = fault.New(fault.Unauthenticated,
		"the workspace of this consumer key has been deleted: ask your vendor to restore it")
	ErrLaunchBadSignature = fault.New(fault.Unauthenticated,
		"the launch's signature does not match: check the shared secret pasted in the LMS")
	ErrLaunchTooOld = fault.New(fault.Unauthenticated,
		"the launch is older than 5 minutes: check the LMS server's clock, then launch again")
	ErrLaunchInFuture = fault.New(fault.Unauthenticated,
		"the launch is dated more than 5 minutes ahead: check the LMS server's clock, then launch again")
	ErrLaunchReplayed = fault.New(fault.Unauthenticated,
		"this launch was already used: launch again from the LMS (reloading the page resends the same launch)")
	ErrLaunchTooLarge = fault.New(fault.Invalid,
		"the launch is too large: at most 500 parameters, names of 256 bytes, values of 16 KiB, 256 KiB in all")
	// The exam configuration's refusals are shown to the teacher as they
	// are, so they are written as the page's sentences.
	ErrLaunchNoExamConfig = fault.New(fault.Invalid,
		"This link opens no exam: in the LMS, add the custom parameter exam_config_id=<the exam configuration's id> to the LiveProctor tool or link.")
	ErrLaunchExamConfigNotID = fault.New(fault.Invalid,
		"This link's exam_config_id is not an exam configuration id (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e): correct the custom parameter in the LMS.")
)

var uuidPattern = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// LaunchParam is one parameter of a launch, decoded.
type LaunchParam struct {
	Name  string
	Value string
}

// SignedLaunch is what the OAuth parameters of a launch say: which key pair
// signed it, how, when, and with what nonce.
type SignedLaunch struct {
	ConsumerKey     string
	SignatureMethod string
	Timestamp       time.Time
	Nonce           string
}

// Signature methods a launch may use.
const (
	SignatureHMACSHA1   = "HMAC-SHA1"
	SignatureHMACSHA256 = "HMAC-SHA256"
)

// CheckSignedLaunch checks the size of a launch and its OAuth parameters:
// a POST; oauth_consumer_key, oauth_signature, oauth_signature_method
// (HMAC-SHA1 or HMAC-SHA256), oauth_timestamp (seconds since 1970) and
// oauth_nonce each present once; oauth_version absent or 1.0.
func CheckSignedLaunch(method string, params []LaunchParam) (SignedLaunch, error) {
	if len(params) > LaunchMaxParams {
		return SignedLaunch{}, ErrLaunchTooLarge
	}
	total := 0
	for _, p := range params {
		if len(p.Name) > LaunchMaxNameBytes || len(p.Value) > LaunchMaxValueBytes {
			return SignedLaunch{}, ErrLaunchTooLarge
		}
		total += len(p.Name) + len(p.Value)
	}
	if total > LaunchMaxBytes {
		return SignedLaunch{}, ErrLaunchTooLarge
	}
	if !strings.EqualFold(method, "POST") {
		return SignedLaunch{}, fault.InvalidField("method", "an LTI launch is a form POST")
	}
	v, err := singles(params, paramConsumerKey, paramSignature, paramSignatureMethod, paramTimestamp, paramNonce, paramVersion)
	if err != nil {
		return SignedLaunch{}, err
	}
	for _, name := range []string{paramConsumerKey, paramSignature, paramSignatureMethod, paramTimestamp, paramNonce} {
		if v[name] == "" {
			return SignedLaunch{}, fault.InvalidField(name, "is required: the LMS must sign the launch with OAuth 1.0a")
		}
	}
	if ver := v[paramVersion]; ver != "" && ver != "1.0" {
		return SignedLaunch{}, fault.InvalidField(paramVersion, "must be 1.0 when present")
	}
	if m := v[paramSignatureMethod]; m != SignatureHMACSHA1 && m != SignatureHMACSHA256 {
		return SignedLaunch{}, fault.InvalidField(paramSignatureMethod, "must be HMAC-SHA1 or HMAC-SHA256")
	}
	ts, err := strconv.ParseInt(v[paramTimestamp], 10, 64)
	if err != nil || !digits(v[paramTimestamp]) || ts > 1<<40 {
		return SignedLaunch{}, fault.InvalidField(paramTimestamp, "must be the launch time in seconds since 1970")
	}
	if len(v[paramNonce]) > LaunchMaxNonceBytes {
		return SignedLaunch{}, fault.InvalidField(paramNonce, "must be at most 256 bytes")
	}
	return SignedLaunch{
		ConsumerKey:     v[paramConsumerKey],
		SignatureMethod: v[paramSignatureMethod],
		Timestamp:       time.Unix(ts, 0),
		Nonce:           v[paramNonce],
	}, nil
}

// CheckExamConfig returns the exam configuration a launch opens: the last
// custom_exam_config_id (the LMS's custom parameter exam_config_id),
// trimmed, which must be a UUID. A launch without one opens nothing, so it
// is refused before anything else is checked.
func CheckExamConfig(params []LaunchParam) (string, error) {
	id := ""
	for _, p := range params {
		if p.Name == paramExamConfigID {
			id = strings.TrimSpace(p.Value)
		}
	}
	switch {
	case id == "":
		return "", ErrLaunchNoExamConfig
	case !uuidPattern.MatchString(id):
		return "", ErrLaunchExamConfigNotID
	}
	return id, nil
}

// CheckFresh refuses a launch dated more than LaunchMaxSkew from now,
// either way.
func (s SignedLaunch) CheckFresh(now time.Time) error {
	switch d := now.Sub(s.Timestamp); {
	case d > LaunchMaxSkew:
		return ErrLaunchTooOld
	case d < -LaunchMaxSkew:
		return ErrLaunchInFuture
	}
	return nil
}

// Launch is a verified launch: who launches, from which workspace.
type Launch struct {
	WorkspaceID string
	ConsumerKey string
	// Email is lis_person_contact_email_primary when it is a plain address;
	// otherwise DerivedEmail(consumer key, user_id), and EmailDerived is set.
	Email          string
	EmailDerived   bool
	UserID         string
	ResourceLinkID string
	// Custom are the custom_* parameters, in the order sent.
	Custom    []LaunchParam
	ReturnURL string
}

// CheckLaunch reads the LTI parameters of a launch signed with an LTI key
// pair of workspaceID: lti_message_type basic-lti-launch-request,
// lti_version LTI-1p0 and resource_link_id are required, and a user: an
// e-mail address or a user_id.
func CheckLaunch(workspaceID, consumerKey string, params []LaunchParam) (Launch, error) {
	v, err := singles(params, paramMessageType, paramLTIVersion, paramResourceLinkID, paramUserID, paramEmail, paramReturnURL)
	if err != nil {
		return Launch{}, err
	}
	switch {
	case v[paramMessageType] != "basic-lti-launch-request":
		return Launch{}, fault.InvalidField(paramMessageType, "must be basic-lti-launch-request: this tool takes LTI 1.1 basic launches")
	case v[paramLTIVersion] != "LTI-1p0":
		return Launch{}, fault.InvalidField(paramLTIVersion, "must be LTI-1p0: configure the tool as LTI 1.1 in the LMS")
	case v[paramResourceLinkID] == "":
		return Launch{}, fault.InvalidField(paramResourceLinkID, "is required: the LMS sends it with every launch from a course link")
	}
	l := Launch{
		WorkspaceID:    workspaceID,
		ConsumerKey:    consumerKey,
		UserID:         v[paramUserID],
		ResourceLinkID: v[paramResourceLinkID],
		ReturnURL:      v[paramReturnURL],
	}
	switch email := v[paramEmail]; {
	case plainEmail(email):
		l.Email = email
	case l.UserID != "":
		l.Email, l.EmailDerived = DerivedEmail(consumerKey, l.UserID), true
	case email != "":
		return Launch{}, fault.InvalidField(paramEmail, "is not a plain e-mail address, and user_id is missing: the LMS must identify the user")
	default:
		return Launch{}, fault.InvalidField(paramUserID, "is required when lis_person_contact_email_primary is not sent: let the LMS send the user's e-mail or id")
	}
	for _, p := range params {
		if strings.HasPrefix(p.Name, customPrefix) {
			l.Custom = append(l.Custom, p)
		}
	}
	return l, nil
}

// DerivedEmail is the stable identity of a user the LMS does not send an
// e-mail address for: the first 32 hex digits of SHA-256(consumerKey + ":"
// + userID), at DerivedEmailDomain. The same user of the same LMS
// registration always gets the same one; users of different consumer keys
// never share one.
func DerivedEmail(consumerKey, userID string) string {
	sum := sha256.Sum256([]byte(consumerKey + ":" + userID))
	return hex.EncodeToString(sum[:])[:32] + "@" + DerivedEmailDomain
}

// plainEmail accepts one address without a display name, of at most 254
// bytes and without control characters (the auth service's login rule).
func plainEmail(email string) bool {
	if email == "" || len(email) > 254 || strings.IndexFunc(email, unicode.IsControl) >= 0 {
		return false
	}
	addr, err := mail.ParseAddress(email)
	return err == nil && addr.Name == "" && addr.Address == email && strings.Contains(email, "@")
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// singles returns the values of the named parameters, refusing any of them
// that appears more than once (a duplicate could make what is checked differ
// from what is used).
func singles(params []LaunchParam, names ...string) (map[string]string, error) {
	v := make(map[string]string, len(names))
	seen := make(map[string]bool, len(names))
	for _, p := range params {
		for _, n := range names {
			if p.Name != n {
				continue
			}
			if seen[n] {
				return nil, fault.InvalidField(n, "must appear once")
			}
			seen[n], v[n] = true, p.Value
		}
	}
	return v, nil
}
