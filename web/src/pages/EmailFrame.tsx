// An email's HTML in a sandboxed frame that opens the email's own page (a sent email's GET /emails/{id}/html, a
// received one's GET /emails/receiving/{id}/html), whose policy lets the email's inline styles apply and shows its own
// `cid:` images (an `srcdoc` frame would inherit this page's strict policy and show the email unstyled, its images
// missing). The frame has no script, no form, no popup and an opaque origin (`sandbox=""`).
// Remote images stay blocked until the person asks for them: loading them tells their hosts (a tracking pixel's
// among them) the reader's address.
import { useState } from 'react';

export function EmailFrame({ page, title }: { page: string; title: string }) {
  const [remote, setRemote] = useState(false);
  const src = `${page}${remote ? '?images=remote' : ''}`;
  return (
    <>
      <label className="check">
        <input type="checkbox" id="remote-images" checked={remote} onChange={(e) => setRemote(e.target.checked)} /> Load
        remote images (their hosts see your IP address)
      </label>
      <iframe className="preview" title={title} sandbox="" referrerPolicy="no-referrer" src={src} />
    </>
  );
}
