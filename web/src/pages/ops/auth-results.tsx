// A received message's authentication as the MX found it: the first Authentication-Results field of its headers
// (RFC 8601), which the receive job puts in front after removing any that claimed its name (a message it did not
// authenticate gets its `none`). SPF, DKIM, DMARC and ARC, each with its result and the domain it was about.

/** One method's verdict: `dkim` may come once per signature. */
interface Verdict {
  method: string;
  result: string;
  /** The domain the verdict is about (SPF: the MAIL FROM's, DKIM: the signer's, DMARC: the From's), if named. */
  domain: string | null;
}

const METHODS = new Set(['spf', 'dkim', 'dmarc', 'arc']);
const DOMAIN_OF: Record<string, RegExp> = {
  spf: /\bsmtp\.mailfrom=(?:[^\s;@]*@)?([^\s;]+)/i,
  dkim: /\bheader\.d=([^\s;]+)/i,
  dmarc: /\bheader\.from=([^\s;]+)/i,
};

/** An Authentication-Results value read: its authserv-id and each SPF, DKIM, DMARC and ARC verdict, in order. */
function readAuthResults(value: string): { by: string; none: boolean; verdicts: Verdict[] } {
  // Comments go first (RFC 8601 §2.2 allows them anywhere); quoted reasons cannot hold the separators we split on
  // in what mailers write, and a verdict read wrong only mislabels a line shown to a person.
  const [head = '', ...rest] = value.replace(/\([^()]*\)/g, ' ').split(';');
  const verdicts: Verdict[] = [];
  for (const part of rest) {
    const m = /^\s*([a-z-]+)(?:\/\d+)?\s*=\s*([a-z]+)/i.exec(part);
    if (!m || !METHODS.has(m[1].toLowerCase())) continue;
    const method = m[1].toLowerCase();
    verdicts.push({ method, result: m[2].toLowerCase(), domain: DOMAIN_OF[method]?.exec(part)?.[1] ?? null });
  }
  // `authserv-id; none` (RFC 8601 §2.2): no method was applied.
  const none = rest.length === 1 && rest[0].trim().toLowerCase() === 'none';
  return { by: head.trim().split(/\s+/)[0] ?? '', none, verdicts };
}

const TONE: Record<string, string> = {
  pass: 'verified',
  fail: 'failed',
  permerror: 'failed',
  softfail: 'pending',
  temperror: 'pending',
  policy: 'pending',
};

/** The verdicts of the message's first Authentication-Results field (`none`: not checked), or nothing without any. */
export function AuthVerdicts({ headers }: { headers: Record<string, string> }) {
  const field = headers['authentication-results']?.split('\n')[0];
  if (!field) return null;
  const { by, none, verdicts } = readAuthResults(field);
  if (none)
    return (
      <>
        <dt>Authentication</dt>
        <dd id="authentication" className="muted">
          Not checked by {by}
        </dd>
      </>
    );
  if (!verdicts.length) return null;
  return (
    <>
      <dt>Authentication</dt>
      <dd id="authentication">
        <ul className="verdicts">
          {verdicts.map((v, i) => (
            <li key={i} data-method={v.method}>
              {v.method.toUpperCase()} <span className={`badge ${TONE[v.result] ?? ''}`}>{v.result}</span>
              {v.domain ? <span className="muted"> {v.domain}</span> : null}
            </li>
          ))}
        </ul>
        <span className="muted">checked by {by}</span>
      </dd>
    </>
  );
}
