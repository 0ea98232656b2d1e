package domain_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
	ltidomain "github.com/liveproctor/workspaces/services/workspace/internal/lti/domain"
)

// The README's example of a derived identity.
func TestDerivedEmailAsDocumented(t *testing.T) {
	got := ltidomain.DerivedEmail("0b6c1f0e-5d5a-4a57-9a7e-1c2d3e4f5a6b", "292832126")
	if want := "eefec8973c03cc16a50368bf37d397af@lti.invalid"; got != want {
		t.Fatalf("DerivedEmail = %q, want %q", got, want)
	}
	if ltidomain.DerivedEmail("k1", "u") == ltidomain.DerivedEmail("k2", "u") {
		t.Fatal("two consumer keys gave one user the same identity")
	}
}

func TestCheckFresh(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for skew, want := range map[time.Duration]error{
		0: nil, 300 * time.Second: nil, -300 * time.Second: nil,
		301 * time.Second: ltidomain.ErrLaunchTooOld, -301 * time.Second: ltidomain.ErrLaunchInFuture,
	} {
		l := ltidomain.SignedLaunch{Timestamp: now.Add(-skew)}
		if err := l.CheckFresh(now); !errors.Is(err, want) {
			t.Errorf("%v old: %v, want %v", skew, err, want)
		}
	}
}

func TestCheckSignedLaunchReadsTheOAuthParameters(t *testing.T) {
	params := []ltidomain.LaunchParam{
		{Name: "oauth_consumer_key", Value: "k"}, {Name: "oauth_signature", Value: "s"},
		{Name: "oauth_signature_method", Value: "HMAC-SHA256"}, {Name: "oauth_timestamp", Value: "1800000000"},
		{Name: "oauth_nonce", Value: "n"},
	}
	got, err := ltidomain.CheckSignedLaunch("post", params)
	if err != nil || got.ConsumerKey != "k" || got.SignatureMethod != "HMAC-SHA256" || got.Nonce != "n" || got.Timestamp.Unix() != 1_800_000_000 {
		t.Fatalf("CheckSignedLaunch = %+v, %v", got, err)
	}
	for _, ts := range []string{"-1", "+5", "1.5", "99999999999999999999", ""} {
		bad := append([]ltidomain.LaunchParam(nil), params...)
		bad[3].Value = ts
		if _, err := ltidomain.CheckSignedLaunch("POST", bad); fault.KindOf(err) != fault.Invalid {
			t.Errorf("oauth_timestamp %q: %v, want Invalid", ts, err)
		}
	}
}

func TestCheckLaunchUser(t *testing.T) {
	base := func(email, userID string) []ltidomain.LaunchParam {
		p := []ltidomain.LaunchParam{
			{Name: "lti_message_type", Value: "basic-lti-launch-request"}, {Name: "lti_version", Value: "LTI-1p0"},
			{Name: "resource_link_id", Value: "r"}, {Name: "custom_a", Value: "1"}, {Name: "custom_a", Value: "2"},
		}
		if email != "-" {
			p = append(p, ltidomain.LaunchParam{Name: "lis_person_contact_email_primary", Value: email})
		}
		if userID != "-" {
			p = append(p, ltidomain.LaunchParam{Name: "user_id", Value: userID})
		}
		return p
	}
	for i, tc := range []struct {
		email, userID string
		want          string // "" for Invalid
		derived       bool
	}{
		{"ada@school.edu", "-", "ada@school.edu", false},
		{"ada@school.edu", "u", "ada@school.edu", false},
		{"-", "u", ltidomain.DerivedEmail("k", "u"), true},
		{"", "u", ltidomain.DerivedEmail("k", "u"), true},
		{"Ada <ada@school.edu>", "u", ltidomain.DerivedEmail("k", "u"), true},
		{"ada@school.edu\u0085", "u", ltidomain.DerivedEmail("k", "u"), true},
		{"-", "-", "", false},
		{"-", "", "", false},
		{"not-an-address", "-", "", false},
	} {
		t.Run(strconv.Itoa(i), func(t *testing.T) {
			l, err := ltidomain.CheckLaunch("w", "k", base(tc.email, tc.userID))
			if tc.want == "" {
				if fault.KindOf(err) != fault.Invalid {
					t.Fatalf("CheckLaunch = %+v, %v; want Invalid", l, err)
				}
				return
			}
			if err != nil || l.Email != tc.want || l.EmailDerived != tc.derived || len(l.Custom) != 2 {
				t.Fatalf("CheckLaunch = %+v, %v; want %s (derived %v)", l, err, tc.want, tc.derived)
			}
		})
	}
}

func TestCheckExamConfig(t *testing.T) {
	const id = "0f8fad5b-d9cb-469f-a165-70867728950e"
	exam := func(values ...string) []ltidomain.LaunchParam {
		p := []ltidomain.LaunchParam{{Name: "oauth_consumer_key", Value: "k"}, {Name: "exam_config_id", Value: id}}
		for _, v := range values {
			p = append(p, ltidomain.LaunchParam{Name: "custom_exam_config_id", Value: v})
		}
		return p
	}
	for _, tc := range []struct {
		name   string
		params []ltidomain.LaunchParam
		want   string
		err    error
	}{
		{"present", exam(id), id, nil},
		{"trimmed", exam(" \t" + id + "\n"), id, nil},
		{"upper case", exam("0F8FAD5B-D9CB-469F-A165-70867728950E"), "0F8FAD5B-D9CB-469F-A165-70867728950E", nil},
		{"the last wins", exam("exam-1", id), id, nil},
		{"the last wins even when empty", exam(id, " "), "", ltidomain.ErrLaunchNoExamConfig},
		{"not a UUID", exam("exam-1"), "", ltidomain.ErrLaunchExamConfigNotID},
		{"no hyphens", exam("0f8fad5bd9cb469fa16570867728950e"), "", ltidomain.ErrLaunchExamConfigNotID},
		{"missing", exam(), "", ltidomain.ErrLaunchNoExamConfig},
		{"empty", exam(""), "", ltidomain.ErrLaunchNoExamConfig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ltidomain.CheckExamConfig(tc.params)
			if got != tc.want || !errors.Is(err, tc.err) {
				t.Fatalf("CheckExamConfig = %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
			if err != nil && fault.KindOf(err) != fault.Invalid {
				t.Fatalf("%v is not Invalid", err)
			}
		})
	}
	// The teacher reads these on the refusal page, as the gateway wrote them
	// before the rule moved here.
	for err, want := range map[error]string{
		ltidomain.ErrLaunchNoExamConfig:    "This link opens no exam: in the LMS, add the custom parameter exam_config_id=<the exam configuration's id> to the LiveProctor tool or link.",
		ltidomain.ErrLaunchExamConfigNotID: "This link's exam_config_id is not an exam configuration id (a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e): correct the custom parameter in the LMS.",
	} {
		if e, _ := fault.As(err); e.Message != want {
			t.Errorf("message %q, want %q", e.Message, want)
		}
	}
}
