package portal

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// keysPath lists the workspace's key pairs.
const keysPath = "/portal/keys"

// keyPath is the path of an action on the key pair appKey.
func keyPath(appKey, action string) string {
	return keysPath + "/" + url.PathEscape(appKey) + "/" + action
}

// restAccessTag is the tag that makes a key pair a server pair, which may
// call the REST routes; a pair without it is an LTI 1.1 pair (the workspace
// service's domain.RESTAccessTag).
var restAccessTag = &workspacev1.Tag{Key: "allow-rest-api-access", Type: "string", Value: "TRUE"}

// keyPair is a key pair as the pages show it: never its secret.
type keyPair struct {
	Name, AppKey, Role         string
	LTI                        bool
	Created, Expires, LastUsed string
	RotatePath, RevokePath     string
}

func showKey(k *workspacev1.KeyPair) keyPair {
	lti := !slices.ContainsFunc(k.GetTags(), func(t *workspacev1.Tag) bool { return proto.Equal(t, restAccessTag) })
	role := "Server (REST API access)"
	if lti {
		role = "LTI 1.1 (launches only)"
	}
	return keyPair{
		Name: k.GetName(), AppKey: k.GetAppKey(), LTI: lti, Role: role,
		Created: k.GetCreateTime(), Expires: k.GetExpireTime().GetValue(), LastUsed: k.GetLastUseTime().GetValue(),
		RotatePath: keyPath(k.GetAppKey(), "rotate"), RevokePath: keyPath(k.GetAppKey(), "revoke"),
	}
}

// listKeys reads the workspace's key pairs, or answers why it cannot.
func (p *portal) listKeys(w http.ResponseWriter, r *http.Request, s *session) ([]keyPair, bool) {
	list, err := p.service.ListWorkspaceKeys(r.Context(), &workspacev1.ListWorkspaceKeysRequest{Id: s.id()})
	if err != nil {
		p.fail(w, r, s, err, "")
		return nil, false
	}
	keys := make([]keyPair, 0, len(list.GetKeys()))
	for _, k := range list.GetKeys() {
		keys = append(keys, showKey(k))
	}
	return keys, true
}

// keys lists the key pairs: what they are for, when made, when they end
// and were last used, never a secret.
func (p *portal) keys(w http.ResponseWriter, r *http.Request, s *session) {
	keys, ok := p.listKeys(w, r, s)
	if !ok {
		return
	}
	v := newView(r, s, "Key pairs", "keys", keys)
	v.Notice = notice(r)
	p.render(w, r, http.StatusOK, "keys", v)
}

// lti11View is the LTI 1.1 page.
type lti11View struct {
	Fields []field
	Keys   []lti11Key
}

// lti11Key is an LTI pair on the LTI 1.1 page: its consumer key to copy.
type lti11Key struct {
	Key           keyPair
	ConsumerField field
}

// lti11 shows the LTI 1.1 values: the configuration and launch URLs and
// the LTI pairs' consumer keys. Their secrets are never shown again.
func (p *portal) lti11(w http.ResponseWriter, r *http.Request, s *session) {
	c, err := p.service.GetLtiConfiguration(r.Context(), &workspacev1.GetLtiConfigurationRequest{WorkspaceId: s.id()})
	if err != nil {
		p.fail(w, r, s, err, "")
		return
	}
	keys, ok := p.listKeys(w, r, s)
	if !ok {
		return
	}
	v := lti11View{}
	if config := c.GetLti11ConfigurationUrl(); config != "" {
		v.Fields = append(v.Fields, field{ID: "config-url", Label: "Configuration URL", Value: config,
			Help: "The tool's configuration (XML): Canvas's By URL, or any LMS that imports a cartridge."})
	}
	v.Fields = append(v.Fields, field{ID: "launch-url", Label: "Launch URL", Value: c.GetLaunchUrl(),
		Help: "Also called the tool URL: where the LMS sends launches."})
	for _, k := range keys {
		if k.LTI {
			v.Keys = append(v.Keys, lti11Key{Key: k, ConsumerField: field{ID: "consumer-key-" + k.AppKey, Label: "Consumer key", Value: k.AppKey}})
		}
	}
	p.render(w, r, http.StatusOK, "lti11", newView(r, s, "LTI 1.1", "lti11", v))
}

// overlap is a choice of how long a rotated pair keeps working.
type overlap struct {
	Seconds int
	Label   string
	Default bool
}

// overlaps are the choices the rotation form offers, within the service's
// 0 to 7 days.
var overlaps = []overlap{
	{Seconds: 0, Label: "End it at once"},
	{Seconds: 3600, Label: "1 hour"},
	{Seconds: 86400, Label: "24 hours", Default: true},
	{Seconds: 604800, Label: "7 days"},
}

// rotateView asks before rotating a pair.
type rotateView struct {
	Key      keyPair
	Overlaps []overlap
}

// findKey reads the key pair the path names, or answers why it cannot.
func (p *portal) findKey(w http.ResponseWriter, r *http.Request, s *session) (keyPair, bool) {
	keys, ok := p.listKeys(w, r, s)
	if !ok {
		return keyPair{}, false
	}
	i := slices.IndexFunc(keys, func(k keyPair) bool { return k.AppKey == r.PathValue("key") })
	if i < 0 {
		p.refusePage(w, r, s, httperr.New(fault.NotFound, "The workspace has no key pair with this app key.", "", 0), headingRefused, keysPath)
		return keyPair{}, false
	}
	return keys[i], true
}

// confirmRotateKey asks before rotating the pair, and for how long the
// current pair keeps working.
func (p *portal) confirmRotateKey(w http.ResponseWriter, r *http.Request, s *session) {
	k, ok := p.findKey(w, r, s)
	if !ok {
		return
	}
	p.render(w, r, http.StatusOK, "rotate", newView(r, s, "Rotate the key pair "+k.Name+"?", "keys", rotateView{Key: k, Overlaps: overlaps}))
}

// rotatedView shows a rotation's successor, its secret once.
type rotatedView struct {
	Name               string
	LTI                bool
	Fields             []field
	PreviousAppKey     string
	PreviousExpireTime string
}

// rotateKey rotates the pair and shows the successor's secret, once: the
// page is answered, not redirected to, and never stored.
func (p *portal) rotateKey(w http.ResponseWriter, r *http.Request, s *session) {
	seconds, err := strconv.Atoi(r.PostForm.Get("overlap"))
	if err != nil || !slices.ContainsFunc(overlaps, func(o overlap) bool { return o.Seconds == seconds }) {
		p.refuse(w, r, s, fault.Invalid, "Choose how long the current key pair keeps working.")
		return
	}
	rotated, err := p.service.RotateWorkspaceKey(r.Context(), &workspacev1.RotateWorkspaceKeyRequest{
		Id: s.id(), AppKey: r.PathValue("key"), ExpireAfter: durationpb.New(time.Duration(seconds) * time.Second),
	})
	if err != nil {
		p.fail(w, r, s, err, keysPath)
		return
	}
	next, previous := rotated.GetSuccessor(), rotated.GetPrevious()
	v := rotatedView{
		Name: next.GetName(), LTI: showKey(next).LTI,
		PreviousAppKey: previous.GetAppKey(), PreviousExpireTime: previous.GetExpireTime().GetValue(),
	}
	keyLabel, secretLabel := "App key", "App secret"
	if v.LTI {
		keyLabel, secretLabel = "Consumer key", "Shared secret"
	}
	v.Fields = []field{
		{ID: "app-key", Label: keyLabel, Value: next.GetAppKey()},
		{ID: "app-secret", Label: secretLabel, Value: next.GetAppSecret(), Help: "Shown this once: copy it now."},
	}
	p.render(w, r, http.StatusOK, "rotated", newView(r, s, "The key pair "+v.Name+" is rotated", "keys", v))
}

// confirmRevokeKey asks before revoking the pair.
func (p *portal) confirmRevokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	k, ok := p.findKey(w, r, s)
	if !ok {
		return
	}
	text := []string{
		"The key pair " + k.Name + " (" + k.AppKey + ") stops working at once, everywhere, and cannot be brought back.",
		"Whatever still uses it is refused from then on.",
	}
	if k.LTI {
		text[1] = "LMS launches signed with its consumer key are refused from then on: remove the LTI 1.1 tool from the LMS first."
	}
	p.render(w, r, http.StatusOK, "confirm", newView(r, s, "Revoke the key pair "+k.Name+"?", "keys", confirmView{
		Text: text, Action: k.RevokePath, Button: "Revoke the key pair", Back: keysPath,
	}))
}

// revokeKey revokes the pair.
func (p *portal) revokeKey(w http.ResponseWriter, r *http.Request, s *session) {
	if _, err := p.service.RevokeWorkspaceKey(r.Context(), &workspacev1.RevokeWorkspaceKeyRequest{Id: s.id(), AppKey: r.PathValue("key")}); err != nil {
		p.fail(w, r, s, err, keysPath)
		return
	}
	seeOther(w, r, keysPath, "key-revoked")
}
