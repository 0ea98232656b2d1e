/*
 * The page an LTI launch answers with (POST /lti/v1/launch) loads this
 * script after sdk.js. It opens the LiveProctor component in #proctor for
 * the launching user, with the token and the exam configuration the page
 * holds in data attributes (never in a URL), and forgets the token's
 * attribute once read. The component renders its own errors.
 */
(function () {
  'use strict';
  var el = document.getElementById('proctor');
  if (!el || typeof WorkspaceSDK === 'undefined') return;
  var auth = el.getAttribute('data-auth') || '';
  var examConfigId = el.getAttribute('data-exam-config-id') || '';
  el.removeAttribute('data-auth');
  var lp = new WorkspaceSDK.LiveProctor('proctor', { auth: auth });
  lp.init({ examConfigId: examConfigId }).catch(function () {
    // The component shows the error in #proctor and emits 'error'.
  });
})();
