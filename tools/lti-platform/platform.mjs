// An LTI 1.3 platform for the e2e tests, on jose (panva), pinned in
// package.json: its JWS, JWT and JWKS code shares nothing with the tool's
// pkg/jose, so a launch that passes proves two implementations agree.
//
// It publishes a JWKS, answers the OIDC authorization request of the tool's
// login (1EdTech Security Framework 1.0 §5.1.1) with an id_token, receives
// Deep Linking 2.0 responses (making the gradebook column of a link that
// offers a lineItem), and serves a course page that embeds the tool
// in a cross-site iframe. Its LTI Advantage side issues access tokens for
// the tool's client assertions (/token), and serves line items and scores
// (AGS 2.0) and context memberships (NRPS 2.0). A control API under
// /control lets a test shape the next launch, rotate keys, break the JWKS,
// make the services fail, and read what happened.
//
//   node platform.mjs [--port 0] [--host 127.0.0.1] [--issuer URL] [--tool URL] [--clients JSON]
//
// (or LTI_PLATFORM_PORT, _HOST, _ISSUER, _TOOL, _CLIENTS). Once listening it
// prints one line, {"url": "http://127.0.0.1:PORT", "issuer": …}, and it
// exits when its stdin, if that is a pipe, closes: a parent that dies takes
// it along.

import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import { parseArgs } from 'node:util';
import * as jose from 'jose';

const LTI = 'https://purl.imsglobal.org/spec/lti/claim/';
const LTI_DL = 'https://purl.imsglobal.org/spec/lti-dl/claim/';
const AGS_CLAIM = 'https://purl.imsglobal.org/spec/lti-ags/claim/endpoint';
const NRPS_CLAIM = 'https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice';
const SCOPE = {
  lineitem: 'https://purl.imsglobal.org/spec/lti-ags/scope/lineitem',
  lineitemRead: 'https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly',
  resultRead: 'https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly',
  score: 'https://purl.imsglobal.org/spec/lti-ags/scope/score',
  memberships: 'https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly',
};
const ASSERTION_TYPE = 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer';
const ASSERTION_MAX_LIFETIME = 300; // seconds from iat to exp (RFC 7523 §3, the issue's 5 minutes)
const MAX_SCORES = 10000;
// TYPE_ID is the query every AGS URL carries, as Moodle's and Canvas's do:
// a tool that drops it is answered 404, one that appends /scores after it
// posts to the line item and is answered 405.
const TYPE_ID = '7';
const MEDIA = {
  lineItem: 'application/vnd.ims.lis.v2.lineitem+json',
  lineItems: 'application/vnd.ims.lis.v2.lineitemcontainer+json',
  score: 'application/vnd.ims.lis.v1.score+json',
  memberships: 'application/vnd.ims.lti-nrps.v2.membershipcontainer+json',
};
const ROLE = 'http://purl.imsglobal.org/vocab/lis/v2/membership#';
const SERVICES = ['token', 'lineitems', 'scores', 'memberships'];

const TOKEN_LIFETIME = 300; // seconds
const KEEP = 50; // entries kept in each list of /control/stats
const MAX_BODY = 1 << 20;

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.LTI_PLATFORM_PORT ?? '0' },
    host: { type: 'string', default: process.env.LTI_PLATFORM_HOST ?? '127.0.0.1' },
    issuer: { type: 'string', default: process.env.LTI_PLATFORM_ISSUER ?? '' },
    tool: { type: 'string', default: process.env.LTI_PLATFORM_TOOL ?? '' },
    clients: { type: 'string', default: process.env.LTI_PLATFORM_CLIENTS ?? '[]' },
  },
});

// ---- state --------------------------------------------------------------

const state = {
  url: '', // this platform's own URL, known once listening
  issuer: args.issuer,
  tool: args.tool, // the tool's base URL; a client may name its own
  clients: new Map(), // client_id → registration, see registration()
  keys: [], // published signing keys, the last one signs
  otherKey: null, // never published: "sign_with": "other-key"
  jwks: { status: 200, cacheControl: null },
  next: null, // overrides of the next launch, consumed by it
  issued: new Map(), // login_hint → {client_id, deployment_id, lti_message_hint}
  deepLinkRequests: [], // {client_id, deployment_id, data} of deep-linking launches
  deepLinkResults: [],
  stats: freshStats(),
  dynreg: freshDynreg(), // LTI Dynamic Registration, see dynamicRegistration()
  advantage: freshAdvantage(), // tokens, line items, rosters, faults: see "LTI Advantage" below
};

function freshStats() {
  return {
    jwksFetches: 0,
    authRequests: [],
    errors: [],
    tokenFetches: {}, // client_id → token requests naming it, refused ones too
    tokensIssued: {}, // client_id → access tokens issued
    tokenRequests: [],
    calls: { token: 0, lineitems: 0, scores: 0, memberships: 0 }, // faulted ones too
    scores: [], // every score received, in order, up to MAX_SCORES
  };
}

// freshDynreg is the Dynamic Registration side's state: the tokens issued
// (each usable once), how the next answers misbehave, what tools posted.
function freshDynreg() {
  return { tokens: new Set(), config: {}, register: {}, registrations: [] };
}

async function newKey() {
  const { privateKey, publicKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = await jose.exportJWK(publicKey);
  const kid = await jose.calculateJwkThumbprint(jwk); // RFC 7638
  return { kid, privateKey, publicKey, jwk: { ...jwk, kid, alg: 'RS256', use: 'sig' } };
}

// registration fills in a client's tool URLs from the tool's base URL as
// the contract's routes place them.
function registration(c, tool) {
  if (!c || typeof c.client_id !== 'string' || c.client_id === '') {
    throw new Error('a client needs a client_id');
  }
  const base = (c.tool ?? tool ?? '').replace(/\/+$/, '');
  const launch = base && `${base}/lti/v1p3/launch`;
  const r = {
    client_id: c.client_id,
    deployment_ids: c.deployment_ids ?? [],
    login_url: c.login_url ?? (base && `${base}/lti/v1p3/login`),
    redirect_uris: c.redirect_uris ?? (launch ? [launch] : []),
    target_link_uri: c.target_link_uri ?? launch,
    jwks_url: c.jwks_url ?? (base && `${base}/lti/v1p3/jwks.json`),
  };
  if (!Array.isArray(r.deployment_ids) || !Array.isArray(r.redirect_uris)) {
    throw new Error(`client ${c.client_id}: deployment_ids and redirect_uris are arrays`);
  }
  return r;
}

// setClients takes [{client_id, deployment_ids, …}] or {tool, clients}.
function setClients(body) {
  const list = Array.isArray(body) ? body : body?.clients;
  if (!Array.isArray(list)) throw new Error('want [{client_id, deployment_ids}, …] or {tool, clients}');
  if (!Array.isArray(body) && body.tool !== undefined) state.tool = body.tool;
  const clients = new Map();
  for (const c of list) {
    const r = registration(c, state.tool);
    if (clients.has(r.client_id)) throw new Error(`client ${r.client_id} is given twice`);
    clients.set(r.client_id, r);
  }
  state.clients = clients;
}

function remember(list, entry) {
  list.push(entry);
  if (list.length > KEEP) list.splice(0, list.length - KEEP);
}

function fail(where, reason) {
  remember(state.stats.errors, `${where}: ${reason}`);
}

// ---- tokens -------------------------------------------------------------

function randomString() {
  return crypto.randomBytes(12).toString('base64url');
}

// mergePatch applies an RFC 7386 JSON merge patch: objects merge
// recursively, null removes a member, anything else replaces.
function mergePatch(target, patch) {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out = target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

// launchClaims are an id_token's claims with every claim LTI Core 1.3 §5
// requires of the message type, and the ones the tool reads.
function launchClaims({ client, deploymentId, nonce, messageType, data, offset = 0, lineitem }) {
  const now = Math.floor(Date.now() / 1000) + offset;
  const claims = {
    iss: state.issuer,
    aud: client.client_id,
    azp: client.client_id,
    sub: 'platform-user-42',
    iat: now,
    exp: now + TOKEN_LIFETIME,
    nonce,
    email: 'ada@school.example',
    name: 'Ada Lovelace',
    given_name: 'Ada',
    family_name: 'Lovelace',
    [`${LTI}version`]: '1.3.0',
    [`${LTI}message_type`]: messageType,
    [`${LTI}deployment_id`]: deploymentId,
    [`${LTI}target_link_uri`]: client.target_link_uri,
    [`${LTI}roles`]: [],
    [`${LTI}custom`]: { exam_config_id: 'exam-config-1' },
    [`${LTI}context`]: {
      id: 'course-7',
      label: 'ALG1',
      title: 'Algebra I (period 3)',
      type: ['http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering'],
    },
  };
  if (messageType === 'LtiDeepLinkingRequest') {
    claims[`${LTI_DL}deep_linking_settings`] = {
      deep_link_return_url: `${state.url}/deep-link-return`,
      accept_types: ['ltiResourceLink'],
      accept_presentation_document_targets: ['iframe', 'window'],
      accept_lineitem: true,
      data,
    };
    // As Canvas and Moodle do: the context's line items, where a link's
    // lineItem becomes a gradebook column (see deepLinkReturn).
    claims[AGS_CLAIM] = {
      scope: [SCOPE.lineitem, SCOPE.lineitemRead, SCOPE.resultRead, SCOPE.score],
      lineitems: lineItemsURL(claims[`${LTI}context`].id),
    };
  } else {
    const link = { id: 'course-7-exam-1', title: 'Unit 3 exam' };
    const context = claims[`${LTI}context`].id;
    claims[`${LTI}resource_link`] = link;
    claims[AGS_CLAIM] = {
      scope: [SCOPE.lineitem, SCOPE.lineitemRead, SCOPE.resultRead, SCOPE.score],
      lineitems: lineItemsURL(context),
    };
    // The resource link's own line item, made on first use as an LMS makes
    // a gradebook column, when the control asks for it.
    if (lineitem) claims[AGS_CLAIM].lineitem = resourceLinkLineItem(context, link).id;
    claims[NRPS_CLAIM] = { context_memberships_url: membershipsURL(context), service_versions: ['2.0'] };
  }
  return claims;
}

const RSA_ALGS = new Set(['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512']);

// sign signs claims under header (merged over alg RS256, typ JWT and the
// current kid). signWith picks a negative case: "none" (unsecured),
// "HS256" (HMAC keyed with the published public key's PEM: the algorithm
// confusion attack), "other-key" (an RSA key that is not published, under
// the published kid).
async function sign(claims, headerPatch, signWith) {
  const current = state.keys.at(-1);
  let header = mergePatch({ alg: 'RS256', typ: 'JWT', kid: current.kid }, headerPatch ?? {});
  switch (signWith || 'key') {
    case 'none':
      header = mergePatch(header, { alg: 'none', kid: headerPatch?.kid === undefined ? null : headerPatch.kid });
      return unsigned(header, claims);
    case 'HS256': {
      const secret = new TextEncoder().encode(current.publicKey.export({ type: 'spki', format: 'pem' }));
      return compactSign(mergePatch(header, { alg: 'HS256' }), claims, secret);
    }
    case 'other-key':
      return signRSA(header, claims, state.otherKey.privateKey);
    case 'key':
      return signRSA(header, claims, current.privateKey);
    default:
      throw new Error(`sign_with ${JSON.stringify(signWith)}: want none, HS256 or other-key`);
  }
}

async function signRSA(header, claims, key) {
  if (RSA_ALGS.has(header.alg)) return compactSign(header, claims, key);
  // A header naming an algorithm an RSA key cannot sign with (absent,
  // ES256, …): the token carries it over an RS256 signature, which no
  // verifier should get as far as checking.
  const input = `${b64json(header)}.${b64json(claims)}`;
  const signature = crypto.sign('sha256', Buffer.from(input), key);
  return `${input}.${jose.base64url.encode(signature)}`;
}

// compactSign signs the claims as they are: CompactSign, unlike SignJWT,
// leaves odd claim values (a string exp, say) for the verifier to refuse.
function compactSign(header, claims, key) {
  return new jose.CompactSign(new TextEncoder().encode(JSON.stringify(claims))).setProtectedHeader(header).sign(key);
}

function unsigned(header, claims) {
  return `${b64json(header)}.${b64json(claims)}.`;
}

function b64json(v) {
  return jose.base64url.encode(JSON.stringify(v));
}

// ---- HTTP plumbing ------------------------------------------------------

class HTTPError extends Error {
  constructor(status, message, headers = {}, body = undefined) {
    super(message);
    this.status = status;
    this.headers = headers; // sent with the error: WWW-Authenticate, Retry-After
    this.body = body; // the JSON answered instead of {error: message}
  }
}

async function readBody(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new HTTPError(413, 'body over 1 MiB');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function readJSON(req) {
  const text = await readBody(req);
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new HTTPError(400, 'the body is not JSON');
  }
}

async function readForm(req) {
  const type = req.headers['content-type'] ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded')) {
    throw new HTTPError(400, `want an application/x-www-form-urlencoded body, not ${JSON.stringify(type)}`);
  }
  return new URLSearchParams(await readBody(req));
}

function only(body, allowed) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HTTPError(400, 'want a JSON object');
  const unknown = Object.keys(body).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) throw new HTTPError(400, `unknown fields ${unknown.join(', ')}; known: ${allowed.join(', ')}`);
  return body;
}

function send(res, status, type, body, headers = {}) {
  res.writeHead(status, { 'Content-Type': type, 'Cache-Control': 'no-store', ...headers });
  res.end(body);
}

function sendJSON(res, status, value) {
  send(res, status, 'application/json', `${JSON.stringify(value)}\n`);
}

function wantsJSON(req) {
  return (req.headers.accept ?? '').includes('application/json');
}

function escapeHTML(s) {
  return String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// ---- the platform's endpoints ------------------------------------------

function jwks(req, res) {
  state.stats.jwksFetches++;
  const headers = state.jwks.cacheControl ? { 'Cache-Control': state.jwks.cacheControl } : {};
  if (state.jwks.status !== 200) {
    send(res, state.jwks.status, 'text/plain', 'key set unavailable (control)\n', headers);
    return;
  }
  send(res, 200, 'application/json', JSON.stringify({ keys: state.keys.map((k) => k.jwk) }), headers);
}

// checkAuthRequest applies Security Framework 1.0 §5.1.1's rules for the
// authentication request and returns the registration and the issued hint.
function checkAuthRequest(p) {
  const need = (name, want) => {
    const v = p.get(name);
    if (v === null || v === '') throw new HTTPError(400, `${name} is missing`);
    if (want !== undefined && v !== want) throw new HTTPError(400, `${name} is ${JSON.stringify(v)}, want ${JSON.stringify(want)}`);
    return v;
  };
  if (!need('scope').split(' ').includes('openid')) throw new HTTPError(400, 'scope does not include openid');
  need('response_type', 'id_token');
  need('response_mode', 'form_post');
  need('prompt', 'none');
  const client = state.clients.get(need('client_id'));
  if (!client) throw new HTTPError(400, `client_id ${JSON.stringify(p.get('client_id'))} is not registered`);
  const redirect = need('redirect_uri');
  if (!client.redirect_uris.includes(redirect)) {
    throw new HTTPError(400, `redirect_uri ${JSON.stringify(redirect)} is not registered for ${client.client_id}`);
  }
  const hint = state.issued.get(need('login_hint'));
  if (!hint) throw new HTTPError(400, 'login_hint was not issued by this platform');
  if ((p.get('lti_message_hint') ?? '') !== (hint.lti_message_hint ?? '')) {
    throw new HTTPError(400, 'lti_message_hint is not the one issued with login_hint');
  }
  need('nonce');
  need('state');
  return { client, hint };
}

async function authorize(req, res) {
  const params = new URL(req.url, state.url).searchParams;
  if (req.method === 'POST') for (const [k, v] of await readForm(req)) params.append(k, v);
  const record = { at: new Date().toISOString(), method: req.method, params: Object.fromEntries(params) };
  remember(state.stats.authRequests, record);
  let checked;
  try {
    checked = checkAuthRequest(params);
  } catch (err) {
    record.error = err.message;
    fail('auth', err.message);
    throw err;
  }
  const next = state.next ?? {};
  state.next = null;
  const clientID = next.client_id ?? checked.client.client_id;
  const client = state.clients.get(clientID) ?? { ...checked.client, client_id: clientID };
  const messageType = next.message_type ?? 'LtiResourceLinkRequest';
  const data = next.deep_link_data ?? randomString();
  const deploymentId = next.deployment_id ?? checked.hint.deployment_id ?? client.deployment_ids[0];
  let claims = launchClaims({
    client,
    deploymentId,
    nonce: params.get('nonce'),
    messageType,
    data,
    offset: next.clock_offset ?? 0,
    lineitem: next.lineitem,
  });
  claims = mergePatch(claims, next.claims ?? {});
  if (messageType === 'LtiDeepLinkingRequest') {
    const settings = claims[`${LTI_DL}deep_linking_settings`];
    remember(state.deepLinkRequests, {
      client_id: client.client_id,
      deployment_id: deploymentId,
      data,
      context: claims[`${LTI}context`]?.id,
      // Line items are made only where the request said so and offered AGS.
      lineitems: settings?.accept_lineitem !== false && claims[AGS_CLAIM] !== undefined,
    });
  }
  const idToken = await sign(claims, next.header, next.sign_with);
  record.claims = claims;
  record.header = jose.decodeProtectedHeader(idToken);
  const action = params.get('redirect_uri');
  const st = params.get('state');
  if (wantsJSON(req)) {
    sendJSON(res, 200, { action, id_token: idToken, state: st });
    return;
  }
  send(res, 200, 'text/html; charset=utf-8', `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Launching</title></head>
<body>
<form id="launch" method="post" action="${escapeHTML(action)}">
<input type="hidden" name="id_token" value="${escapeHTML(idToken)}">
<input type="hidden" name="state" value="${escapeHTML(st)}">
<noscript><button type="submit">Continue</button></noscript>
</form>
<script>document.getElementById('launch').submit();</script>
</body></html>
`);
}

// issueLogin records a login_hint as issued and builds the tool's login
// initiation URL (LTI Core 1.3 §4.1, Security Framework §5.1.1.1).
function issueLogin(given) {
  // An empty value counts as none given.
  const q = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== '' && v !== null));
  const clientID = q.client_id ?? state.next?.client_id ?? state.clients.keys().next().value;
  const client = state.clients.get(clientID);
  if (!client) throw new HTTPError(400, `client_id ${JSON.stringify(clientID)} is not registered`);
  const deploymentId = q.lti_deployment_id ?? q.deployment_id ?? state.next?.deployment_id ?? client.deployment_ids[0];
  const loginHint = q.login_hint ?? randomString();
  const loginURL = q.login_url ?? client.login_url;
  if (!loginURL) throw new HTTPError(400, `client ${clientID} has no login_url (give --tool or the client's tool)`);
  state.issued.set(loginHint, { client_id: clientID, deployment_id: deploymentId, lti_message_hint: q.lti_message_hint });
  const url = new URL(loginURL);
  const set = (k, v) => v !== undefined && v !== null && url.searchParams.set(k, v);
  set('iss', q.iss ?? state.issuer);
  set('login_hint', loginHint);
  set('target_link_uri', q.target_link_uri ?? client.target_link_uri);
  set('client_id', clientID);
  set('lti_deployment_id', deploymentId);
  set('lti_message_hint', q.lti_message_hint);
  set('lti_storage_target', q.lti_storage_target);
  return { url: url.toString(), login_hint: loginHint, client_id: clientID, deployment_id: deploymentId };
}

// course is an LMS page that embeds the tool: the iframe opens the tool's
// login initiation, so the whole login → auth → launch runs in a frame of
// another site. It also answers 1EdTech's client-side postMessage storage
// (lti.capabilities, lti.put_data, lti.get_data) for tools given
// lti_storage_target=_parent, and lists those messages in #storage-log.
// ?storage= shapes those answers: none (no answer at all), wrong-id (put_data
// answered with another message_id), wrong-origin (put_data answered by a
// frame of ?relay=ORIGIN, through STORAGE_RELAY).
function course(req, res) {
  const q = Object.fromEntries(new URL(req.url, state.url).searchParams);
  const login = issueLogin(q);
  const mode = JSON.stringify(q.storage ?? '');
  const relayURL = JSON.stringify(q.storage === 'wrong-origin' ? `${q.relay ?? ''}/storage-relay` : '');
  send(res, 200, 'text/html; charset=utf-8', `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Algebra I (period 3)</title></head>
<body>
<h1>Algebra I (period 3)</h1>
<iframe id="tool" name="tool" src="${escapeHTML(login.url)}" width="1024" height="720"></iframe>
<pre id="storage-log"></pre>
<script>
const stores = new Map();
const mode = ${mode.replace(/</g, '\\u003c')};
// The relay frame answers only once its page has loaded: before that its
// window is the frame's initial blank document, and a message to it is
// lost (on a busy machine the tool's put_data can come first). It is made
// here, its load awaited from before it starts loading.
const relayURL = ${relayURL.replace(/</g, '\\u003c')};
let relay, relayLoaded;
if (relayURL) {
  relay = document.createElement('iframe');
  relay.id = 'relay';
  relay.hidden = true;
  relayLoaded = new Promise((loaded) => relay.addEventListener('load', loaded, { once: true }));
  relay.src = relayURL;
  document.body.prepend(relay);
}
const log = (line) => { document.getElementById('storage-log').textContent += line + '\\n'; };
window.addEventListener('message', (event) => {
  const m = event.data;
  if (mode === 'none' || !m || typeof m !== 'object' || typeof m.subject !== 'string' || !m.subject.startsWith('lti.')) return;
  log(m.subject + ' ' + (m.key ?? ''));
  const reply = (body) => {
    const answer = { subject: m.subject + '.response', message_id: m.message_id, ...body };
    if (m.subject === 'lti.put_data' && mode === 'wrong-id') answer.message_id = 'not-' + m.message_id;
    if (m.subject === 'lti.put_data' && mode === 'wrong-origin') {
      relayLoaded.then(() => relay.contentWindow.postMessage({ frame: 'tool', answer }, '*'));
      return;
    }
    event.source.postMessage(answer, event.origin);
  };
  if (!stores.has(event.origin)) stores.set(event.origin, new Map());
  const store = stores.get(event.origin);
  switch (m.subject) {
    case 'lti.capabilities':
      reply({ supported_messages: [{ subject: 'lti.capabilities' }, { subject: 'lti.put_data' }, { subject: 'lti.get_data' }] });
      break;
    case 'lti.put_data':
      if (typeof m.key !== 'string') { reply({ error: { code: 'bad_request', message: 'key is missing' } }); break; }
      store.set(m.key, m.value);
      reply({ key: m.key, value: m.value });
      break;
    case 'lti.get_data':
      if (!store.has(m.key)) { reply({ error: { code: 'bad_request', message: 'no such key' } }); break; }
      reply({ key: m.key, value: store.get(m.key) });
      break;
    default:
      reply({ error: { code: 'unsupported_subject', message: 'not supported here' } });
  }
});
</script>
</body></html>
`);
}

// STORAGE_RELAY is a page that posts the answers its parent gives it to
// the parent's frame it names, from its own origin: served under another
// host name than the course page, it answers as a wrong origin would.
const STORAGE_RELAY = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>relay</title></head><body><script>
window.addEventListener('message', (event) => {
  if (event.source !== window.parent || !event.data || typeof event.data.frame !== 'string') return;
  window.parent.frames[event.data.frame].postMessage(event.data.answer, '*');
});
</script></body></html>
`;

// deepLinkReturn verifies a Deep Linking response (DL 2.0 §4.5) with the
// tool's published keys, fetched afresh, and records what it found.
async function deepLinkReturn(req, res) {
  const form = await readForm(req);
  const token = form.get('JWT') ?? '';
  const result = { at: new Date().toISOString(), verified: false, error: '', header: null, payload: null, lineItems: [] };
  try {
    result.header = jose.decodeProtectedHeader(token);
    result.payload = jose.decodeJwt(token);
  } catch {
    // verification below names the problem
  }
  try {
    if (token === '') throw new Error('the form has no JWT field');
    const data = result.payload?.[`${LTI_DL}data`];
    const request = state.deepLinkRequests.findLast((r) => r.data === data) ?? state.deepLinkRequests.at(-1);
    if (!request) throw new Error('no deep-linking launch was made');
    const client = state.clients.get(request.client_id);
    if (!client?.jwks_url) throw new Error(`client ${request.client_id} has no jwks_url`);
    const { payload, protectedHeader } = await jose.jwtVerify(token, jose.createRemoteJWKSet(new URL(client.jwks_url)), {
      issuer: request.client_id,
      audience: state.issuer,
      algorithms: ['RS256'],
      requiredClaims: ['iat', 'exp', 'nonce'],
    });
    result.header = protectedHeader;
    result.payload = payload;
    const problems = [];
    const want = (claim, value) => {
      if (payload[claim] !== value) problems.push(`${claim} is ${JSON.stringify(payload[claim])}, want ${JSON.stringify(value)}`);
    };
    want(`${LTI}message_type`, 'LtiDeepLinkingResponse');
    want(`${LTI}version`, '1.3.0');
    want(`${LTI}deployment_id`, request.deployment_id);
    want(`${LTI_DL}data`, request.data);
    const items = payload[`${LTI_DL}content_items`];
    if (items !== undefined && !Array.isArray(items)) problems.push('content_items is not an array');
    if (problems.length > 0) throw new Error(problems.join('; '));
    result.lineItems = placeLinks(request, items ?? []);
    result.verified = true;
  } catch (err) {
    result.error = err.code ? `${err.code}: ${err.message}` : err.message;
    fail('deep-link-return', result.error);
  }
  remember(state.deepLinkResults, result);
  const status = result.verified ? 200 : 400;
  if (wantsJSON(req)) {
    sendJSON(res, status, result);
    return;
  }
  send(res, status, 'text/html; charset=utf-8', `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Deep linking</title></head>
<body><p id="deep-link-result">${result.verified ? 'verified' : `refused: ${escapeHTML(result.error)}`}</p></body></html>
`);
}

// placeLinks adds a Deep Linking response's resource links to the course
// as an LMS does, each under a new resource link id, and makes the
// gradebook column of each that carries a lineItem (DL 2.0 §3.2.1) where
// the request allowed them: the line items made.
function placeLinks(request, items) {
  if (!request.lineitems || !request.context) return [];
  return items
    .filter((item) => item?.type === 'ltiResourceLink' && item.lineItem !== undefined)
    .map((item) => {
      const { label, scoreMaximum, resourceId, tag } = item.lineItem ?? {};
      const resourceLinkId = `${request.context}-link-${crypto.randomBytes(6).toString('hex')}`;
      return createLineItem(request.context, { label, scoreMaximum, resourceId, tag, resourceLinkId });
    });
}

// ---- LTI Advantage: access tokens, AGS 2.0, NRPS 2.0 -------------------

function freshAdvantage() {
  return {
    expiresIn: 3600, // the access tokens' lifetime, in seconds
    tokens: new Map(), // access token → {client_id, scopes: Set, expiresAt: ms}
    jtis: new Map(), // `${client_id} ${jti}` → exp (s): assertions seen, kept until they expire
    toolKeys: new Map(), // jwks_url → jose's remote key set, which caches the tool's keys
    faults: Object.fromEntries(SERVICES.map((s) => [s, []])), // service → [{status, count, retry_after}]
    lineItems: new Map(), // context id → Map(line item number → line item)
    lastLineItem: 0,
    lastTimestamps: new Map(), // `${line item URL} ${userId}` → the last score's timestamp (ms)
    rosters: new Map(), // context id → members given by /control/members
    cursors: new Map(), // NRPS page cursor → {context, role, page}
  };
}

function lineItemsURL(context) {
  return `${state.url}/ags/contexts/${encodeURIComponent(context)}/lineitems?type_id=${TYPE_ID}`;
}

function lineItemURL(context, n) {
  return `${state.url}/ags/contexts/${encodeURIComponent(context)}/lineitems/${n}/lineitem?type_id=${TYPE_ID}`;
}

function membershipsURL(context) {
  return `${state.url}/nrps/contexts/${encodeURIComponent(context)}/memberships`;
}

// fault answers the next call to service as /control/faults said, if it
// said anything, and counts the call.
function fault(service) {
  state.stats.calls[service]++;
  const queue = state.advantage.faults[service];
  const f = queue[0];
  if (!f) return;
  if (--f.count <= 0) queue.shift();
  const headers = f.retry_after !== undefined ? { 'Retry-After': String(f.retry_after) } : {};
  if (f.status === 401) {
    headers['WWW-Authenticate'] = 'Bearer error="invalid_token", error_description="The access token expired"';
    throw new HTTPError(401, 'the access token expired (control)', headers, service === 'token' ? { error: 'invalid_client' } : undefined);
  }
  throw new HTTPError(f.status, `${service} unavailable (control)`, headers);
}

// oauthError is an RFC 6749 §5.2 error answer of the token endpoint.
function oauthError(status, error, description) {
  return new HTTPError(status, `${error}: ${description}`, {}, { error, error_description: description });
}

// verifyAssertion applies RFC 7523 §3 to a client assertion, verified with
// the tool's published keys, and returns the client it authenticates.
async function verifyAssertion(assertion, tokenURLs) {
  let clientID;
  try {
    clientID = jose.decodeJwt(assertion).iss;
  } catch {
    throw oauthError(401, 'invalid_client', 'the client assertion is not a JWT');
  }
  const client = state.clients.get(clientID);
  if (!client) throw oauthError(401, 'invalid_client', `client ${JSON.stringify(clientID)} is not registered`);
  state.stats.tokenFetches[client.client_id] = (state.stats.tokenFetches[client.client_id] ?? 0) + 1;
  if (!client.jwks_url) throw oauthError(401, 'invalid_client', `client ${client.client_id} has no jwks_url`);
  const keys = state.advantage.toolKeys;
  // Cached as jose caches (10 minutes), but a kid it does not know is
  // fetched again at once: a tool that rotates its key is heard at once.
  if (!keys.has(client.jwks_url)) keys.set(client.jwks_url, jose.createRemoteJWKSet(new URL(client.jwks_url), { cooldownDuration: 0 }));
  let payload;
  try {
    const header = jose.decodeProtectedHeader(assertion);
    if (!header.kid) throw new Error('the header has no kid');
    ({ payload } = await jose.jwtVerify(assertion, keys.get(client.jwks_url), {
      issuer: client.client_id,
      subject: client.client_id,
      audience: tokenURLs,
      algorithms: ['RS256'],
      requiredClaims: ['iat', 'exp', 'jti'],
    }));
  } catch (err) {
    throw oauthError(401, 'invalid_client', `client assertion: ${err.code ? `${err.code}: ` : ''}${err.message}`);
  }
  if (payload.exp - payload.iat > ASSERTION_MAX_LIFETIME) {
    throw oauthError(401, 'invalid_client', `client assertion: exp is ${payload.exp - payload.iat}s after iat, over ${ASSERTION_MAX_LIFETIME}s`);
  }
  const now = Date.now() / 1000;
  const seen = state.advantage.jtis;
  for (const [k, exp] of seen) if (exp < now) seen.delete(k);
  const jti = `${client.client_id} ${payload.jti}`;
  if (seen.has(jti)) throw oauthError(401, 'invalid_client', `client assertion: jti ${JSON.stringify(payload.jti)} was used before`);
  seen.set(jti, payload.exp);
  return client;
}

// token is the token endpoint (the tool's authTokenUrl): the client
// credentials grant with a JWT client assertion (RFC 6749 §4.4, RFC 7523
// §2.2), the 1EdTech Security Framework's way for a tool to call services.
async function token(req, res) {
  const record = { at: new Date().toISOString(), client_id: '', scope: '', error: '' };
  remember(state.stats.tokenRequests, record);
  try {
    fault('token');
    const form = await readForm(req);
    if (form.get('grant_type') !== 'client_credentials') {
      throw oauthError(400, 'unsupported_grant_type', `grant_type is ${JSON.stringify(form.get('grant_type'))}, want client_credentials`);
    }
    if (form.get('client_assertion_type') !== ASSERTION_TYPE) {
      throw oauthError(400, 'invalid_request', `client_assertion_type: want ${ASSERTION_TYPE}`);
    }
    record.scope = form.get('scope') ?? '';
    // The token URL as the tool addressed it, and as this platform names it.
    const tokenURLs = [...new Set([`${state.url}/token`, `http://${req.headers.host}/token`])];
    const client = await verifyAssertion(form.get('client_assertion') ?? '', tokenURLs);
    record.client_id = client.client_id;
    const scopes = record.scope.split(' ').filter(Boolean);
    const known = Object.values(SCOPE);
    const unknown = scopes.filter((s) => !known.includes(s));
    if (scopes.length === 0 || unknown.length > 0) {
      throw oauthError(400, 'invalid_scope', scopes.length === 0 ? 'no scope is asked for' : `unknown scopes ${unknown.join(' ')}`);
    }
    const accessToken = crypto.randomBytes(24).toString('base64url');
    const { expiresIn } = state.advantage;
    state.advantage.tokens.set(accessToken, { client_id: client.client_id, scopes: new Set(scopes), expiresAt: Date.now() + expiresIn * 1000 });
    state.stats.tokensIssued[client.client_id] = (state.stats.tokensIssued[client.client_id] ?? 0) + 1;
    sendJSON(res, 200, { access_token: accessToken, token_type: 'Bearer', expires_in: expiresIn, scope: scopes.join(' ') });
  } catch (err) {
    record.error = err.message;
    fail('token', err.message);
    throw err;
  }
}

// bearer checks the request's access token (RFC 6750) for one of scopes.
function bearer(req, scopes) {
  const m = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  const t = m && state.advantage.tokens.get(m[1]);
  if (!t) throw new HTTPError(401, 'no valid access token', { 'WWW-Authenticate': 'Bearer error="invalid_token"' });
  if (Date.now() >= t.expiresAt) {
    throw new HTTPError(401, 'the access token expired', { 'WWW-Authenticate': 'Bearer error="invalid_token", error_description="The access token expired"' });
  }
  if (!scopes.some((s) => t.scopes.has(s))) {
    throw new HTTPError(403, `the access token's scope lacks ${scopes.join(' or ')}`, { 'WWW-Authenticate': `Bearer error="insufficient_scope", scope="${scopes[0]}"` });
  }
  return t;
}

function wantType(req, type) {
  const given = (req.headers['content-type'] ?? '').split(';')[0].trim();
  if (given !== type) throw new HTTPError(415, `Content-Type is ${JSON.stringify(given)}, want ${type}`);
}

function wantAccept(req, type) {
  const accept = req.headers.accept ?? '';
  if (accept !== '' && !accept.includes(type) && !accept.includes('*/*')) {
    throw new HTTPError(406, `Accept ${JSON.stringify(accept)} does not take ${type}`);
  }
}

function contextLineItems(context) {
  const all = state.advantage.lineItems;
  if (!all.has(context)) all.set(context, new Map());
  return all.get(context);
}

// checkLineItem applies AGS 2.0 §3.2's rules to a line item's JSON.
function checkLineItem(body) {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new HTTPError(400, 'want a JSON object');
  const problems = [];
  if (typeof body.label !== 'string' || body.label.trim() === '') problems.push('label is missing');
  if (typeof body.scoreMaximum !== 'number' || !(body.scoreMaximum > 0)) problems.push('scoreMaximum is not a number over 0');
  for (const k of ['resourceId', 'resourceLinkId', 'tag', 'startDateTime', 'endDateTime']) {
    if (body[k] !== undefined && typeof body[k] !== 'string') problems.push(`${k} is not a string`);
  }
  if (problems.length > 0) throw new HTTPError(400, problems.join('; '));
}

function createLineItem(context, body) {
  checkLineItem(body);
  const n = ++state.advantage.lastLineItem;
  const item = { ...body, id: lineItemURL(context, n) };
  contextLineItems(context).set(String(n), item);
  return item;
}

// resourceLinkLineItem is the line item of a resource link, made the first
// time a launch asks for it.
function resourceLinkLineItem(context, link) {
  for (const item of contextLineItems(context).values()) if (item.resourceLinkId === link.id) return item;
  return createLineItem(context, { label: link.title, scoreMaximum: 100, resourceLinkId: link.id });
}

function wantTypeID(q) {
  if (q.get('type_id') !== TYPE_ID) {
    throw new HTTPError(404, `type_id is ${JSON.stringify(q.get('type_id'))}, want ${JSON.stringify(TYPE_ID)}: use the URL as given`);
  }
}

// lineItems serves a context's line item container (AGS 2.0 §3.2): GET
// lists them, filtered by resource_link_id, resource_id, tag; POST makes one.
async function lineItems(req, res, context) {
  fault('lineitems');
  const q = new URL(req.url, state.url).searchParams;
  wantTypeID(q);
  if (req.method === 'POST') {
    bearer(req, [SCOPE.lineitem]);
    wantType(req, MEDIA.lineItem);
    send(res, 201, MEDIA.lineItem, JSON.stringify(createLineItem(context, await readJSON(req))));
    return;
  }
  bearer(req, [SCOPE.lineitem, SCOPE.lineitemRead]);
  wantAccept(req, MEDIA.lineItems);
  const filters = { resourceLinkId: q.get('resource_link_id'), resourceId: q.get('resource_id'), tag: q.get('tag') };
  const items = [...contextLineItems(context).values()].filter((item) =>
    Object.entries(filters).every(([k, v]) => v === null || item[k] === v));
  send(res, 200, MEDIA.lineItems, JSON.stringify(items));
}

function findLineItem(context, n) {
  const item = state.advantage.lineItems.get(context)?.get(n);
  if (!item) throw new HTTPError(404, `no line item ${n} in context ${context}`);
  return item;
}

async function lineItem(req, res, context, n) {
  fault('lineitems');
  const q = new URL(req.url, state.url).searchParams;
  if (req.method !== 'GET') {
    // A POST here is most often a score whose /scores went after the query.
    throw new HTTPError(405, `${req.method} on a line item; scores go to the line item's path + /scores, before its query (${q.toString()})`, { Allow: 'GET' });
  }
  wantTypeID(q);
  bearer(req, [SCOPE.lineitem, SCOPE.lineitemRead]);
  wantAccept(req, MEDIA.lineItem);
  send(res, 200, MEDIA.lineItem, JSON.stringify(findLineItem(context, n)));
}

const ACTIVITY = ['Initialized', 'Started', 'InProgress', 'Submitted', 'Completed'];
const GRADING = ['FullyGraded', 'Pending', 'PendingManual', 'Failed', 'NotReady'];

// checkScore applies AGS 2.0 §3.4's rules to a score and returns its
// timestamp in milliseconds.
function checkScore(s) {
  if (s === null || typeof s !== 'object' || Array.isArray(s)) throw new HTTPError(400, 'want a JSON object');
  const problems = [];
  if (typeof s.userId !== 'string' || s.userId === '') problems.push('userId is missing');
  if (!ACTIVITY.includes(s.activityProgress)) problems.push(`activityProgress: want one of ${ACTIVITY.join(', ')}`);
  if (!GRADING.includes(s.gradingProgress)) problems.push(`gradingProgress: want one of ${GRADING.join(', ')}`);
  const at = typeof s.timestamp === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s.timestamp) ? Date.parse(s.timestamp) : NaN;
  if (Number.isNaN(at)) problems.push('timestamp is not an ISO 8601 date-time with a zone');
  if (s.scoreGiven !== undefined) {
    if (typeof s.scoreGiven !== 'number' || s.scoreGiven < 0) problems.push('scoreGiven is not a number of 0 or more');
    if (typeof s.scoreMaximum !== 'number' || !(s.scoreMaximum > 0)) problems.push('scoreMaximum is not a number over 0');
  }
  if (s.comment !== undefined && typeof s.comment !== 'string') problems.push('comment is not a string');
  if (problems.length > 0) throw new HTTPError(400, problems.join('; '));
  return at;
}

// scores receives a score for a line item (AGS 2.0 §3.4) and records it.
async function scores(req, res, context, n) {
  fault('scores');
  const q = new URL(req.url, state.url).searchParams;
  wantTypeID(q);
  const t = bearer(req, [SCOPE.score]);
  wantType(req, MEDIA.score);
  const item = findLineItem(context, n);
  const score = await readJSON(req);
  const record = { at: new Date().toISOString(), client_id: t.client_id, lineitem: item.id, score, status: 204, error: '' };
  if (state.stats.scores.length < MAX_SCORES) state.stats.scores.push(record);
  try {
    const at = checkScore(score);
    // §3.4.7: a score older than the last one for the user is not applied.
    const key = `${item.id} ${score.userId}`;
    const last = state.advantage.lastTimestamps.get(key);
    if (last !== undefined && at < last) {
      throw new HTTPError(409, `timestamp ${score.timestamp} is before the last score's for ${score.userId}`);
    }
    state.advantage.lastTimestamps.set(key, at);
  } catch (err) {
    record.status = err.status;
    record.error = err.message;
    fail('scores', err.message);
    throw err;
  }
  res.writeHead(204, { 'Cache-Control': 'no-store' });
  res.end();
}

// defaultRoster is every context's members until /control/members says
// otherwise: the launch's user, who teaches, a teaching assistant and
// eight learners, ten in all.
function defaultRoster() {
  const names = ['Grace Hopper', 'Alan Turing', 'Emmy Noether', 'Kurt Gödel', 'Sofia Kovalevskaya', 'John von Neumann', 'Hedy Lamarr', 'Srinivasa Ramanujan'];
  return [
    { user_id: 'platform-user-42', name: 'Ada Lovelace', email: 'ada@school.example', roles: [`${ROLE}Instructor`] },
    { user_id: 'platform-user-43', name: 'Charles Babbage', email: 'charles@school.example', roles: ['http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant'] },
    ...names.map((name, i) => ({
      user_id: `platform-user-${100 + i}`,
      name,
      email: `${name.split(' ')[0].toLowerCase()}@school.example`,
      roles: [`${ROLE}Learner`],
    })),
  ].map((m) => ({ status: 'Active', ...m }));
}

// hasRole tells whether a member has role, given as NRPS 2.0 §2.3.1
// allows: a full URI, or a context role's short name.
function hasRole(member, role) {
  return member.roles.some((r) => r === role || r === `${ROLE}${role}`);
}

const PAGES = 3;

// memberships answers a context's members (NRPS 2.0) in three pages, the
// next page's URL in a Link header. The pages' URLs mix upper and lower
// case in path and query and are known by this exact spelling only: a tool
// that follows anything but the link as given gets 404.
function memberships(req, res, context, page, cursor) {
  fault('memberships');
  bearer(req, [SCOPE.memberships]);
  wantAccept(req, MEDIA.memberships);
  let role = new URL(req.url, state.url).searchParams.get('role');
  if (page > 1) {
    const c = state.advantage.cursors.get(cursor ?? '');
    if (!c || c.context !== context || c.page !== page) throw new HTTPError(404, `no page ${page} with Cursor ${JSON.stringify(cursor)}`);
    role = c.role;
  }
  const all = (state.advantage.rosters.get(context) ?? defaultRoster()).filter((m) => role === null || hasRole(m, role));
  const size = Math.max(1, Math.ceil(all.length / PAGES));
  const headers = {};
  if (page * size < all.length) {
    const next = `Pg${randomString()}`;
    state.advantage.cursors.set(next, { context, role, page: page + 1 });
    const url = `${state.url}/nrps/contexts/${encodeURIComponent(context)}/Memberships/Page/${page + 1}?Cursor=${next}`;
    headers.Link = `<${url}>; rel="next"`;
  }
  const body = {
    id: `${state.url}${new URL(req.url, state.url).pathname}`,
    context: { id: context, label: 'ALG1', title: 'Algebra I (period 3)' },
    members: all.slice((page - 1) * size, page * size),
  };
  send(res, 200, MEDIA.memberships, JSON.stringify(body), headers);
}

// advantageRoute serves the AGS and NRPS URLs, or answers false.
async function advantageRoute(req, res, pathname) {
  let m = /^\/ags\/contexts\/([^/]+)\/lineitems(?:\/([^/]+)\/lineitem(\/scores)?)?$/.exec(pathname);
  if (m) {
    const context = decodeURIComponent(m[1]);
    if (m[2] === undefined) {
      if (req.method !== 'GET' && req.method !== 'POST') throw new HTTPError(405, `${req.method} on a line item container`, { Allow: 'GET, POST' });
      await lineItems(req, res, context);
    } else if (m[3] === undefined) {
      await lineItem(req, res, context, m[2]);
    } else {
      if (req.method !== 'POST') throw new HTTPError(405, `${req.method} on scores`, { Allow: 'POST' });
      await scores(req, res, context, m[2]);
    }
    return true;
  }
  m = /^\/nrps\/contexts\/([^/]+)\/(?:memberships|Memberships\/Page\/([0-9]+))$/.exec(pathname);
  if (m && req.method === 'GET') {
    const cursor = new URL(req.url, state.url).searchParams.get('Cursor');
    memberships(req, res, decodeURIComponent(m[1]), m[2] === undefined ? 1 : Number(m[2]), cursor);
    return true;
  }
  return false;
}

// ---- LTI Dynamic Registration (1EdTech LTI-DR 1.0) ----------------------

// openidConfiguration answers the platform's OpenID configuration (LTI-DR
// §3.4), shaped by /control/dynreg: another issuer, a status, a body over
// a size, a member left out.
function openidConfiguration(req, res) {
  const c = state.dynreg.config;
  if (c.status && c.status !== 200) {
    send(res, c.status, 'text/plain', 'configuration unavailable (control)\n');
    return;
  }
  const doc = mergePatch({
    issuer: state.issuer,
    authorization_endpoint: `${state.url}/auth`,
    token_endpoint: `${state.url}/token`,
    jwks_uri: `${state.url}/jwks`,
    registration_endpoint: `${state.url}/dynreg/register`,
    scopes_supported: ['openid', ...Object.values(SCOPE)],
    response_types_supported: ['id_token'],
    id_token_signing_alg_values_supported: ['RS256'],
    token_endpoint_auth_methods_supported: ['private_key_jwt'],
    claims_supported: ['iss', 'sub', 'email', 'name'],
    'https://purl.imsglobal.org/spec/lti-platform-configuration': {
      product_family_code: 'test-platform',
      version: '1.0',
      messages_supported: [{ type: 'LtiResourceLinkRequest' }, { type: 'LtiDeepLinkingRequest' }],
    },
  }, c.patch ?? {});
  let body = JSON.stringify(doc);
  if (c.pad) body = JSON.stringify({ ...doc, padding: 'x'.repeat(c.pad) });
  send(res, 200, 'application/json', body);
}

// checkToolRegistration applies LTI-DR §3.5.2's rules to a tool's client
// metadata and returns the client it makes.
function checkToolRegistration(body) {
  const problems = [];
  const want = (ok, what) => ok || problems.push(what);
  const lti = body?.['https://purl.imsglobal.org/spec/lti-tool-configuration'];
  want(body?.application_type === 'web', 'application_type is not web');
  want(Array.isArray(body?.response_types) && body.response_types.includes('id_token'), 'response_types lacks id_token');
  want(Array.isArray(body?.grant_types) && body.grant_types.includes('implicit') && body.grant_types.includes('client_credentials'), 'grant_types lacks implicit or client_credentials');
  want(typeof body?.initiate_login_uri === 'string' && body.initiate_login_uri !== '', 'initiate_login_uri is missing');
  want(Array.isArray(body?.redirect_uris) && body.redirect_uris.length > 0, 'redirect_uris is missing');
  want(typeof body?.jwks_uri === 'string' && body.jwks_uri !== '', 'jwks_uri is missing');
  want(body?.token_endpoint_auth_method === 'private_key_jwt', 'token_endpoint_auth_method is not private_key_jwt');
  want(typeof lti?.domain === 'string' && lti.domain !== '', 'the tool configuration has no domain');
  want(Array.isArray(lti?.messages) && lti.messages.some((m) => m.type === 'LtiResourceLinkRequest'), 'no LtiResourceLinkRequest message');
  if (problems.length > 0) throw new HTTPError(400, problems.join('; '));
  return {
    client_id: `dynreg-${randomString()}`,
    login_url: body.initiate_login_uri,
    redirect_uris: body.redirect_uris,
    target_link_uri: lti.target_link_uri ?? body.redirect_uris[0],
    jwks_url: body.jwks_uri,
  };
}

// dynamicRegistration answers a tool's registration request (LTI-DR §3.6):
// a bearer registration token the platform issued (used once), the tool's
// metadata checked, and a new client made and kept, so that launches
// through it work.
async function dynamicRegistration(req, res) {
  const r = state.dynreg.register;
  const auth = req.headers.authorization ?? '';
  const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
  const body = await readJSON(req);
  const record = { at: new Date().toISOString(), token_ok: state.dynreg.tokens.delete(token), body, error: '' };
  remember(state.dynreg.registrations, record);
  try {
    if (!record.token_ok) throw new HTTPError(401, 'the registration token is unknown or used');
    if (r.status && r.status !== 200) throw new HTTPError(r.status, 'registration refused (control)');
    const made = checkToolRegistration(body);
    const deploymentId = r.deployment_id === undefined ? `dep-${randomString()}` : r.deployment_id;
    const client = registration({ ...made, deployment_ids: deploymentId ? [deploymentId] : [] }, state.tool);
    state.clients.set(client.client_id, client);
    record.client_id = client.client_id;
    const answer = {
      client_id: r.client_id ?? client.client_id,
      registration_client_uri: `${state.url}/dynreg/clients/${client.client_id}`,
      ...body,
      'https://purl.imsglobal.org/spec/lti-tool-configuration': {
        ...body['https://purl.imsglobal.org/spec/lti-tool-configuration'],
        ...(deploymentId ? { deployment_id: deploymentId } : {}),
      },
    };
    let text = JSON.stringify(answer);
    if (r.pad) text = JSON.stringify({ ...answer, padding: 'x'.repeat(r.pad) });
    send(res, 200, 'application/json', text);
  } catch (err) {
    record.error = err.message;
    fail('dynreg', err.message);
    throw err;
  }
}

// openRegistration issues a registration token, and answers it with the
// configuration URL a tool's registration link is opened with.
function openRegistration() {
  const token = randomString();
  state.dynreg.tokens.add(token);
  return { openid_configuration: `${state.url}/.well-known/openid-configuration`, registration_token: token };
}

// dynregPage is the LMS's registration page: it issues a registration
// token, opens the tool's registration link (?link=) in a frame with
// openid_configuration and registration_token, and lists in #close-log the
// org.imsglobal.lti.close messages it receives, with their origin.
function dynregPage(req, res) {
  const q = new URL(req.url, state.url).searchParams;
  const link = new URL(q.get('link') ?? '');
  const opening = openRegistration();
  link.searchParams.set('openid_configuration', opening.openid_configuration);
  link.searchParams.set('registration_token', opening.registration_token);
  send(res, 200, 'text/html; charset=utf-8', `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Register a tool</title></head>
<body>
<iframe id="tool" src="${escapeHTML(link.toString())}" width="800" height="400"></iframe>
<pre id="close-log"></pre>
<script>
window.addEventListener('message', (event) => {
  if (event.data && event.data.subject === 'org.imsglobal.lti.close') {
    document.getElementById('close-log').textContent += event.data.subject + ' from ' + event.origin + '\\n';
  }
});
</script>
</body></html>
`);
}

// ---- the control API ----------------------------------------------------

const NEXT_FIELDS = ['claims', 'header', 'clock_offset', 'sign_with', 'client_id', 'deployment_id', 'message_type', 'deep_link_data', 'lineitem'];

const control = {
  'POST /control/next': async (req) => {
    const next = only(await readJSON(req), NEXT_FIELDS);
    if (next.sign_with !== undefined && !['none', 'HS256', 'other-key'].includes(next.sign_with)) {
      throw new HTTPError(400, 'sign_with: want none, HS256 or other-key');
    }
    if (next.lineitem !== undefined && typeof next.lineitem !== 'boolean') throw new HTTPError(400, 'lineitem: want true or false');
    if (next.client_id !== undefined && !state.clients.has(next.client_id)) {
      throw new HTTPError(400, `client_id ${JSON.stringify(next.client_id)} is not registered`);
    }
    state.next = next;
    return { next };
  },
  'POST /control/login': async (req) => {
    const q = only(await readJSON(req), ['client_id', 'deployment_id', 'login_hint', 'lti_message_hint', 'target_link_uri', 'login_url', 'iss', 'lti_storage_target']);
    return issueLogin(q);
  },
  'POST /control/rotate': async (req) => {
    const { keep_old: keepOld = true } = only(await readJSON(req), ['keep_old']);
    const key = await newKey();
    state.keys = keepOld ? [...state.keys, key] : [key];
    return { kid: key.kid, kids: state.keys.map((k) => k.kid) };
  },
  'POST /control/jwks': async (req) => {
    const body = only(await readJSON(req), ['status', 'cacheControl']);
    if (body.status !== undefined) {
      if (!Number.isInteger(body.status) || body.status < 200 || body.status > 599) throw new HTTPError(400, 'status: want 200…599');
      state.jwks.status = body.status;
    }
    if (body.cacheControl !== undefined) state.jwks.cacheControl = body.cacheControl || null;
    return state.jwks;
  },
  'POST /control/clients': async (req) => {
    try {
      setClients(await readJSON(req));
    } catch (err) {
      throw err instanceof HTTPError ? err : new HTTPError(400, err.message);
    }
    return { clients: [...state.clients.values()] };
  },
  'GET /control/clients': async () => ({ tool: state.tool, clients: [...state.clients.values()] }),
  'GET /control/stats': async () => state.stats,
  'POST /control/dynreg': async (req) => {
    // {config: {status, patch, pad}, register: {status, deployment_id, client_id, pad}}: how the
    // next configuration and registration answers misbehave. Answers a new registration token
    // and the configuration URL to open the tool's registration link with.
    const body = only(await readJSON(req), ['config', 'register']);
    state.dynreg.config = body.config ?? {};
    state.dynreg.register = body.register ?? {};
    return openRegistration();
  },
  'GET /control/dynreg': async () => ({ registrations: state.dynreg.registrations }),
  'POST /control/sign': async (req) => {
    const body = only(await readJSON(req), ['claims', 'header', 'sign_with', 'launch']);
    let claims = body.claims ?? {};
    if (body.launch) {
      // Start from a launch's claims: {client_id, deployment_id, nonce, message_type, deep_link_data}.
      const l = only(body.launch, ['client_id', 'deployment_id', 'nonce', 'message_type', 'deep_link_data']);
      const client = state.clients.get(l.client_id ?? state.clients.keys().next().value);
      if (!client) throw new HTTPError(400, 'launch: no such client');
      claims = mergePatch(launchClaims({
        client,
        deploymentId: l.deployment_id ?? client.deployment_ids[0],
        nonce: l.nonce ?? randomString(),
        messageType: l.message_type ?? 'LtiResourceLinkRequest',
        data: l.deep_link_data ?? randomString(),
      }), claims);
    }
    try {
      return { token: await sign(claims, body.header, body.sign_with) };
    } catch (err) {
      throw new HTTPError(400, err.message);
    }
  },
  'POST /control/tokens': async (req) => {
    // {expires_in}: the lifetime of the access tokens issued from now on;
    // {expire: true}: every access token issued so far is expired now.
    const body = only(await readJSON(req), ['expires_in', 'expire']);
    if (body.expires_in !== undefined) {
      if (!Number.isInteger(body.expires_in) || body.expires_in < 1) throw new HTTPError(400, 'expires_in: want whole seconds, 1 or more');
      state.advantage.expiresIn = body.expires_in;
    }
    let expired = 0;
    if (body.expire === true) {
      const now = Date.now();
      for (const t of state.advantage.tokens.values()) {
        if (t.expiresAt > now) {
          t.expiresAt = now;
          expired++;
        }
      }
    }
    return { expires_in: state.advantage.expiresIn, expired };
  },
  'POST /control/faults': async (req) => {
    // {service, status, count, retry_after}: the next count calls to service
    // (token, lineitems, scores, memberships) answer status, with
    // Retry-After: retry_after if given; a 401 says the token expired.
    const f = only(await readJSON(req), ['service', 'status', 'count', 'retry_after']);
    if (!SERVICES.includes(f.service)) throw new HTTPError(400, `service: want one of ${SERVICES.join(', ')}`);
    if (!Number.isInteger(f.status) || f.status < 400 || f.status > 599) throw new HTTPError(400, 'status: want 400…599');
    if (f.count === undefined) f.count = 1;
    if (!Number.isInteger(f.count) || f.count < 1) throw new HTTPError(400, 'count: want 1 or more');
    if (f.retry_after !== undefined && !(Number.isInteger(f.retry_after) && f.retry_after >= 0)) throw new HTTPError(400, 'retry_after: want whole seconds');
    state.advantage.faults[f.service].push(f);
    return { faults: state.advantage.faults };
  },
  'POST /control/lineitems': async (req) => {
    // A line item made as a teacher would, in context_id (default: the
    // launches' course-7).
    const { context_id: context = 'course-7', ...item } = await readJSON(req);
    return createLineItem(context, item);
  },
  'GET /control/lineitems': async () => ({
    lineitems: [...state.advantage.lineItems.values()].flatMap((items) => [...items.values()]),
  }),
  'POST /control/members': async (req) => {
    // {context_id, members: [{user_id, roles, name, email, status}]}: the
    // context's roster from now on.
    const { context_id: context = 'course-7', members } = only(await readJSON(req), ['context_id', 'members']);
    if (!Array.isArray(members) || members.some((m) => typeof m?.user_id !== 'string' || !Array.isArray(m.roles))) {
      throw new HTTPError(400, 'members: want [{user_id, roles, …}]');
    }
    state.advantage.rosters.set(context, members.map((m) => ({ status: 'Active', ...m })));
    return { context_id: context, members: state.advantage.rosters.get(context).length };
  },
  'GET /control/deep-link-result': async () => {
    const last = state.deepLinkResults.at(-1);
    if (!last) throw new HTTPError(404, 'no Deep Linking response was received');
    return last;
  },
  'POST /control/reset': async () => {
    state.next = null;
    state.jwks = { status: 200, cacheControl: null };
    state.issued.clear();
    state.deepLinkRequests = [];
    state.deepLinkResults = [];
    state.stats = freshStats();
    state.dynreg = freshDynreg();
    state.advantage = freshAdvantage();
    return { reset: true };
  },
};

async function route(req, res) {
  const { pathname } = new URL(req.url, state.url);
  const key = `${req.method} ${pathname}`;
  if (control[key]) {
    sendJSON(res, 200, await control[key](req));
    return;
  }
  switch (key) {
    case 'GET /jwks':
      return jwks(req, res);
    case 'GET /auth':
    case 'POST /auth':
      return authorize(req, res);
    case 'POST /deep-link-return':
      return deepLinkReturn(req, res);
    case 'GET /course':
      return course(req, res);
    case 'GET /storage-relay': return send(res, 200, 'text/html; charset=utf-8', STORAGE_RELAY);
    case 'GET /.well-known/openid-configuration':
      return openidConfiguration(req, res);
    case 'POST /dynreg/register':
      return dynamicRegistration(req, res);
    case 'GET /dynreg-page':
      return dynregPage(req, res);
    case 'POST /token':
      return token(req, res);
    default:
      if (await advantageRoute(req, res, pathname)) return;
      throw new HTTPError(404, `no route ${key}`);
  }
}

async function main() {
  state.keys = [await newKey()];
  state.otherKey = await newKey();
  try {
    setClients(JSON.parse(args.clients));
  } catch (err) {
    console.error(`--clients: ${err.message}`);
    process.exit(2);
  }
  const server = http.createServer((req, res) => {
    route(req, res).catch((err) => {
      const status = err instanceof HTTPError ? err.status : 500;
      if (status === 500) console.error(err);
      if (res.headersSent) {
        res.destroy();
        return;
      }
      const headers = err.headers ?? {};
      const { pathname } = new URL(req.url, state.url);
      if (wantsJSON(req) || /^\/(control|token|ags|nrps)(\/|$)/.test(pathname)) {
        send(res, status, 'application/json', `${JSON.stringify(err.body ?? { error: err.message })}\n`, headers);
      } else {
        send(res, status, 'text/plain; charset=utf-8', `${err.message}\n`, headers);
      }
    });
  });
  server.listen(Number(args.port), args.host, () => {
    const { port } = server.address();
    state.url = `http://${args.host}:${port}`;
    state.issuer ||= state.url;
    process.stdout.write(`${JSON.stringify({ url: state.url, issuer: state.issuer })}\n`);
  });
  // Only a pipe's end means the parent is gone: /dev/null or a terminal
  // would end at once or never.
  const stdin = fs.fstatSync(0);
  if (stdin.isFIFO() || stdin.isSocket()) {
    process.stdin.on('end', () => process.exit(0));
    process.stdin.on('error', () => process.exit(0));
    process.stdin.resume();
  }
}

await main();
