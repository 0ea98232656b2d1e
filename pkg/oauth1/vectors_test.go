package oauth1_test

import (
	"testing"

	"github.com/liveproctor/workspaces/pkg/oauth1"
)

// Known-answer tests with published vectors. Each names where it was
// published; the signatures were computed there by other implementations.

// rfc5849Params are the parameters of the example request of RFC 5849
// §3.4.1.1 (https://www.rfc-editor.org/rfc/rfc5849#section-3.4.1.1): the
// query b5=%3D%253D&a3=a&c%40=&a2=r%20b, the form body c2&a3=2+q, and the
// protocol parameters of its Authorization header (realm excluded).
func rfc5849Params(t *testing.T, signatureMethod string) []oauth1.Param {
	t.Helper()
	query, err := oauth1.ParseForm("b5=%3D%253D&a3=a&c%40=&a2=r%20b", 0)
	if err != nil {
		t.Fatal(err)
	}
	body, err := oauth1.ParseForm("c2&a3=2+q", 0)
	if err != nil {
		t.Fatal(err)
	}
	return append(append(query, body...),
		oauth1.Param{Name: "oauth_consumer_key", Value: "9djdj82h48djs9d2"},
		oauth1.Param{Name: "oauth_token", Value: "kkk9d7dh3k39sjv7"},
		oauth1.Param{Name: "oauth_signature_method", Value: signatureMethod},
		oauth1.Param{Name: "oauth_timestamp", Value: "137131201"},
		oauth1.Param{Name: "oauth_nonce", Value: "7d8f3e4a"},
	)
}

// TestRFC5849Example: the base string is the one printed in RFC 5849
// §3.4.1.1; the signatures, with consumer secret j49sk3j29djd and token
// secret dh893hdasih9, are those of the RFC 5849 example in
// request/oauth-sign, test.js ("example in rfc5849", HMAC-SHA1 and
// HMAC-SHA256).
func TestRFC5849Example(t *testing.T) {
	for _, tc := range []struct {
		method, base, signature string
	}{
		{
			oauth1.HMACSHA1,
			"POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7",
			"r6/TJjbCOr97/+UU0NsvSne7s5g=",
		},
		{
			oauth1.HMACSHA256,
			"POST&http%3A%2F%2Fexample.com%2Frequest&a2%3Dr%2520b%26a3%3D2%2520q%26a3%3Da%26b5%3D%253D%25253D%26c%2540%3D%26c2%3D%26oauth_consumer_key%3D9djdj82h48djs9d2%26oauth_nonce%3D7d8f3e4a%26oauth_signature_method%3DHMAC-SHA256%26oauth_timestamp%3D137131201%26oauth_token%3Dkkk9d7dh3k39sjv7",
			"ypAxjNip++Dm0fTM+gCl8wAo6ufSnseu1WHxL7py3BU=",
		},
	} {
		t.Run(tc.method, func(t *testing.T) {
			base, err := oauth1.BaseString("POST", "http://example.com/request", rfc5849Params(t, tc.method))
			if err != nil {
				t.Fatal(err)
			}
			if base != tc.base {
				t.Fatalf("base string\n got %s\nwant %s", base, tc.base)
			}
			sig, err := oauth1.Sign(tc.method, base, "j49sk3j29djd", "dh893hdasih9")
			if err != nil {
				t.Fatal(err)
			}
			if sig != tc.signature {
				t.Fatalf("signature %s, want %s", sig, tc.signature)
			}
		})
	}
}

// imsLaunch is the IMS test-consumer launch of jordic/lti, lti_test.go
// (GenerateForm, TestSign): consumer key 12345, secret "secret".
var imsLaunch = []oauth1.Param{
	{"context_id", "456434513"},
	{"context_label", "SI182"},
	{"context_title", "Design of Personal Environments"},
	{"launch_presentation_css_url", "http://www.imsglobal.org/developers/LTI/test/v1p1/lms.css"},
	{"launch_presentation_document_target", "frame"},
	{"launch_presentation_locale", "en-US"},
	{"launch_presentation_return_url", "http://www.imsglobal.org/developers/LTI/test/v1p1/lms_return.php"},
	{"lis_outcome_service_url", "http://www.imsglobal.org/developers/LTI/test/v1p1/common/tool_consumer_outcome.php?b64=MTIzNDU6OjpzZWNyZXQ="},
	{"lis_person_contact_email_primary", "user@school.edu"},
	{"lis_person_name_family", "Public"},
	{"lis_person_name_full", "Jane Q. Public"},
	{"lis_person_name_given", "Given"},
	{"lis_person_sourcedid", "school.edu:user"},
	{"lis_result_sourcedid", "feb-123-456-2929::28883"},
	{"lti_message_type", "basic-lti-launch-request"},
	{"lti_version", "LTI-1p0"},
	{"oauth_callback", "about:blank"},
	{"oauth_consumer_key", "12345"},
	{"oauth_nonce", "93ac608e18a7d41dec8f7219e1bf6a17"},
	{"oauth_signature_method", "HMAC-SHA1"},
	{"oauth_timestamp", "1348093590"},
	{"oauth_version", "1.0"},
	{"resource_link_description", "A weekly blog."},
	{"resource_link_id", "120988f929-274612"},
	{"resource_link_title", "Weekly Blog"},
	{"roles", "Instructor"},
	{"tool_consumer_info_product_family_code", "ims"},
	{"tool_consumer_info_version", "1.1"},
	{"tool_consumer_instance_description", "University of School (LMSng)"},
	{"tool_consumer_instance_guid", "lmsng.school.edu"},
	{"user_id", "292832126"},
}

// imsLaunchBase is the full base string jordic/lti, lti_test.go, publishes
// for imsLaunch (var OT).
const imsLaunchBase = "POST&http%3A%2F%2Fwww.imsglobal.org%2Fdevelopers%2FLTI%2Ftest%2Fv1p1%2Ftool.php&context_id%3D456434513%26context_label%3DSI182%26context_title%3DDesign%2520of%2520Personal%2520Environments%26launch_presentation_css_url%3Dhttp%253A%252F%252Fwww.imsglobal.org%252Fdevelopers%252FLTI%252Ftest%252Fv1p1%252Flms.css%26launch_presentation_document_target%3Dframe%26launch_presentation_locale%3Den-US%26launch_presentation_return_url%3Dhttp%253A%252F%252Fwww.imsglobal.org%252Fdevelopers%252FLTI%252Ftest%252Fv1p1%252Flms_return.php%26lis_outcome_service_url%3Dhttp%253A%252F%252Fwww.imsglobal.org%252Fdevelopers%252FLTI%252Ftest%252Fv1p1%252Fcommon%252Ftool_consumer_outcome.php%253Fb64%253DMTIzNDU6OjpzZWNyZXQ%253D%26lis_person_contact_email_primary%3Duser%2540school.edu%26lis_person_name_family%3DPublic%26lis_person_name_full%3DJane%2520Q.%2520Public%26lis_person_name_given%3DGiven%26lis_person_sourcedid%3Dschool.edu%253Auser%26lis_result_sourcedid%3Dfeb-123-456-2929%253A%253A28883%26lti_message_type%3Dbasic-lti-launch-request%26lti_version%3DLTI-1p0%26oauth_callback%3Dabout%253Ablank%26oauth_consumer_key%3D12345%26oauth_nonce%3D93ac608e18a7d41dec8f7219e1bf6a17%26oauth_signature_method%3DHMAC-SHA1%26oauth_timestamp%3D1348093590%26oauth_version%3D1.0%26resource_link_description%3DA%2520weekly%2520blog.%26resource_link_id%3D120988f929-274612%26resource_link_title%3DWeekly%2520Blog%26roles%3DInstructor%26tool_consumer_info_product_family_code%3Dims%26tool_consumer_info_version%3D1.1%26tool_consumer_instance_description%3DUniversity%2520of%2520School%2520%2528LMSng%2529%26tool_consumer_instance_guid%3Dlmsng.school.edu%26user_id%3D292832126"

const imsToolURL = "http://www.imsglobal.org/developers/LTI/test/v1p1/tool.php"

// TestIMSTestConsumerLaunch: the base string and signature published in
// jordic/lti, lti_test.go (TestSign): QWgJfKpJNDrpncgO9oXxJb8vHiE=. The
// method there is "post", upper-cased in the base string.
func TestIMSTestConsumerLaunch(t *testing.T) {
	base, err := oauth1.BaseString("post", imsToolURL, imsLaunch)
	if err != nil {
		t.Fatal(err)
	}
	if base != imsLaunchBase {
		t.Fatalf("base string\n got %s\nwant %s", base, imsLaunchBase)
	}
	const signature = "QWgJfKpJNDrpncgO9oXxJb8vHiE="
	sig, err := oauth1.Sign(oauth1.HMACSHA1, base, "secret", "")
	if err != nil {
		t.Fatal(err)
	}
	if sig != signature {
		t.Fatalf("signature %s, want %s", sig, signature)
	}
	signed := append(imsLaunch[:len(imsLaunch):len(imsLaunch)], oauth1.Param{Name: "oauth_signature", Value: signature})
	if err := oauth1.Verify("POST", imsToolURL, signed, "secret"); err != nil {
		t.Fatalf("Verify of the published launch: %v", err)
	}
	if err := oauth1.Verify("POST", imsToolURL, signed, "Secret"); err != oauth1.ErrSignatureMismatch {
		t.Fatalf("Verify with another secret = %v, want ErrSignatureMismatch", err)
	}
}

// TestDuplicatedQueryParameters: omsmith/ims-lti, test/Signer.coffee ("should
// include query params"): a launch to tool.php?foo=123&foo=bar whose
// signature, with secret "secret", is dHORwwJqwh5hQQAlvaA9csSIOhc=. Both
// foo parameters must be signed.
func TestDuplicatedQueryParameters(t *testing.T) {
	query, err := oauth1.ParseForm("foo=123&foo=bar", 0)
	if err != nil {
		t.Fatal(err)
	}
	body := []oauth1.Param{
		{"resource_link_id", "rsc1"},
		{"oauth_callback", "about:blank"},
		{"lis_outcome_service_url", "http://www.imsglobal.org/developers/LTI/test/v1p1/common/tool_consumer_outcome.php?b64=MTIzNDU6OjpzZWNyZXQ="},
		{"lis_result_sourcedid", "feb-123-456-2929::28883"},
		{"launch_presentation_return_url", "http://www.imsglobal.org/developers/LTI/test/v1p1/lms_return.php"},
		{"lti_version", "LTI-1p0"},
		{"lti_message_type", "basic-lti-launch-request"},
		{"oauth_version", "1.0"},
		{"oauth_nonce", "7ee33f6dc94117e792ff529898ce3953"},
		{"oauth_timestamp", "1397708483"},
		{"oauth_consumer_key", "12345"},
		{"oauth_signature_method", "HMAC-SHA1"},
		{"oauth_signature", "dHORwwJqwh5hQQAlvaA9csSIOhc="},
	}
	params := append(query, body...)
	if err := oauth1.Verify("POST", imsToolURL, params, "secret"); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	// Keeping only one of the duplicates breaks the signature.
	if err := oauth1.Verify("POST", imsToolURL, params[1:], "secret"); err != oauth1.ErrSignatureMismatch {
		t.Fatalf("Verify without foo=123 = %v, want ErrSignatureMismatch", err)
	}
}
