package app

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/liveproctor/workspaces/pkg/clip"
	"github.com/liveproctor/workspaces/pkg/fault"
	"github.com/liveproctor/workspaces/pkg/ident"
	"github.com/liveproctor/workspaces/services/workspace/internal/domain"
)

// The roster's bounds.
const (
	// MembersPageSizeMax and MembersPageSizeDefault bound a page of members
	// (and the NRPS limit asked of the platform).
	MembersPageSizeMax     = 500
	MembersPageSizeDefault = 100
	// membersPlatformPages bounds the platform's pages one call reads,
	// however small (or empty) the platform makes them.
	membersPlatformPages = 10
	// memberRoleMax bounds the role filter's length.
	memberRoleMax = 256
	// ScopeMemberships is the NRPS 2.0 scope (§2.1) the roster's access
	// token is asked for.
	ScopeMemberships = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
)

// rosterRoles are the roles (LIS vocabulary, as LTI 1.3 §A.2 names them)
// whose launches may read their context's roster: an instructor or an
// administrator of the context, or of the institution.
var rosterRoles = []string{
	"http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
	"http://purl.imsglobal.org/vocab/lis/v2/membership#Administrator",
	"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor",
	"http://purl.imsglobal.org/vocab/lis/v2/institution/person#Administrator",
}

// Member is a member of a launch's context as the platform's Names and
// Role Provisioning service gives it.
type Member struct {
	UserID string
	Name   string
	Email  string
	Roles  []string
	Status string // Active when the platform says nothing (NRPS 2.0 §2.3)
}

// MembersPage is one page of a membership container; Next is its Link
// rel="next" URL as given, empty on the last page.
type MembersPage struct {
	Members []Member
	Next    string
}

// ErrTokenRefused is a platform's service refusing the access token
// (401): the token is dropped and asked for again, once.
var ErrTokenRefused = errors.New("the platform refused the access token")

// MembershipService reads a page of a context's memberships with an
// access token (adapters/platformnrps). Its errors are faults but for
// ErrTokenRefused: a 429 or 5xx Unavailable with the platform's
// Retry-After, anything else BadGateway.
type MembershipService interface {
	Members(ctx context.Context, pageURL, accessToken string) (MembersPage, error)
}

// MembersQuery is a page of a launch's roster the caller asks for.
type MembersQuery struct {
	Role      string // an NRPS role filter, passed on as given
	PageSize  int    // zero: MembersPageSizeDefault
	PageToken string
}

var errBadMembersPageToken = fault.InvalidField("pageToken",
	"is not a token from this list: pass nextPageToken unchanged, with the same launch and role")

// Roster reads the members of a launch's context from its platform
// (Names and Role Provisioning Services 2.0).
type Roster struct {
	ws       Workspaces
	records  LTI13LaunchStore
	tokens   *PlatformTokens
	service  MembershipService
	pageSeal Sealer
}

// NewRoster returns the roster's use case: tokens are the access tokens
// to platforms, pageSeal seals the page tokens (the service's secret box).
func NewRoster(ws Workspaces, records LTI13LaunchStore, tokens *PlatformTokens, service MembershipService, pageSeal Sealer) *Roster {
	notNil(ws, records, tokens, service, pageSeal)
	return &Roster{ws: ws, records: records, tokens: tokens, service: service, pageSeal: pageSeal}
}

// rosterPosition is where the next page starts, sealed in its page token:
// the platform's page URL (the memberships URL, or a Link rel="next" as
// given) and how many of its members were already answered. The role
// binds the token to its filter.
type rosterPosition struct {
	URL  string `json:"u"`
	Skip int    `json:"s,omitempty"`
	Role string `json:"r,omitempty"`
}

// Members returns a page of launch launchID's context members, for a
// launch of an instructor or administrator whose platform offered NRPS.
// One call reads platform pages, following their next links, until it has
// the page or membersPlatformPages were read.
func (r *Roster) Members(ctx context.Context, caller domain.Caller, id, launchID string, q MembersQuery) ([]Member, string, error) {
	size := q.PageSize
	switch {
	case size == 0:
		size = MembersPageSizeDefault
	case size < 1 || size > MembersPageSizeMax:
		return nil, "", fault.InvalidField("pageSize", "must be 1 to "+strconv.Itoa(MembersPageSizeMax))
	}
	if len(q.Role) > memberRoleMax {
		return nil, "", fault.InvalidField("role", "is over "+strconv.Itoa(memberRoleMax)+" characters")
	}
	w, err := r.ws.Managed(ctx, caller, id)
	if err != nil {
		return nil, "", err
	}
	notFound := fault.New(fault.NotFound, "LTI launch %q not found", clip.Runes(launchID, 64))
	if !ident.IsSecret(launchID) {
		return nil, "", notFound
	}
	launch, ok, err := r.records.Get(ctx, id, launchID)
	if err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", notFound
	}
	if !slices.ContainsFunc(launch.Roles, func(role string) bool { return slices.Contains(rosterRoles, role) }) {
		return nil, "", fault.New(fault.PermissionDenied,
			"LTI launch %q is not an instructor's or administrator's: its roster is not for it", clip.Runes(launchID, 64))
	}
	base := launch.Services.MembershipsURL
	if base == "" {
		return nil, "", fault.New(fault.FailedPrecondition,
			"the platform offered no Names and Role Provisioning service with LTI launch %q", clip.Runes(launchID, 64))
	}
	reg, ok := w.LTIRegistrations().Get(launch.RegistrationID)
	if !ok {
		return nil, "", fault.New(fault.FailedPrecondition,
			"LTI registration %q of launch %q was removed", clip.Runes(launch.RegistrationID, 64), clip.Runes(launchID, 64))
	}
	at := rosterPosition{URL: firstMembersURL(base, q.Role, size), Role: q.Role}
	if q.PageToken != "" {
		if at, err = r.openPosition(launchID, base, q.PageToken); err != nil {
			return nil, "", err
		}
		if at.Role != q.Role {
			return nil, "", errBadMembersPageToken
		}
	}

	scopes := []string{ScopeMemberships}
	token, err := r.tokens.Token(ctx, reg, scopes)
	if err != nil {
		return nil, "", err
	}
	read := func(pageURL string) (MembersPage, error) {
		page, err := r.service.Members(ctx, pageURL, token.AccessToken)
		if !errors.Is(err, ErrTokenRefused) {
			return page, err
		}
		// The token died before its time (revoked, or the platform's clock):
		// drop it for every replica and try once with a new one.
		if err := r.tokens.Invalidate(ctx, reg, scopes, token); err != nil {
			return MembersPage{}, err
		}
		if token, err = r.tokens.Token(ctx, reg, scopes); err != nil {
			return MembersPage{}, err
		}
		page, err = r.service.Members(ctx, pageURL, token.AccessToken)
		if errors.Is(err, ErrTokenRefused) {
			return MembersPage{}, fault.New(fault.BadGateway, "The platform refused the tool's new access token to its memberships.")
		}
		return page, err
	}

	members := make([]Member, 0, size)
	for range membersPlatformPages {
		page, err := read(at.URL)
		if err != nil {
			return nil, "", err
		}
		rest := page.Members[min(at.Skip, len(page.Members)):]
		take := min(len(rest), size-len(members))
		members = append(members, rest[:take]...)
		switch {
		case take < len(rest):
			at.Skip += take
		case page.Next == "":
			return members, "", nil
		default:
			if !sameOrigin(page.Next, base) {
				return nil, "", fault.New(fault.BadGateway,
					"The platform's next page of members is on another host than its memberships URL: %s", clip.Runes(page.Next, 200))
			}
			at.URL, at.Skip = page.Next, 0
		}
		if len(members) == size {
			break
		}
	}
	next, err := r.sealPosition(launchID, at)
	return members, next, err
}

// firstMembersURL is the memberships URL with the role filter and the
// limit (NRPS 2.0 §2.4, §2.5) appended, its own query kept byte for byte.
func firstMembersURL(base, role string, size int) string {
	// A fragment is never sent: the query goes before it, or a platform
	// writing one would get neither the limit nor the role.
	base, _, _ = strings.Cut(base, "#")
	extra := url.Values{"limit": {strconv.Itoa(size)}}
	if role != "" {
		extra.Set("role", role)
	}
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	return base + sep + extra.Encode()
}

// sameOrigin reports whether u has base's scheme, host and port: the only
// pages a token (sealed or not) may send the service to.
func sameOrigin(u, base string) bool {
	a, err := url.Parse(u)
	b, berr := url.Parse(base)
	return err == nil && berr == nil && a.IsAbs() && strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Host, b.Host)
}

// pageLabel binds a page token to its launch.
func pageLabel(launchID string) string { return "lti-nrps-page:" + launchID }

// sealPosition is the page token of at: sealed by the service's secret
// box for this launch, so that a caller can neither read nor forge the
// platform URL it carries.
func (r *Roster) sealPosition(launchID string, at rosterPosition) (string, error) {
	b, err := json.Marshal(at)
	if err != nil {
		return "", err
	}
	sealed, err := r.pageSeal.Seal(pageLabel(launchID), string(b))
	if err != nil {
		return "", err
	}
	return base64.RawURLEncoding.EncodeToString(sealed), nil
}

// openPosition reads a page token sealPosition made for this launch.
func (r *Roster) openPosition(launchID, base, token string) (rosterPosition, error) {
	refused := errBadMembersPageToken
	sealed, err := base64.RawURLEncoding.DecodeString(token)
	if err != nil {
		return rosterPosition{}, refused
	}
	plain, err := r.pageSeal.Open(pageLabel(launchID), sealed)
	if err != nil {
		return rosterPosition{}, refused
	}
	var at rosterPosition
	if json.Unmarshal([]byte(plain), &at) != nil || at.Skip < 0 || !sameOrigin(at.URL, base) {
		return rosterPosition{}, refused
	}
	return at, nil
}
