package domain_test

import (
	"net/mail"
	"strings"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// FuzzCheckLaunch reads a launch's parameters from a query-like text
// (name=value lines, names and values as given) and checks the launch rules:
//   - a refusal is Invalid (the exam configuration, the sizes, the OAuth
//     and LTI parameters), with a message that quotes none of the values
//     sent (they may be anything);
//   - an accepted exam configuration is a UUID, the last one sent, trimmed;
//   - an accepted signed launch has every OAuth parameter it needs, a
//     supported method and a timestamp as sent;
//   - an accepted launch has the required LTI parameters, and its user is a
//     plain address, or the identity derived from user_id and the key.
func FuzzCheckLaunch(f *testing.F) {
	full := "oauth_consumer_key=k\noauth_signature=s\noauth_signature_method=HMAC-SHA1\noauth_timestamp=1800000000\n" +
		"oauth_nonce=n\noauth_version=1.0\nlti_message_type=basic-lti-launch-request\nlti_version=LTI-1p0\nresource_link_id=r\n"
	f.Add("POST", full+"lis_person_contact_email_primary=ada@school.edu\ncustom_x=1")
	f.Add("POST", full+"lis_person_contact_email_primary=ada@school.edu\ncustom_exam_config_id= 0f8fad5b-d9cb-469f-a165-70867728950e ")
	f.Add("POST", full+"user_id=u\ncustom_exam_config_id=0f8fad5b-d9cb-469f-a165-70867728950e\ncustom_exam_config_id=exam-1")
	f.Add("post", full+"user_id=u\nlis_person_contact_email_primary=Ada <ada@school.edu>")
	f.Add("POST", full+"user_id=u\nuser_id=v")
	f.Add("GET", "oauth_timestamp=+1\noauth_nonce="+strings.Repeat("n", 300))
	f.Add("POST", strings.Replace(full, "1800000000", "99999999999999", 1)+"user_id=\x85")
	f.Fuzz(func(t *testing.T, method, text string) {
		var params []ltidomain.LaunchParam
		for line := range strings.SplitSeq(text, "\n") {
			name, value, _ := strings.Cut(line, "=")
			params = append(params, ltidomain.LaunchParam{Name: name, Value: value})
		}
		refused := func(err error) {
			t.Helper()
			e, ok := fault.As(err)
			if !ok || e.Kind != fault.Invalid {
				t.Fatalf("refusal %v is not Invalid", err)
			}
			for _, p := range params {
				if len(p.Value) >= 3 && strings.Contains(e.Message, p.Value) && !strings.Contains(staticText, p.Value) {
					t.Fatalf("message %q quotes the value %q", e.Message, p.Value)
				}
			}
		}
		if id, err := ltidomain.CheckExamConfig(params); err != nil {
			refused(err)
		} else if last := lastValue(params, "custom_exam_config_id"); len(id) != 36 || id != strings.TrimSpace(last) {
			t.Fatalf("accepted exam configuration %q from %q", id, last)
		}
		signed, err := ltidomain.CheckSignedLaunch(method, params)
		if err != nil {
			refused(err)
		} else {
			if !strings.EqualFold(method, "POST") || signed.ConsumerKey == "" || signed.Nonce == "" || len(signed.Nonce) > ltidomain.LaunchMaxNonceBytes ||
				signed.SignatureMethod != ltidomain.SignatureHMACSHA1 && signed.SignatureMethod != ltidomain.SignatureHMACSHA256 ||
				signed.Timestamp.Before(time.Unix(0, 0)) {
				t.Fatalf("accepted %+v from %q", signed, params)
			}
		}
		l, err := ltidomain.CheckLaunch("w", "k", params)
		if err != nil {
			refused(err)
			return
		}
		if l.ResourceLinkID == "" || l.WorkspaceID != "w" || l.ConsumerKey != "k" {
			t.Fatalf("accepted %+v", l)
		}
		if l.EmailDerived {
			if l.UserID == "" || l.Email != ltidomain.DerivedEmail("k", l.UserID) {
				t.Fatalf("derived %q for user_id %q", l.Email, l.UserID)
			}
		} else if a, err := mail.ParseAddress(l.Email); err != nil || a.Address != l.Email || a.Name != "" || len(l.Email) > 254 {
			t.Fatalf("user %q is not a plain address", l.Email)
		}
		for _, c := range l.Custom {
			if !strings.HasPrefix(c.Name, "custom_") {
				t.Fatalf("custom parameter %q", c.Name)
			}
		}
	})
}

func lastValue(params []ltidomain.LaunchParam, name string) string {
	v := ""
	for _, p := range params {
		if p.Name == name {
			v = p.Value
		}
	}
	return v
}

// staticText is what the launch messages say of their own; a value that
// happens to be part of it is not an echo.
const staticText = "is required: the LMS must sign the launch with OAuth 1.0a must be 1.0 when present " +
	"must be HMAC-SHA1 or HMAC-SHA256 must be the launch time in seconds since 1970 must be at most 256 bytes " +
	"must be basic-lti-launch-request: this tool takes LTI 1.1 basic launches must be LTI-1p0: configure the tool as LTI 1.1 in the LMS " +
	"is required: the LMS sends it with every launch from a course link " +
	"is not a plain e-mail address, and user_id is missing: the LMS must identify the user " +
	"is required when lis_person_contact_email_primary is not sent: let the LMS send the user's e-mail or id " +
	"must appear once an LTI launch is a form POST " +
	"the launch is too large: at most 500 parameters, names of 256 bytes, values of 16 KiB, 256 KiB in all " +
	"This link opens no exam: in the LMS, add the custom parameter exam_config_id=<the exam configuration's id> to the LiveProctor tool or link. " +
	"This link's exam_config_id is not an exam configuration id (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e): correct the custom parameter in the LMS. " +
	"oauth_consumer_key oauth_signature oauth_signature_method oauth_timestamp oauth_nonce oauth_version lti_message_type lti_version resource_link_id user_id lis_person_contact_email_primary method"
