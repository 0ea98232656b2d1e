package portal

import (
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/liveproctor/workspaces/gateway/internal/httperr"
	"github.com/liveproctor/workspaces/pkg/fault"
	restv1 "github.com/liveproctor/workspaces/pkg/gen/rest/v1"
	workspacev1 "github.com/liveproctor/workspaces/pkg/gen/workspace/v1"
)

// registrationsPath is the list of the workspace's LTI 1.3 registrations.
const registrationsPath = "/portal/registrations"

// registrationPath is one registration's page.
func registrationPath(id string) string { return registrationsPath + "/" + url.PathEscape(id) }

// registrations lists the workspace's LTI 1.3 registrations with their
// launch health.
func (p *portal) registrations(w http.ResponseWriter, r *http.Request, s *session) {
	list, err := p.service.ListLtiRegistrations(r.Context(), &workspacev1.ListLtiRegistrationsRequest{Id: s.id()})
	if err != nil {
		p.fail(w, r, s, err, "")
		return
	}
	v := newView(r, s, "LTI 1.3 registrations", "registrations", list.GetRegistrations())
	v.Notice = notice(r)
	p.render(w, r, http.StatusOK, "registrations", v)
}

// registration shows one registration: its endpoints, deployments and
// launch health, and the forms that change it.
func (p *portal) registration(w http.ResponseWriter, r *http.Request, s *session) {
	reg, ok := p.loadRegistration(w, r, s)
	if !ok {
		return
	}
	v := newView(r, s, "Registration of "+reg.GetIssuer(), "registrations", reg)
	v.Notice = notice(r)
	p.render(w, r, http.StatusOK, "registration", v)
}

// newRegistrationView is the form that registers a platform by hand, with
// what was entered when the service refused it.
type newRegistrationView struct {
	Issuer, ClientID, DeploymentIDs, LoginURL, JWKSURL, TokenURL string
	// Refused is the service's message, Problems the fields it blamed.
	Refused  string
	Problems []problem
}

// problem is a field the service blamed, named by the form's label.
type problem struct{ Label, Description string }

// formLabels are the form's labels of the fields the service names (by
// their JSON names, a deployment id with its index).
var formLabels = map[string]string{
	"issuer": "Issuer", "clientId": "Client ID", "deploymentIds": "Deployment IDs",
	"authLoginUrl": "Login URL", "jwksUrl": "JWKS URL", "authTokenUrl": "Token URL",
}

// problems names the fields the service blamed as the form does.
func problems(violations []*restv1.FieldViolation) []problem {
	out := make([]problem, 0, len(violations))
	for _, v := range violations {
		name, _, _ := strings.Cut(v.GetField(), "[")
		label, ok := formLabels[name]
		if !ok {
			label = v.GetField()
		}
		out = append(out, problem{Label: label, Description: v.GetDescription()})
	}
	return out
}

// newRegistration shows the form that registers a platform by hand, for
// the LMSs without Dynamic Registration.
func (p *portal) newRegistration(w http.ResponseWriter, r *http.Request, s *session) {
	p.render(w, r, http.StatusOK, "registration_new", newView(r, s, "Register a platform by hand", "registrations", newRegistrationView{}))
}

// createRegistration registers the platform the form names. A refusal
// shows the form again, as entered, with the service's reasons.
func (p *portal) createRegistration(w http.ResponseWriter, r *http.Request, s *session) {
	form := newRegistrationView{
		Issuer: r.PostForm.Get("issuer"), ClientID: r.PostForm.Get("client_id"),
		DeploymentIDs: r.PostForm.Get("deployment_ids"), LoginURL: r.PostForm.Get("auth_login_url"),
		JWKSURL: r.PostForm.Get("jwks_url"), TokenURL: r.PostForm.Get("auth_token_url"),
	}
	req := &workspacev1.CreateLtiRegistrationRequest{
		Id: s.id(), Issuer: strings.TrimSpace(form.Issuer), ClientId: strings.TrimSpace(form.ClientID),
		DeploymentIds: lines(form.DeploymentIDs),
		AuthLoginUrl:  strings.TrimSpace(form.LoginURL), JwksUrl: strings.TrimSpace(form.JWKSURL),
	}
	if token := strings.TrimSpace(form.TokenURL); token != "" {
		req.AuthTokenUrl = &token
	}
	reg, err := p.service.CreateLtiRegistration(r.Context(), req)
	if err != nil {
		if !slices.Contains(formRefusals, httperr.Read(err).Kind) {
			p.fail(w, r, s, err, registrationsPath+"/new")
			return
		}
		a, _ := p.answer(r, err)
		form.Refused, form.Problems = a.Message, problems(a.Details)
		if len(form.Problems) > 0 {
			// The service's message names its fields by the API's
			// names; the list names them as the form does.
			form.Refused = msgFixFields
		}
		p.render(w, r, a.Status, "registration_new", newView(r, s, "Register a platform by hand", "registrations", form))
		return
	}
	seeOther(w, r, registrationPath(reg.GetId()), "registration-created")
}

// msgFixFields heads the list of the fields the service blamed.
const msgFixFields = "The platform was not registered: correct these fields and send the form again."

// formRefusals are the refusals of a registration that the form, filled
// in again, can fix: a value, a pair registered already, a bound reached.
var formRefusals = []fault.Kind{fault.Invalid, fault.Conflict, fault.FailedPrecondition}

// lines are the non-empty lines of a text area, trimmed: the deployment
// ids, one a line. Commas separate them too, since no LMS puts one in
// its deployment ids.
func lines(text string) []string {
	var out []string
	for _, line := range strings.FieldsFunc(text, func(c rune) bool { return c == '\n' || c == '\r' || c == ',' }) {
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// addDeployment adds the form's deployment id to the registration.
func (p *portal) addDeployment(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("registration")
	_, err := p.service.AddLtiDeployment(r.Context(), &workspacev1.AddLtiDeploymentRequest{
		Id: s.id(), RegistrationId: id, DeploymentId: strings.TrimSpace(r.PostForm.Get("deployment")),
	})
	if err != nil {
		p.fail(w, r, s, err, registrationPath(id))
		return
	}
	seeOther(w, r, registrationPath(id), "deployment-added")
}

// confirmView is a page that asks before a change that cannot be undone.
type confirmView struct {
	// Text says what the change does.
	Text []string
	// Action is where the form posts, Hidden its fields beside the CSRF
	// token, Button the button's words; Back the way out.
	Action string
	Hidden []hiddenField
	Button string
	Back   string
}

type hiddenField struct{ Name, Value string }

// confirmRemoveDeployment asks before removing the deployment id the
// query names.
func (p *portal) confirmRemoveDeployment(w http.ResponseWriter, r *http.Request, s *session) {
	reg, ok := p.loadRegistration(w, r, s)
	if !ok {
		return
	}
	deployment := r.URL.Query().Get("deployment")
	if !slices.Contains(reg.GetDeploymentIds(), deployment) {
		p.refusePage(w, r, s, httperr.New(fault.NotFound, "The registration has no such deployment id.", "", 0), headingRefused, registrationPath(reg.GetId()))
		return
	}
	p.render(w, r, http.StatusOK, "confirm", newView(r, s, "Remove deployment "+deployment+"?", "registrations", confirmView{
		Text: []string{
			"Launches from the deployment " + deployment + " of " + reg.GetIssuer() + " (client " + reg.GetClientId() + ") will be refused from then on.",
			"Add it again at any time to accept them again.",
		},
		Action: registrationPath(reg.GetId()) + "/deployments/remove",
		Hidden: []hiddenField{{Name: "deployment", Value: deployment}},
		Button: "Remove the deployment",
		Back:   registrationPath(reg.GetId()),
	}))
}

// removeDeployment removes the form's deployment id.
func (p *portal) removeDeployment(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("registration")
	_, err := p.service.RemoveLtiDeployment(r.Context(), &workspacev1.RemoveLtiDeploymentRequest{
		Id: s.id(), RegistrationId: id, DeploymentId: r.PostForm.Get("deployment"),
	})
	if err != nil {
		p.fail(w, r, s, err, registrationPath(id))
		return
	}
	seeOther(w, r, registrationPath(id), "deployment-removed")
}

// confirmDeleteRegistration asks before deleting the registration.
func (p *portal) confirmDeleteRegistration(w http.ResponseWriter, r *http.Request, s *session) {
	reg, ok := p.loadRegistration(w, r, s)
	if !ok {
		return
	}
	p.render(w, r, http.StatusOK, "confirm", newView(r, s, "Delete the registration of "+reg.GetIssuer()+"?", "registrations", confirmView{
		Text: []string{
			"Every launch from " + reg.GetIssuer() + " with client id " + reg.GetClientId() + " will be refused from then on.",
			"To connect the platform again, register it again: by Dynamic Registration, or by hand.",
		},
		Action: registrationPath(reg.GetId()) + "/delete",
		Button: "Delete the registration",
		Back:   registrationPath(reg.GetId()),
	}))
}

// deleteRegistration deletes the registration.
func (p *portal) deleteRegistration(w http.ResponseWriter, r *http.Request, s *session) {
	id := r.PathValue("registration")
	if _, err := p.service.DeleteLtiRegistration(r.Context(), &workspacev1.DeleteLtiRegistrationRequest{Id: s.id(), RegistrationId: id}); err != nil {
		p.fail(w, r, s, err, registrationPath(id))
		return
	}
	seeOther(w, r, registrationsPath, "registration-deleted")
}

// loadRegistration reads the registration the path names, or answers why
// it cannot.
func (p *portal) loadRegistration(w http.ResponseWriter, r *http.Request, s *session) (*workspacev1.LtiRegistration, bool) {
	reg, err := p.service.GetLtiRegistration(r.Context(), &workspacev1.GetLtiRegistrationRequest{Id: s.id(), RegistrationId: r.PathValue("registration")})
	if err != nil {
		p.fail(w, r, s, err, registrationsPath)
		return nil, false
	}
	return reg, true
}
