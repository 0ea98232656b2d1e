package domain

import (
	"fmt"
	"slices"
	"time"

	"github.com/liveproctor/workspaces/pkg/fault"
)

// LTI 1.3 platform registrations: what a workspace knows of each LMS
// (platform) that launches it over LTI 1.3. A platform is known by its
// issuer and the client id it gave the tool; one (issuer, client id) pair
// belongs to one registration store-wide, since a launch names only those
// (Canvas gives every hosted instance the same issuer). The registrations
// live in the workspace document and change through its revision-checked
// write; the store-wide uniqueness of the pair rests on a reservation (see
// Repository.ReserveLTIRegistration).

// Bounds of a workspace's registrations. The registrations live in the
// workspace document, which every request reads, so their number is bounded:
// a district with an LMS per school and environment stays well within them.
const (
	MaxRegistrations  = 20
	MaxDeployments    = 100
	MaxClientIDLength = 255
	MaxDeploymentID   = 255
)

// Errors of the registration rules.
var (
	// ErrRegistrationNotFound: the workspace has no such registration.
	ErrRegistrationNotFound = fault.New(fault.NotFound, "LTI registration not found")
	// ErrDeploymentNotFound: the registration has no such deployment id.
	ErrDeploymentNotFound = fault.New(fault.NotFound, "deployment id not found in the LTI registration")
	// ErrRegistrationTaken: a registration with the (issuer, client id)
	// pair exists already, in this workspace or another.
	ErrRegistrationTaken = fault.New(fault.Conflict,
		"a registration of this issuer and clientId exists already: an (issuer, clientId) pair belongs to one registration")
	// ErrTooManyRegistrations / ErrTooManyDeployments: a bound of
	// the workspace document.
	ErrTooManyRegistrations = fault.New(fault.FailedPrecondition,
		"the workspace already has %d LTI registrations: delete one first", MaxRegistrations)
	ErrTooManyDeployments = fault.New(fault.FailedPrecondition,
		"the registration already has %d deployment ids: remove one first", MaxDeployments)
)

// Registration is one platform registration of a workspace.
type Registration struct {
	ID       string
	Issuer   string // compared as an exact string
	ClientID string
	// DeploymentIDs are the platform's deployments of the tool that may
	// launch; may be empty (launches are then refused until one is added).
	DeploymentIDs []string
	AuthLoginURL  string // the platform's OIDC authorization endpoint
	JWKSURL       string // the platform's public keys
	AuthTokenURL  string // its OAuth 2 token endpoint; empty: none given
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// NewRegistration is what a caller sends for a registration.
type NewRegistration struct {
	Issuer        string
	ClientID      string
	DeploymentIDs []string
	AuthLoginURL  string
	JWKSURL       string
	AuthTokenURL  *string // nil: not given
}

func (r Registration) clone() Registration {
	r.DeploymentIDs = slices.Clone(r.DeploymentIDs)
	return r
}

// HasDeployment reports whether deploymentID may launch through r.
func (r Registration) HasDeployment(deploymentID string) bool {
	return slices.Contains(r.DeploymentIDs, deploymentID)
}

// CheckNewLTIRegistration checks a registration's fields, naming every one
// that breaks a rule; urls is the outbound URL rule its URLs (and issuer)
// follow.
func CheckNewRegistration(r NewRegistration, urls URLPolicy) error {
	var v violations
	if why := checkURL(urls, r.Issuer, true); why != "" {
		v.add("issuer", why)
	}
	checkClientID(&v, r.ClientID)
	if len(r.DeploymentIDs) > MaxDeployments {
		v.add("deploymentIds", fmt.Sprintf("must have at most %d elements", MaxDeployments))
	} else {
		first := map[string]int{}
		for i, id := range r.DeploymentIDs {
			field := fmt.Sprintf("deploymentIds[%d]", i)
			if why := deploymentIDRule(id); why != "" {
				v.add(field, why)
			} else if j, dup := first[id]; dup {
				v.add(field, fmt.Sprintf("duplicate of deploymentIds[%d]", j))
			} else {
				first[id] = i
			}
		}
	}
	for _, u := range []struct{ field, value string }{{"authLoginUrl", r.AuthLoginURL}, {"jwksUrl", r.JWKSURL}} {
		if why := checkURL(urls, u.value, false); why != "" {
			v.add(u.field, why)
		}
	}
	if r.AuthTokenURL != nil {
		if why := checkURL(urls, *r.AuthTokenURL, false); why != "" {
			v.add("authTokenUrl", why)
		}
	}
	return v.err()
}

// checkClientID: 1 to 255 printable ASCII characters.
func checkClientID(v *violations, id string) {
	if why := clientIDRule(id); why != "" {
		v.add("clientId", why)
	}
}

// clientIDRule says what is wrong with a platform's client id ("" when
// nothing).
func clientIDRule(id string) string {
	switch {
	case id == "":
		return "is required"
	case len(id) > MaxClientIDLength || !printableASCII(id):
		return fmt.Sprintf("must be 1 to %d printable ASCII characters", MaxClientIDLength)
	}
	return ""
}

// CheckDeploymentID checks a deployment id: 1 to 255 printable ASCII
// characters (LTI 1.3: case-sensitive, at most 255 ASCII characters).
func CheckDeploymentID(id string) error {
	if why := deploymentIDRule(id); why != "" {
		return fault.InvalidField("deploymentId", why)
	}
	return nil
}

func deploymentIDRule(id string) string {
	switch {
	case id == "":
		return "is required"
	case len(id) > MaxDeploymentID || !printableASCII(id):
		return fmt.Sprintf("must be 1 to %d printable ASCII characters", MaxDeploymentID)
	}
	return ""
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < ' ' || s[i] > '~' {
			return false
		}
	}
	return true
}

// Registrations are a workspace's registrations, oldest first, with the
// rules they keep: the workspace document holds them (and records the
// events of their changes), this package says what a change may be. A
// change copies what it touches, so copies of a Registrations never share
// anything one of them changes.
type Registrations struct {
	list []Registration
}

// UnmarshalRegistrations returns the registrations a store kept, unchecked
// (as UnmarshalWorkspaceFromDatabase loads a workspace); it takes list as
// its own.
func UnmarshalRegistrations(list []Registration) Registrations {
	return Registrations{list: list}
}

// Len is how many registrations there are.
func (rs Registrations) Len() int { return len(rs.list) }

// All returns copies of the registrations, oldest first.
func (rs Registrations) All() []Registration {
	out := make([]Registration, len(rs.list))
	for i, r := range rs.list {
		out[i] = r.clone()
	}
	return out
}

// Get returns the registration id.
func (rs Registrations) Get(id string) (Registration, bool) {
	for _, r := range rs.list {
		if r.ID == id {
			return r.clone(), true
		}
	}
	return Registration{}, false
}

// For returns the registration of (issuer, clientID): the issuer compared
// as an exact string, as LTI 1.3 has it.
func (rs Registrations) For(issuer, clientID string) (Registration, bool) {
	for _, r := range rs.list {
		if r.Issuer == issuer && r.ClientID == clientID {
			return r.clone(), true
		}
	}
	return Registration{}, false
}

// Owning returns the registrations of issuer that hold deploymentID, or
// all of issuer's when deploymentID is empty: those that can own a login
// which names no client_id.
func (rs Registrations) Owning(issuer, deploymentID string) []Registration {
	var out []Registration
	for _, r := range rs.list {
		if r.Issuer == issuer && (deploymentID == "" || r.HasDeployment(deploymentID)) {
			out = append(out, r.clone())
		}
	}
	return out
}

// CanAdd reports why a registration of (issuer, clientID) cannot be added
// as things stand: one of these has the pair, or there are
// MaxRegistrations. Checked before the pair is reserved.
func (rs Registrations) CanAdd(issuer, clientID string) error {
	if _, ok := rs.For(issuer, clientID); ok {
		return ErrRegistrationTaken
	}
	if len(rs.list) >= MaxRegistrations {
		return ErrTooManyRegistrations
	}
	return nil
}

// Add adds the registration r with the id given (the caller reserved its
// (issuer, client id) pair for it) and returns it.
func (rs *Registrations) Add(id string, r NewRegistration, urls URLPolicy, now time.Time) (Registration, error) {
	if err := CheckNewRegistration(r, urls); err != nil {
		return Registration{}, err
	}
	if err := rs.CanAdd(r.Issuer, r.ClientID); err != nil {
		return Registration{}, err
	}
	reg := Registration{
		ID:            id,
		Issuer:        r.Issuer,
		ClientID:      r.ClientID,
		DeploymentIDs: slices.Clone(r.DeploymentIDs),
		AuthLoginURL:  r.AuthLoginURL,
		JWKSURL:       r.JWKSURL,
		CreatedAt:     now,
		UpdatedAt:     now,
	}
	if reg.DeploymentIDs == nil {
		reg.DeploymentIDs = []string{}
	}
	if r.AuthTokenURL != nil {
		reg.AuthTokenURL = *r.AuthTokenURL
	}
	rs.list = append(slices.Clone(rs.list), reg)
	return reg.clone(), nil
}

// Remove removes the registration id and returns it.
func (rs *Registrations) Remove(id string) (Registration, error) {
	i, err := rs.index(id)
	if err != nil {
		return Registration{}, err
	}
	removed := rs.list[i]
	rs.list = slices.Delete(slices.Clone(rs.list), i, i+1)
	return removed.clone(), nil
}

// AddDeployment adds deploymentID to the registration id and returns it.
// An id already there changes nothing: added is false, and the call is
// safe to repeat.
func (rs *Registrations) AddDeployment(id, deploymentID string, now time.Time) (r Registration, added bool, err error) {
	if err := CheckDeploymentID(deploymentID); err != nil {
		return Registration{}, false, err
	}
	i, err := rs.index(id)
	if err != nil {
		return Registration{}, false, err
	}
	switch reg := rs.list[i]; {
	case reg.HasDeployment(deploymentID):
		return reg.clone(), false, nil
	case len(reg.DeploymentIDs) >= MaxDeployments:
		return Registration{}, false, ErrTooManyDeployments
	}
	return rs.changeDeployments(i, now, func(ids []string) []string { return append(ids, deploymentID) }), true, nil
}

// RemoveDeployment removes deploymentID from the registration id and
// returns the registration as it now is.
func (rs *Registrations) RemoveDeployment(id, deploymentID string, now time.Time) (Registration, error) {
	i, err := rs.index(id)
	if err != nil {
		return Registration{}, err
	}
	at := slices.Index(rs.list[i].DeploymentIDs, deploymentID)
	if at < 0 {
		return Registration{}, ErrDeploymentNotFound
	}
	return rs.changeDeployments(i, now, func(ids []string) []string { return slices.Delete(ids, at, at+1) }), nil
}

// changeDeployments sets the deployment ids of registration i to change's
// answer on a copy of them, and returns the registration as it now is.
func (rs *Registrations) changeDeployments(i int, now time.Time, change func([]string) []string) Registration {
	rs.list = slices.Clone(rs.list)
	reg := &rs.list[i]
	reg.DeploymentIDs = change(slices.Clone(reg.DeploymentIDs))
	reg.UpdatedAt = now
	return reg.clone()
}

// index is the index of registration id.
func (rs Registrations) index(id string) (int, error) {
	i := slices.IndexFunc(rs.list, func(r Registration) bool { return r.ID == id })
	if i < 0 {
		return -1, ErrRegistrationNotFound
	}
	return i, nil
}

// violations collects the fields a check refuses, as the workspace
// domain's checks do.
type violations []fault.FieldViolation

func (v *violations) add(field, description string) {
	*v = append(*v, fault.FieldViolation{Field: field, Description: description})
}

// err returns nil when nothing was recorded, else a fault.Invalid error.
func (v violations) err() error { return fault.InvalidFields(v) }
