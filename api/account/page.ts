// A small account page, until the dashboard exists: sign-up, the verification link, sign-in with MFA, enrolment and
// sign-out, at /account, driving the JSON routes of the auth area (docs/accounts.md). Its script is a file of its own
// (/account/app.js) and its CSP allows nothing else: no inline script, requests to this origin only.
import type { Context, Next } from 'koa';
import { ACCOUNT_SCRIPT } from './script.ts';

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Postwerk account</title>
<link rel="stylesheet" href="/account/app.css">
</head>
<body>
<main>
<h1>Postwerk</h1>
<p id="note" role="status"></p>
<section id="signup" hidden>
<h2>Create an account</h2>
<form id="signup-form">
<label>Name <input name="name" autocomplete="name"></label>
<label>Email <input name="email" type="email" required autocomplete="email"></label>
<label>Password <input name="password" type="password" required minlength="8" autocomplete="new-password"></label>
<button type="submit">Sign up</button>
</form>
<p>Have an account? <a href="#login" data-view="login">Sign in</a></p>
</section>
<section id="sent" hidden><h2>Check your inbox</h2></section>
<section id="login" hidden>
<h2>Sign in</h2>
<form id="login-form">
<label>Email <input name="email" type="email" required autocomplete="username"></label>
<label>Password <input name="password" type="password" required autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form>
<p>New here? <a href="#signup" data-view="signup">Create an account</a></p>
</section>
<section id="mfa" hidden>
<h2>Two-factor code</h2>
<form id="mfa-form">
<label>Code from your authenticator <input name="code" inputmode="numeric" autocomplete="one-time-code" required></label>
<button type="submit">Continue</button>
</form>
</section>
<section id="reset" hidden>
<h2>Choose a new password</h2>
<form id="reset-form">
<label>New password <input name="password" type="password" required minlength="8" autocomplete="new-password"></label>
<button type="submit">Set password</button>
</form>
</section>
<section id="home" hidden>
<h2>Signed in as <span id="who"></span></h2>
<p>Two-factor authentication: <strong id="mfa-state"></strong></p>
<button id="enrol" type="button">Turn on two-factor authentication</button>
<div id="enrolment" hidden>
<p>Add this key to your authenticator app:</p>
<pre id="secret"></pre>
<pre id="otpauth"></pre>
<form id="confirm-form">
<label>Code <input name="code" inputmode="numeric" autocomplete="one-time-code" required></label>
<label>Password <input name="password" type="password" required autocomplete="current-password"></label>
<button type="submit">Turn on</button>
</form>
</div>
<div id="codes" hidden>
<p>Recovery codes (shown once; each works once):</p>
<pre id="recovery-codes"></pre>
</div>
<p><button id="logout" type="button">Sign out</button></p>
</section>
<section id="message" hidden></section>
</main>
<script src="/account/app.js"></script>
</body>
</html>
`;

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2433}
main{max-width:28rem;margin:3rem auto;padding:2rem;background:#fff;border-radius:8px;box-shadow:0 1px 4px #0002}
label{display:block;margin:.75rem 0}input{display:block;width:100%;box-sizing:border-box;padding:.5rem;font:inherit}
button{padding:.5rem 1rem;font:inherit;background:#2451c7;color:#fff;border:0;border-radius:4px;cursor:pointer}
pre{white-space:pre-wrap;word-break:break-all;background:#f0f2f5;padding:.5rem}#note{color:#a12;min-height:1.5em}
[hidden]{display:none!important}`;

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const FILES: Record<string, { type: string; body: string }> = {
  '/account': { type: 'text/html; charset=utf-8', body: PAGE },
  '/account/app.js': { type: 'text/javascript; charset=utf-8', body: ACCOUNT_SCRIPT },
  '/account/app.css': { type: 'text/css; charset=utf-8', body: STYLE },
};

export async function accountPages(ctx: Context, next: Next) {
  const file = (ctx.method === 'GET' || ctx.method === 'HEAD') && Object.hasOwn(FILES, ctx.path) && FILES[ctx.path];
  if (!file) return next();
  ctx.set('Content-Security-Policy', CSP);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.type = file.type;
  ctx.body = file.body;
}
