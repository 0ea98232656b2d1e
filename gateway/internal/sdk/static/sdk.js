/*
 * WorkspaceSDK — the LiveProctor browser component, v1.
 *
 * Load it with a plain script tag; it needs no build step and no framework:
 *
 *   <script src="https://gateway.example/sdk/v1/sdk.js"></script>
 *   <div id="proctor"></div>
 *   <script>
 *     const lp = new WorkspaceSDK.LiveProctor('proctor', { auth: token });
 *     lp.on('expired', () => { ... });
 *     lp.init({ examConfigId: '0f8fad5b-d9cb-469f-a165-70867728950e' })
 *       .then((session) => { ... }, (err) => { console.log(err.code); });
 *   </script>
 *
 * window.WorkspaceSDK
 *   .version       the SDK's version string.
 *   .LiveProctor   the component constructor (callable with or without new).
 *
 * new WorkspaceSDK.LiveProctor(elementId, options)
 *   elementId          the id of the element to render into (an Element is
 *                      accepted too). It is looked up when init() runs.
 *   options.auth       the SDK token from POST /api/login/sdk ("auth").
 *   options.baseUrl    the gateway's URL; defaults to the origin this script
 *                      was loaded from. A trailing slash is ignored.
 *   options.recheckInterval
 *                      milliseconds between session re-checks while the
 *                      component is open (default 60000), so that a revoked
 *                      token is noticed.
 *
 * lp.init({ examConfigId }) → Promise<session>
 *   Checks the token with GET {baseUrl}/api/sdk/session (Authorization:
 *   Bearer, CORS, no cookies) and renders the session into the element:
 *     <div data-liveproctor="session">
 *       … <dd data-field="email">, data-field="workspaceId",
 *         data-field="examConfigId", data-field="expiresAt" …
 *     </div>
 *   Resolves with { email, workspaceId, examConfigId, expiresAt }.
 *   Rejects with an Error whose `code` is one of:
 *     'invalid_exam_config'  examConfigId is not a UUID (nothing is fetched);
 *     'element_not_found'    no element with that id;
 *     'invalid_token'        no token, or the gateway answered 401/403;
 *     'network'              the gateway could not be reached (or CORS refused);
 *     'rate_limited'         the gateway answered 429;
 *     'server_error'         any other answer (err.status holds the HTTP status);
 *     'invalid_response'     the answer was not a session;
 *     'aborted'              destroy() or a newer init() superseded this one;
 *     'destroyed'            init() after destroy().
 *   Errors from the gateway also carry err.status and err.requestId.
 *   On failure the element holds no session, only a short
 *   <div data-liveproctor="error"> message.
 *
 * lp.on(name, handler) / lp.off(name, handler) → lp
 *   'ready'    detail: the session, after init() succeeded;
 *   'error'    detail: the Error, whenever init() fails;
 *   'expired'  detail: the session, when expiresAt passes or a re-check is
 *              answered 401 (token expired or revoked). The element then has
 *              data-liveproctor-state="expired" and timers stop.
 *   Handlers get the detail as their only argument. The element also
 *   receives bubbling DOM CustomEvents 'liveproctor:ready',
 *   'liveproctor:error' and 'liveproctor:expired' with the same detail.
 *   The element's data-liveproctor-state is 'loading', 'ready', 'error' or
 *   'expired'.
 *
 * lp.destroy()
 *   Stops timers and pending requests, empties the element and forgets the
 *   handlers. A token may launch any number of components; they share
 *   nothing.
 */
(function (global) {
  'use strict';

  var VERSION = '1.0.0';
  var UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
  var DEFAULT_RECHECK_MS = 60000;
  // setTimeout fires at once for delays above 2^31-1 ms; longer waits re-arm.
  var MAX_TIMER_MS = 2147483647;

  // The origin this script came from, read while it is being executed.
  var scriptOrigin = (function () {
    try {
      var s = global.document && global.document.currentScript;
      if (s && s.src) {
        return new URL(s.src, global.location.href).origin;
      }
    } catch (e) { /* fall through */ }
    return global.location && global.location.origin !== 'null' ? global.location.origin : '';
  })();

  function sdkError(code, message, extra) {
    var err = new Error(message);
    err.name = 'LiveProctorError';
    err.code = code;
    if (extra) {
      Object.keys(extra).forEach(function (k) { err[k] = extra[k]; });
    }
    return err;
  }

  function trimSlash(url) {
    return String(url).replace(/\/+$/, '');
  }

  // Reports a handler's exception without breaking the component.
  function reportLater(e) {
    setTimeout(function () { throw e; }, 0);
  }

  function LiveProctor(elementId, options) {
    if (!(this instanceof LiveProctor)) {
      return new LiveProctor(elementId, options);
    }
    options = options || {};
    this._elementId = elementId;
    this._auth = typeof options.auth === 'string' ? options.auth.trim() : '';
    this._baseUrl = trimSlash(options.baseUrl != null && options.baseUrl !== '' ? options.baseUrl : scriptOrigin);
    var every = Number(options.recheckInterval);
    this._recheckMs = every > 0 ? every : DEFAULT_RECHECK_MS;
    this._handlers = {};
    this._element = null;
    this._session = null;
    this._expiryTimer = null;
    this._recheckTimer = null;
    this._pending = null; // { controller, reject } of the running init()
    this._destroyed = false;
  }

  LiveProctor.prototype.on = function (name, handler) {
    if (typeof handler !== 'function') {
      throw new TypeError('LiveProctor.on: handler must be a function');
    }
    (this._handlers[name] = this._handlers[name] || []).push(handler);
    return this;
  };

  LiveProctor.prototype.off = function (name, handler) {
    var list = this._handlers[name];
    if (list) {
      var i = list.lastIndexOf(handler);
      if (i >= 0) list.splice(i, 1);
    }
    return this;
  };

  LiveProctor.prototype._emit = function (name, detail) {
    (this._handlers[name] || []).slice().forEach(function (h) {
      try { h(detail); } catch (e) { reportLater(e); }
    });
    var el = this._element;
    if (el && typeof global.CustomEvent === 'function') {
      el.dispatchEvent(new global.CustomEvent('liveproctor:' + name, { detail: detail, bubbles: true }));
    }
  };

  LiveProctor.prototype._findElement = function () {
    var id = this._elementId;
    if (id && typeof id === 'object' && id.nodeType === 1) return id;
    if (typeof id !== 'string' || id === '') return null;
    return global.document.getElementById(id);
  };

  LiveProctor.prototype._stopTimers = function () {
    clearTimeout(this._expiryTimer);
    clearInterval(this._recheckTimer);
    this._expiryTimer = null;
    this._recheckTimer = null;
  };

  // _abort cancels a running init(), whose promise rejects with 'aborted'.
  LiveProctor.prototype._abort = function (why) {
    var p = this._pending;
    this._pending = null;
    if (p) {
      p.controller && p.controller.abort();
      p.reject(sdkError('aborted', why));
    }
  };

  function clear(el) {
    while (el.firstChild) el.removeChild(el.firstChild);
  }

  function setState(el, state) {
    if (!el) return;
    if (state) el.setAttribute('data-liveproctor-state', state);
    else el.removeAttribute('data-liveproctor-state');
  }

  function node(tag, attrs, text) {
    var n = global.document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { n.setAttribute(k, attrs[k]); });
    if (text != null) n.textContent = String(text);
    return n;
  }

  function renderSession(el, s) {
    clear(el);
    var box = node('div', { 'data-liveproctor': 'session', 'class': 'liveproctor-session' });
    box.appendChild(node('strong', { 'class': 'liveproctor-title' }, 'LiveProctor session'));
    var dl = node('dl', { 'class': 'liveproctor-fields' });
    [
      ['Email', 'email', s.email],
      ['Workspace', 'workspaceId', s.workspaceId],
      ['Exam config', 'examConfigId', s.examConfigId],
      ['Expires', 'expiresAt', s.expiresAt]
    ].forEach(function (row) {
      dl.appendChild(node('dt', null, row[0]));
      var dd = node('dd', { 'data-field': row[1] }, row[2]);
      if (row[1] === 'expiresAt') {
        var d = new Date(s.expiresAt);
        if (!isNaN(d.getTime())) dd.setAttribute('title', d.toLocaleString());
      }
      dl.appendChild(dd);
    });
    box.appendChild(dl);
    el.appendChild(box);
  }

  function renderError(el, err) {
    clear(el);
    el.appendChild(node('div', { 'data-liveproctor': 'error', 'role': 'alert', 'class': 'liveproctor-error' },
      'LiveProctor could not start: ' + err.message));
  }

  // fetchSession asks the gateway for the token's session. It resolves with
  // the session or rejects with an sdkError.
  LiveProctor.prototype._fetchSession = async function (signal) {
    var resp;
    try {
      resp = await global.fetch(this._baseUrl + '/api/sdk/session', {
        method: 'GET',
        mode: 'cors',
        credentials: 'omit',
        cache: 'no-store',
        headers: { 'Authorization': 'Bearer ' + this._auth, 'Accept': 'application/json' },
        signal: signal
      });
    } catch (e) {
      if (e && e.name === 'AbortError') throw sdkError('aborted', 'the session check was aborted');
      throw sdkError('network', 'the gateway could not be reached', { cause: e });
    }
    var body = null;
    try { body = await resp.json(); } catch (e) { body = null; }
    var requestId = resp.headers.get('X-Request-Id') ||
      (body && body.error && body.error.requestId) || undefined;
    if (!resp.ok) {
      var msg = body && body.error && typeof body.error.message === 'string' ? body.error.message : '';
      var extra = { status: resp.status, requestId: requestId };
      if (resp.status === 401 || resp.status === 403) {
        throw sdkError('invalid_token', msg || 'the token is not valid', extra);
      }
      if (resp.status === 429) {
        throw sdkError('rate_limited', msg || 'too many requests; retry later', extra);
      }
      throw sdkError('server_error', msg || 'the gateway answered HTTP ' + resp.status, extra);
    }
    if (!body || typeof body.email !== 'string' || typeof body.workspaceId !== 'string' ||
        typeof body.expiresAt !== 'string' || isNaN(Date.parse(body.expiresAt))) {
      throw sdkError('invalid_response', 'the gateway did not answer with a session', { status: resp.status, requestId: requestId });
    }
    return { email: body.email, workspaceId: body.workspaceId, expiresAt: body.expiresAt };
  };

  LiveProctor.prototype.init = function (params) {
    var self = this;
    if (self._destroyed) {
      return Promise.reject(sdkError('destroyed', 'this component was destroyed'));
    }
    self._abort('a newer init() replaced this one');
    self._stopTimers();
    self._session = null;

    return new Promise(function (resolve, reject) {
      var controller = typeof global.AbortController === 'function' ? new global.AbortController() : null;
      var mine = { controller: controller, reject: reject };
      self._pending = mine;

      function fail(err) {
        if (self._pending !== mine) return; // superseded: already rejected
        self._pending = null;
        var el = self._element;
        if (el) {
          renderError(el, err);
          setState(el, 'error');
        }
        self._emit('error', err);
        reject(err);
      }

      var examConfigId = params && typeof params.examConfigId === 'string' ? params.examConfigId.trim() : '';
      var el = self._findElement();
      self._element = el;
      if (!el) {
        fail(sdkError('element_not_found', 'no element with id "' + String(self._elementId) + '"'));
        return;
      }
      if (!UUID.test(examConfigId)) {
        fail(sdkError('invalid_exam_config', 'examConfigId must be a UUID such as 0f8fad5b-d9cb-469f-a165-70867728950e'));
        return;
      }
      if (!self._auth) {
        fail(sdkError('invalid_token', 'no auth token was given'));
        return;
      }
      clear(el);
      setState(el, 'loading');

      self._fetchSession(controller ? controller.signal : undefined).then(function (s) {
        if (self._pending !== mine) return;
        self._pending = null;
        var session = { email: s.email, workspaceId: s.workspaceId, examConfigId: examConfigId, expiresAt: s.expiresAt };
        self._session = session;
        renderSession(el, session);
        setState(el, 'ready');
        self._emit('ready', session);
        resolve(session);
        self._watch(session);
      }, fail);
    });
  };

  // _watch arms the expiry timer and the periodic re-check for session.
  LiveProctor.prototype._watch = function (session) {
    var self = this;
    if (self._session !== session) return; // destroyed or replaced meanwhile
    var at = Date.parse(session.expiresAt);
    function arm() {
      var wait = at - Date.now();
      if (wait <= 0) {
        self._expire(session);
        return;
      }
      self._expiryTimer = setTimeout(arm, Math.min(wait, MAX_TIMER_MS));
    }
    arm();
    if (self._session !== session) return; // already expired
    self._recheckTimer = setInterval(function () {
      if (self._session !== session) return;
      self._fetchSession().then(function (s) {
        // A renewed expiry moves the timer.
        if (self._session === session && s.expiresAt !== session.expiresAt) {
          session.expiresAt = s.expiresAt;
          at = Date.parse(s.expiresAt);
          var dd = self._element && self._element.querySelector('[data-field="expiresAt"]');
          if (dd) dd.textContent = s.expiresAt;
          clearTimeout(self._expiryTimer);
          arm();
        }
      }, function (err) {
        // Only a definite "no" expires the component; a network blip or an
        // unavailable gateway waits for the next check.
        if (err.code === 'invalid_token' && self._session === session) {
          self._expire(session);
        }
      });
    }, self._recheckMs);
  };

  LiveProctor.prototype._expire = function (session) {
    if (this._session !== session) return;
    this._session = null;
    this._stopTimers();
    var el = this._element;
    if (el) {
      setState(el, 'expired');
      var old = el.querySelector('[data-liveproctor="expired"]');
      if (!old) {
        el.appendChild(node('div', { 'data-liveproctor': 'expired', 'role': 'status', 'class': 'liveproctor-expired' },
          'The session has ended.'));
      }
    }
    this._emit('expired', session);
  };

  LiveProctor.prototype.destroy = function () {
    this._destroyed = true;
    this._abort('the component was destroyed');
    this._stopTimers();
    this._session = null;
    var el = this._element || this._findElement();
    if (el) {
      clear(el);
      setState(el, null);
    }
    this._element = null;
    this._handlers = {};
  };

  global.WorkspaceSDK = Object.freeze({ version: VERSION, LiveProctor: LiveProctor });
})(window);
