// An email's HTML, shown only in a sandboxed frame: `sandbox=""` (no scripts, no forms, an opaque origin) and the
// HTML as `srcdoc`, so the frame inherits the page's CSP and loads nothing remote.
export function HtmlFrame({ html, title }: { html: string; title: string }) {
  return <iframe className="preview" title={title} sandbox="" srcDoc={html} />;
}
