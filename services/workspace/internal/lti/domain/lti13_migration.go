package domain

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/jose"
)

// claimLTI1p1 carries a launch's LTI 1.1 identity, for tools moving from
// 1.1 to 1.3 (1EdTech, "LTI 1.1 to 1.3 migration", the lti1p1 claim).
const claimLTI1p1 = "https://purl.imsglobal.org/spec/lti/claim/lti1p1"

// LTI1p1Claim is the lti1p1 claim of a launch: the user's LTI 1.1
// user_id, the 1.1 consumer key the platform used for this tool, and the
// platform's signature proving it holds that key's secret.
type LTI1p1Claim struct {
	UserID      string `json:"user_id"`
	ConsumerKey string `json:"oauth_consumer_key"`
	Sign        string `json:"oauth_consumer_key_sign"`
}

// ErrLTI1p1Sign refuses a launch whose lti1p1 claim is signed with
// another secret than the workspace's LTI 1.1 one (or names another
// consumer key): the identity it claims is not proven.
var ErrLTI1p1Sign = fault.New(fault.Unauthenticated,
	"the id_token's lti1p1 claim is not signed with this workspace's LTI 1.1 shared secret: check the consumer key and secret the LMS holds for the LTI 1.1 tool")

// ReadLTI1p1Claim returns the launch's lti1p1 claim when it carries a
// signed one (oauth_consumer_key_sign present); a claim without a
// signature proves nothing and is not read.
func ReadLTI1p1Claim(c jose.Claims) (LTI1p1Claim, bool, error) {
	raw, ok := c.Raw[claimLTI1p1]
	if !ok {
		return LTI1p1Claim{}, false, nil
	}
	var claim LTI1p1Claim
	if err := json.Unmarshal(raw, &claim); err != nil {
		return LTI1p1Claim{}, false, lti13Invalid(claimLTI1p1, "must be an object of strings")
	}
	if claim.Sign == "" {
		return LTI1p1Claim{}, false, nil
	}
	if claim.ConsumerKey == "" || claim.UserID == "" || len(claim.UserID) > maxLTI13ID {
		return LTI1p1Claim{}, false, lti13Invalid(claimLTI1p1, "must name the oauth_consumer_key and the user_id it signs for")
	}
	return claim, true, nil
}

// LTI1p1Sign is oauth_consumer_key_sign as the migration guide defines
// it: base64 of HMAC-SHA256, keyed with the LTI 1.1 shared secret, of the
// consumer key, the deployment id, the issuer, the client id, exp (as the
// token writes it) and the nonce, joined by '&'.
func LTI1p1Sign(secret, consumerKey, deploymentID, issuer, clientID, exp, nonce string) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte(strings.Join([]string{consumerKey, deploymentID, issuer, clientID, exp, nonce}, "&")))
	return base64.StdEncoding.EncodeToString(mac.Sum(nil))
}

// CheckLTI1p1Claim checks claim's signature with secret, the shared secret
// of the workspace's LTI 1.1 key pair whose consumer key the claim names,
// and gives the launch the identity an LTI 1.1 launch of that user_id had:
// the e-mail when the platform sends one, else DerivedEmail(consumer key,
// user_id).
func CheckLTI1p1Claim(l *LTI13Launch, reg Registration, c jose.Claims, claim LTI1p1Claim, secret string) error {
	exp := strings.TrimSpace(string(c.Raw["exp"]))
	want := LTI1p1Sign(secret, claim.ConsumerKey, l.DeploymentID, c.Issuer, reg.ClientID, exp, c.Nonce)
	if !hmac.Equal([]byte(want), []byte(claim.Sign)) {
		return ErrLTI1p1Sign
	}
	if l.EmailDerived {
		l.Email = DerivedEmail(claim.ConsumerKey, claim.UserID)
	}
	return nil
}
