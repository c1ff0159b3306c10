// "Send an email" on the Emails page (members and admins): from an address at one of the team's domains that may
// send (verified, sending enabled; the managed domain among them), to one or more addresses, a subject, and a text
// or HTML body; POST /emails as any client sends. A refusal shows the api's message and each field's path (`to.0`,
// `from`); the form keeps what was typed until the send is accepted.
import { useState } from 'react';
import { Link } from 'react-router';
import { api, type Schemas } from '../api/client';
import { FormError, Submit, text, useSubmit } from '../form';
import { Shown, useLoad } from '../ui';

/** A display name as a From header takes it: quoted when it holds a character with a meaning there (RFC 5322). */
export const displayName = (name: string) =>
  /[()<>[\]:;@\\,."]/.test(name) ? `"${name.replace(/["\\]/g, (c) => `\\${c}`)}"` : name;

/** Addresses typed one per line or separated by commas. */
export const addressList = (value: string) =>
  value
    .split(/[\n,]/)
    .map((a) => a.trim())
    .filter(Boolean);

/** The button, and the form once asked for (the domains are loaded then, not with the list). */
export function SendEmail({ sent }: { sent: (id: string) => void }) {
  const [open, setOpen] = useState(false);
  const [last, setLast] = useState<string | null>(null);
  return (
    <>
      {last ? (
        <p className="once panel" role="status">
          Sent. <Link to={`/dashboard/emails/${last}`}>Follow its delivery</Link>
        </p>
      ) : null}
      {open ? (
        <SendForm
          close={() => setOpen(false)}
          sent={(id) => {
            setLast(id);
            setOpen(false);
            sent(id);
          }}
        />
      ) : (
        <p>
          <button type="button" onClick={() => setOpen(true)}>
            Send an email
          </button>
        </p>
      )}
    </>
  );
}

type Domain = Schemas['DomainListItem'];

/** The team's domains first: the form needs one that may send. */
function SendForm({ sent, close }: { sent: (id: string) => void; close: () => void }) {
  const [domains] = useLoad(() => api.GET('/domains', { params: { query: { limit: '100' } } }), []);
  return (
    <Shown load={domains} what="your domains">
      {(l) => {
        const usable = l.data.filter((d) => d.status === 'verified' && d.capabilities.sending === 'enabled');
        if (usable.length > 0) return <Compose domains={usable} sent={sent} close={close} />;
        return (
          <div className="panel" id="send-email-form">
            <h2>Send an email</h2>
            <p>
              No domain of the team may send yet. <Link to="/dashboard/domains">Verify one</Link> first.
            </p>
            <button type="button" className="secondary" onClick={close}>
              Close
            </button>
          </div>
        );
      }}
    </Shown>
  );
}

function Compose(props: { domains: Domain[]; sent: (id: string) => void; close: () => void }) {
  const { domains, close } = props;
  const [format, setFormat] = useState<'text' | 'html'>('text');
  const send = useSubmit(
    (f) => {
      const name = text(f, 'from_name').trim();
      const address = `${text(f, 'from_local').trim()}@${text(f, 'from_domain')}`;
      const body = text(f, 'body');
      return api.POST('/emails', {
        body: {
          from: name ? `${displayName(name)} <${address}>` : address,
          to: addressList(text(f, 'to')),
          subject: text(f, 'subject'),
          ...(format === 'html' ? { html: body } : { text: body }),
        },
      });
    },
    (r) => props.sent(r.id),
  );
  return (
    <form className="panel" id="send-email-form" onSubmit={send.onSubmit}>
      <h2>Send an email</h2>
      <fieldset className="from">
        <legend>From</legend>
        <label className="field">
          <span>Name (optional)</span>
          <input name="from_name" autoComplete="off" />
        </label>
        <div className="address">
          <label className="field">
            <span>Address</span>
            <input name="from_local" required defaultValue="hello" autoComplete="off" />
          </label>
          <label className="field domain">
            <span>Domain</span>
            <span className="at-domain">
              <span aria-hidden="true" className="at">
                @
              </span>
              <select name="from_domain" defaultValue={(domains.find((d) => !d.managed) ?? domains[0]).name}>
                {domains.map((d) => (
                  <option key={d.id} value={d.name}>
                    {d.name}
                    {d.managed ? ' (managed)' : ''}
                  </option>
                ))}
              </select>
            </span>
          </label>
        </div>
      </fieldset>
      <label className="field">
        <span>To</span>
        <input name="to" required autoComplete="off" placeholder="one@example.com, two@example.com" />
      </label>
      <label className="field">
        <span>Subject</span>
        <input name="subject" required autoComplete="off" />
      </label>
      <fieldset className="format">
        <legend>Body</legend>
        <label className="check">
          <input type="radio" name="format" checked={format === 'text'} onChange={() => setFormat('text')} /> Text
        </label>
        <label className="check">
          <input type="radio" name="format" checked={format === 'html'} onChange={() => setFormat('html')} /> HTML
        </label>
      </fieldset>
      <label className="field">
        <span>{format === 'html' ? 'HTML body' : 'Text body'}</span>
        <textarea name="body" rows={8} required />
      </label>
      <FormError error={send.error} />
      <div className="actions">
        <Submit busy={send.busy}>Send</Submit>
        <button type="button" className="secondary" onClick={close}>
          Cancel
        </button>
      </div>
    </form>
  );
}
