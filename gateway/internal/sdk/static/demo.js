// The demo page's script: launches LiveProctor components and logs their
// events. Everything shown is set with textContent.
(function () {
  'use strict';

  var byId = function (id) { return document.getElementById(id); };
  var log = byId('log');
  var components = byId('components');
  var count = 0;

  function write(line) {
    var row = document.createElement('div');
    row.textContent = new Date().toISOString().slice(11, 23) + '  ' + line;
    log.appendChild(row);
    log.scrollTop = log.scrollHeight;
  }

  function describe(detail) {
    if (detail instanceof Error) {
      return detail.code + ': ' + detail.message + (detail.requestId ? ' (request ' + detail.requestId + ')' : '');
    }
    return JSON.stringify(detail);
  }

  byId('clear-log').addEventListener('click', function () {
    while (log.firstChild) log.removeChild(log.firstChild);
  });

  byId('launch').addEventListener('submit', function (ev) {
    ev.preventDefault();
    count += 1;
    var name = '#' + count;
    var holder = document.createElement('div');
    holder.id = 'liveproctor-' + count;
    var slot = document.createElement('div');
    slot.id = 'liveproctor-slot-' + count;
    var close = document.createElement('button');
    close.type = 'button';
    close.textContent = 'Close ' + name;
    holder.appendChild(slot);
    holder.appendChild(close);
    components.insertBefore(holder, components.firstChild);

    var options = { auth: byId('token').value.trim() };
    var base = byId('base').value.trim();
    if (base) options.baseUrl = base;
    var lp = new window.WorkspaceSDK.LiveProctor(slot.id, options);
    ['ready', 'error', 'expired'].forEach(function (evName) {
      lp.on(evName, function (detail) { write(name + ' ' + evName + ' ' + describe(detail)); });
    });
    close.addEventListener('click', function () {
      lp.destroy();
      components.removeChild(holder);
      write(name + ' destroyed');
    });
    write(name + ' init examConfigId=' + JSON.stringify(byId('exam').value.trim()));
    lp.init({ examConfigId: byId('exam').value.trim() }).catch(function () { /* logged by the error event */ });
  });

  byId('login').addEventListener('submit', function (ev) {
    ev.preventDefault();
    var base = (byId('base').value.trim() || window.location.origin).replace(/\/+$/, '');
    var basic = btoa(unescape(encodeURIComponent(byId('appKey').value.trim() + ':' + byId('appSecret').value)));
    fetch(base + '/api/login/sdk', {
      method: 'POST',
      credentials: 'omit',
      headers: { 'Authorization': 'Basic ' + basic, 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: byId('email').value.trim(), workspaceId: byId('workspaceId').value.trim() })
    }).then(function (resp) {
      return resp.json().then(function (body) {
        if (!resp.ok) {
          throw new Error((body && body.error && body.error.message) || 'HTTP ' + resp.status);
        }
        byId('token').value = body.auth;
        write('login ok, token expires at ' + body.expiresAt);
      });
    }).catch(function (err) {
      write('login failed: ' + err.message);
    });
  });

  write('WorkspaceSDK ' + window.WorkspaceSDK.version + ' loaded');
})();
