// A domain's sending settings: open and click tracking, and the TLS policy of its outgoing mail (PATCH
// /domains/{id}). Members change them; a viewer reads them.
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { FormError, Submit, useSubmit } from '../../form';

type Domain = Schemas['Domain'];

const TLS_WORDS: Record<Domain['tls'], string> = {
  opportunistic: 'Opportunistic: encrypted whenever the receiving server offers STARTTLS, otherwise sent in the clear.',
  enforced:
    'Enforced: never sent in the clear; without an encrypted session the mail waits and is retried (bounced after ' +
    '72 hours).',
};

export function DomainSettings({ domain, member, changed }: { domain: Domain; member: boolean; changed: () => void }) {
  const [saved, setSaved] = useState(false);
  const form = useSubmit(
    (f) =>
      api.PATCH('/domains/{domain_id}', {
        params: { path: { domain_id: domain.id } },
        body: {
          open_tracking: f.get('open_tracking') === 'on',
          click_tracking: f.get('click_tracking') === 'on',
          tls: f.get('tls') as Domain['tls'],
        },
      }),
    () => {
      setSaved(true);
      changed();
    },
  );
  if (!member)
    return (
      <section aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <dl className="facts">
          <dt>Open tracking</dt>
          <dd>{domain.open_tracking ? 'on' : 'off'}</dd>
          <dt>Click tracking</dt>
          <dd>{domain.click_tracking ? 'on' : 'off'}</dd>
          <dt>TLS</dt>
          <dd>{TLS_WORDS[domain.tls]}</dd>
        </dl>
      </section>
    );
  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <form
        id="domain-settings"
        // Saved values come back as the domain is loaded again: the form starts over from them.
        key={`${domain.open_tracking} ${domain.click_tracking} ${domain.tls}`}
        onSubmit={(e) => {
          setSaved(false);
          void form.onSubmit(e);
        }}
      >
        <label className="check">
          <input type="checkbox" name="open_tracking" defaultChecked={domain.open_tracking} /> Open tracking (a pixel in
          the HTML)
        </label>
        <label className="check">
          <input type="checkbox" name="click_tracking" defaultChecked={domain.click_tracking} /> Click tracking (links
          go through the tracking host)
        </label>
        <p className="muted">
          Tracking adds records to publish (a CNAME at <code>{domain.tracking_subdomain ?? 'links'}</code> and a CAA):
          tracked links and the pixel answer once they are published. Sending never waits for them.
        </p>
        <label className="field">
          <span>TLS for outgoing mail</span>
          <select name="tls" defaultValue={domain.tls} aria-describedby="tls-help">
            <option value="opportunistic">Opportunistic (the default)</option>
            <option value="enforced">Enforced</option>
          </select>
        </label>
        <p className="muted" id="tls-help">
          {TLS_WORDS.opportunistic} {TLS_WORDS.enforced}
        </p>
        <FormError error={form.error} />
        <Submit busy={form.busy}>Save the settings</Submit>
        {saved ? <span role="status"> Saved.</span> : null}
      </form>
    </section>
  );
}
