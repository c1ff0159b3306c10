// An email's HTML in a sandboxed frame that opens the email's own page (a sent email's GET /emails/{id}/html, a
// received one's GET /emails/receiving/{id}/html), whose policy lets the email's inline styles apply and shows its own
// `cid:` images (an `srcdoc` frame would inherit this page's strict policy and show the email unstyled, its images
// missing). The frame has no script, no form, no popup and an opaque origin (`sandbox=""`).
// Remote images stay blocked until the person asks for them: loading them tells their hosts (a tracking pixel's
// among them) the reader's address. The choice is offered only when the HTML names such an image.
import { useState } from 'react';

/** An image on another host: an http(s) or scheme-relative URL in src, srcset, background or a CSS url(). */
const REMOTE_IMAGE = /(?:\b(?:src|srcset|background)\s*=\s*["']?\s*|url\(\s*["']?\s*)(?:https?:)?\/\//i;

export function EmailFrame({ page, title, html }: { page: string; title: string; html: string }) {
  const [remote, setRemote] = useState(false);
  const src = `${page}${remote ? '?images=remote' : ''}`;
  return (
    <>
      {REMOTE_IMAGE.test(html) ? (
        <label className="check">
          <input type="checkbox" id="remote-images" checked={remote} onChange={(e) => setRemote(e.target.checked)} />{' '}
          Load remote images (their hosts see your IP address)
        </label>
      ) : null}
      <iframe className="preview" title={title} sandbox="" referrerPolicy="no-referrer" src={src} />
    </>
  );
}
