package lti

import (
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	authv1 "github.com/liveproctor/workspaces/pkg/gen/auth/v1"
)

// Launches without third-party cookies. An LMS frames the tool on another
// site, where a browser may keep no cookie of the tool's at all; three
// ways carry a login's state from the login to the launch, in order:
//
//   - the platform's storage (1EdTech "Client Side postMessage Storage"),
//     when the login initiation names lti_storage_target: the login page
//     puts state_<state> and nonce_<nonce> in the platform's frame with
//     lti.put_data and then goes to the authorization endpoint; the launch
//     page reads them back with lti.get_data and posts them with the
//     launch to the launch URL. No cookie is set. Replies must come from
//     the origin of the registration's authorization endpoint and answer a
//     message this page sent; any other reply stops the launch;
//   - the Partitioned state cookie (StateCookie), when the frame keeps
//     cookies: a framed login page checks that with a probe cookie first;
//   - else a page with a link that opens the same login initiation in a
//     new window (target="_blank"), where the tool is the first party and
//     its cookie works; the launch completes there. Before offering it,
//     the page asks the platform (lti.capabilities) whether it has
//     storage after all, and if so starts the login again with it.
//
// Either way a launch is accepted in the browser that started its login
// only, once: the workspace service takes the state when it checks it.

// Form fields the launch page posts with the launch: what it read back
// from the platform's storage.
const (
	fieldStorageState = "lti_storage_state"
	fieldStorageNonce = "lti_storage_nonce"
)

// paramStorageTarget is the login initiation's parameter naming the
// platform's storage frame.
const paramStorageTarget = "lti_storage_target"

// paramStorageFailed marks the login a storage login starts again when
// the platform's storage did not answer: its page does not ask the
// platform for storage again (lti.capabilities), which would loop.
const paramStorageFailed = "lti1p3_storage_failed"

// probeCookieName is the cookie a framed login page sets and reads back to
// learn whether the frame keeps cookies. It holds nothing.
const probeCookieName = "lti1p3_probe"

// probeCookie is Partitioned like the state cookie, and readable by the
// page's script (not HttpOnly), for a minute.
func probeCookie() *http.Cookie {
	return &http.Cookie{
		Name: probeCookieName, Value: "1", Path: LTI13LoginPath, MaxAge: 60,
		Secure: true, SameSite: http.SameSiteNoneMode, Partitioned: true,
	}
}

// tokenNonce reads the nonce claim of an id_token without verifying it:
// the launch page reads nonce_<nonce> back, and the workspace service
// holds what it read to the login's nonce. Empty when unreadable.
func tokenNonce(idToken string) string {
	parts := strings.Split(idToken, ".")
	if len(parts) != 3 {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims struct {
		Nonce string `json:"nonce"`
	}
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	return claims.Nonce
}

// framed reports whether a browser loads r in a frame (Fetch Metadata),
// where the tool's cookies may be blocked: an LMS frames it on another
// site, and a login this gateway's own page starts again (same-origin)
// is still in that frame.
func framed(r *http.Request) bool {
	dest := r.Header.Get("Sec-Fetch-Dest")
	return dest == "iframe" || dest == "frame"
}

// hasParam reports whether params has one named name.
func hasParam(params []*authv1.LtiParameter, name string) bool {
	for _, p := range params {
		if p.GetName() == name {
			return true
		}
	}
	return false
}

// sameOriginPost reports whether r was posted by a page of this origin
// (Fetch Metadata): the launch page's post of what it read from storage
// is accepted from there only, so another site cannot post a state and
// its "stored" values itself.
func sameOriginPost(r *http.Request) bool {
	return r.Header.Get("Sec-Fetch-Site") == "same-origin"
}

// storageView is what the storage pages' script reads from #lti-storage.
type storageView struct {
	// Mode is "login" (put the state and nonce, then go to Redirect),
	// "probe" (go to Redirect if the probe cookie is kept, else offer a
	// new window) or "launch" (read them back and post the launch).
	Mode           string
	Target, Origin string // the storage frame and its origin
	State, Nonce   string
	Redirect       string // the authorization endpoint, with the request
	Fallback       string // the login initiation without storage
	IDToken        string // launch: posted back with the state
	Action         string // launch: LTI13LaunchPath
	ProbeCookie    string // probe: the probe cookie's name
	// Capabilities, in probe mode, asks the platform for storage before
	// offering a new window.
	Capabilities bool
}

// writeStoragePage answers one of the storage pages (200, not cached),
// whose inline script the Content-Security-Policy allows by its hash.
func writeStoragePage(w http.ResponseWriter, v storageView) {
	header := pageHeaders(w)
	header.Set("Content-Security-Policy", storageCSP)
	header.Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_ = storagePage.Execute(w, v)
}

// loginWithoutStorage is the login initiation params made again as a GET
// of the login URL (relative), without lti_storage_target: what a new
// window opens, and where a login whose storage failed starts over.
func loginWithoutStorage(params []*authv1.LtiParameter) string {
	var q strings.Builder
	for _, p := range params {
		if p.GetName() == paramStorageTarget {
			continue
		}
		if q.Len() > 0 {
			q.WriteByte('&')
		}
		q.WriteString(url.QueryEscape(p.GetName()) + "=" + url.QueryEscape(p.GetValue()))
	}
	return LTI13LoginPath + "?" + q.String()
}

// storageCSP allows the storage pages' one inline script, and the launch
// page's form may post to this gateway.
var storageCSP = inlineScriptCSP(scriptSource(storageScript), "'self'")

// storagePage inserts storageScript as a value: html/template would
// rewrite it as template text (it drops comments), and the hash would no
// longer match.
var storagePage = template.Must(template.New("storage").Funcs(template.FuncMap{
	"storageScript": func() template.JS { return template.JS(storageScript) },
}).Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>LiveProctor: opening</title>
</head>
<body>
<main id="lti-storage" data-mode="{{.Mode}}" data-target="{{.Target}}" data-origin="{{.Origin}}" data-state="{{.State}}"
 data-nonce="{{.Nonce}}" data-redirect="{{.Redirect}}" data-fallback="{{.Fallback}}" data-probe-cookie="{{.ProbeCookie}}"
 data-capabilities="{{if .Capabilities}}on{{end}}">
<p id="wait">Opening LiveProctor…</p>
<div id="new-window" hidden>
<h1>Open LiveProctor in a new window</h1>
<p>This browser keeps no cookies for LiveProctor inside the LMS page, so it cannot open here.</p>
<p><a id="new-window-link" href="{{.Fallback}}" target="_blank" rel="noopener">Open LiveProctor in a new window</a></p>
</div>
<div id="refused" hidden>
<h1>LiveProctor could not open</h1>
<p id="reason"></p>
</div>
{{if eq .Mode "launch"}}<form id="launch" method="post" action="{{.Action}}">
<input type="hidden" name="id_token" value="{{.IDToken}}">
<input type="hidden" name="state" value="{{.State}}">
<input type="hidden" name="lti_storage_state" value="">
<input type="hidden" name="lti_storage_nonce" value="">
</form>{{end}}
</main>
<script>{{storageScript}}</script>
</body>
</html>
`))

// storageScript runs the storage pages (storageView's modes). Each
// postMessage request waits a few seconds for its reply; a reply to a
// request of this page must come from the platform's origin and carry the
// message_id of a request it sent, or the page stops with a refusal.
const storageScript = `
(function () {
  'use strict';
  var d = document.getElementById('lti-storage').dataset;
  // put_data and get_data wait 5 s; the capabilities a platform that
  // named no storage may still have, 1.5 s before the new window is
  // offered.
  var TIMEOUT = 5000, PROBE_TIMEOUT = 1500;
  var sent = {};
  function $(id) { return document.getElementById(id); }
  function refuse(reason) {
    $('wait').hidden = true;
    $('reason').textContent = reason;
    $('refused').hidden = false;
  }
  function offerNewWindow() {
    $('wait').hidden = true;
    $('new-window').hidden = false;
  }
  function newID() {
    var b = new Uint8Array(16);
    crypto.getRandomValues(b);
    return Array.prototype.map.call(b, function (x) { return (x + 256).toString(16).slice(1); }).join('');
  }
  function storageFrame(name) {
    if (name === '_parent') { return window.parent !== window ? window.parent : null; }
    if (name === '_top') { return window.top !== window ? window.top : null; }
    try { if (window.parent !== window && window.parent.frames[name]) { return window.parent.frames[name]; } } catch (e) {}
    try { if (window.opener && window.opener.frames[name]) { return window.opener.frames[name]; } } catch (e) {}
    return null;
  }
  // ask posts one message to frame and settles with its reply: rejected
  // with {tampered: true} for a reply from another origin than origin
  // (unless origin is '*') or to no message of this page.
  function ask(frame, origin, subject, fields, timeout) {
    return new Promise(function (resolve, reject) {
      var id = newID();
      var timer = setTimeout(function () { finish(); reject({ message: 'the LMS did not answer ' + subject }); }, timeout || TIMEOUT);
      function finish() { clearTimeout(timer); window.removeEventListener('message', listen); sent[id] = 'answered'; }
      function listen(event) {
        var m = event.data;
        if (!m || typeof m !== 'object' || m.subject !== subject + '.response') { return; }
        if (origin !== '*' && event.origin !== origin) {
          finish(); reject({ tampered: true, message: 'an answer to ' + subject + ' came from ' + event.origin + ', not from the LMS at ' + origin });
        } else if (m.message_id === id) {
          finish();
          if (m.error) { reject({ message: 'the LMS answered ' + subject + ' with an error: ' + (m.error.code || '') + ' ' + (m.error.message || '') }); } else { resolve(m); }
        } else if (sent[m.message_id] !== 'answered') {
          finish(); reject({ tampered: true, message: 'an answer to ' + subject + ' carries a message_id this page never sent' });
        }
      }
      sent[id] = 'sent';
      window.addEventListener('message', listen);
      var message = { subject: subject, message_id: id };
      for (var k in fields) { message[k] = fields[k]; }
      frame.postMessage(message, origin);
    });
  }
  function put(frame, key, value) {
    return ask(frame, d.origin, 'lti.put_data', { key: key, value: value }).then(function (m) {
      if (m.key !== key) { throw { tampered: true, message: 'the LMS stored another key than ' + key }; }
    });
  }
  function get(frame, key) {
    return ask(frame, d.origin, 'lti.get_data', { key: key }).then(function (m) {
      if (m.key !== key || typeof m.value !== 'string') { throw { message: 'the LMS has no ' + key.split('_')[0] + ' for this launch' }; }
      return m.value;
    });
  }
  function login() {
    var frame = storageFrame(d.target);
    if (!frame) { window.location.replace(d.fallback); return; }
    put(frame, 'state_' + d.state, d.state).then(function () {
      return put(frame, 'nonce_' + d.nonce, d.nonce);
    }).then(function () { window.location.replace(d.redirect); }, function (e) {
      if (e.tampered) { refuse('The launch was stopped: ' + e.message + '. Open the link again from the LMS.'); } else { window.location.replace(d.fallback); }
    });
  }
  function cookieKept() {
    try { return document.cookie.split('; ').indexOf(d.probeCookie + '=1') >= 0; } catch (e) { return false; }
  }
  function probe() {
    if (cookieKept()) { window.location.replace(d.redirect); return; }
    if (window.parent === window || !d.capabilities) { offerNewWindow(); return; }
    ask(window.parent, '*', 'lti.capabilities', {}, PROBE_TIMEOUT).then(function (m) {
      var found = (m.supported_messages || []).filter(function (s) { return s && s.subject === 'lti.put_data'; })[0];
      if (!found) { throw {}; }
      var sep = d.fallback.indexOf('?') >= 0 ? '&' : '?';
      window.location.replace(d.fallback + sep + 'lti_storage_target=' + encodeURIComponent(found.frame || '_parent'));
    }).catch(offerNewWindow);
  }
  function launch() {
    var frame = storageFrame(d.target);
    if (!frame) { refuse('This launch kept its state in the LMS page, which is not around it any more. Open the link again from the LMS.'); return; }
    var form = $('launch');
    get(frame, 'state_' + d.state).then(function (state) {
      form.elements.lti_storage_state.value = state;
      return d.nonce ? get(frame, 'nonce_' + d.nonce) : '';
    }).then(function (nonce) {
      form.elements.lti_storage_nonce.value = nonce;
      form.submit();
    }, function (e) {
      refuse('LiveProctor could not read this launch\'s state back from the LMS page (' + e.message + '). Open the link again from the LMS.');
    });
  }
  ({ login: login, probe: probe, launch: launch })[d.mode]();
})();
`
