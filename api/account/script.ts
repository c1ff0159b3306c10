// The script of the account page (page.ts), as text: it runs in the browser, served as /account/app.js (the page's
// CSP runs no inline script). It drives the JSON routes of the auth area with fetch, sending the CSRF cookie's value
// as X-CSRF-Token on every write, as the dashboard will.
export const ACCOUNT_SCRIPT = String.raw`'use strict';
const $ = (id) => document.getElementById(id);
const views = ['signup', 'sent', 'login', 'mfa', 'home', 'reset', 'message'];
function show(view, message) {
  for (const v of views) $(v).hidden = v !== view;
  if (message !== undefined) $('note').textContent = message;
}
function csrf() {
  const m = /(?:^|; )(?:__Host-)?postwerk_csrf=([^;]+)/.exec(document.cookie);
  return m ? m[1] : '';
}
async function call(method, path, body) {
  const headers = { 'content-type': 'application/json' };
  if (method !== 'GET') headers['x-csrf-token'] = csrf();
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const data = await res.json().catch(() => ({}));
  if (!res.ok) throw new Error(data.message || 'HTTP ' + res.status);
  return data;
}
const fields = (form) => Object.fromEntries(new FormData(form).entries());
function onSubmit(id, run) {
  $(id).addEventListener('submit', async (e) => {
    e.preventDefault();
    $('note').textContent = '';
    try { await run(fields(e.target)); } catch (err) { $('note').textContent = err.message; }
  });
}
let challenge = null;
async function home() {
  const me = await call('GET', '/me');
  const mfa = await call('GET', '/auth/mfa');
  $('who').textContent = me.email;
  $('mfa-state').textContent = mfa.enabled ? 'on' : 'off';
  $('enrol').hidden = mfa.enabled;
  $('enrolment').hidden = true;
  $('codes').hidden = true;
  show('home');
}
onSubmit('signup-form', async (f) => { await call('POST', '/auth/signup', f); show('sent', 'Check your inbox for the link that creates your account.'); });
onSubmit('login-form', async (f) => {
  const r = await call('POST', '/auth/login', f);
  if (r.object === 'mfa_challenge') { challenge = r.challenge_token; show('mfa'); return; }
  await home();
});
onSubmit('mfa-form', async (f) => { await call('POST', '/auth/login/mfa', { challenge_token: challenge, code: f.code }); await home(); });
onSubmit('confirm-form', async (f) => {
  const r = await call('POST', '/auth/mfa/confirm', f);
  $('recovery-codes').textContent = r.recovery_codes.join('\n');
  $('enrolment').hidden = true;
  $('codes').hidden = false;
  $('mfa-state').textContent = 'on';
});
onSubmit('reset-form', async (f) => { await call('POST', '/auth/password-reset/confirm', { token: location.hash.slice(7), password: f.password }); show('login', 'Your password is set: sign in.'); });
$('enrol').addEventListener('click', async () => {
  const r = await call('POST', '/auth/mfa/enrol', {});
  $('secret').textContent = r.secret;
  $('otpauth').textContent = r.otpauth_url;
  $('enrol').hidden = true;
  $('enrolment').hidden = false;
});
$('logout').addEventListener('click', async () => { await call('POST', '/auth/logout', {}); show('login', 'Signed out.'); });
for (const a of document.querySelectorAll('a[data-view]')) a.addEventListener('click', (e) => { e.preventDefault(); show(a.dataset.view, ''); });
async function start() {
  const hash = location.hash.slice(1);
  const [what, token] = hash.split('=');
  if (what === 'verify' && token) {
    try { await call('POST', '/auth/verify-email', { token: decodeURIComponent(token) }); show('login', 'Your address is confirmed: sign in.'); }
    catch (err) { show('message', err.message); }
    history.replaceState(null, '', location.pathname + '#login');
    return;
  }
  if (what === 'reset' && token) return show('reset', '');
  if (what === 'invite' && token) {
    try { await call('POST', '/team-invitations/accept', { token: decodeURIComponent(token) }); return home(); }
    catch (err) { return show('login', err.message + ' Sign in with the invited address, then open the link again.'); }
  }
  try { await home(); } catch { show(what === 'signup' ? 'signup' : 'login', ''); }
}
window.addEventListener('hashchange', start);
start();
`;
