// An endpoint's URL and event types: the form that creates one and the one that edits it. The events are checkboxes
// grouped by subject, each group with a "all of them" box; the api refuses an empty choice with its own message.
import { useEffect, useRef, useState } from 'react';
import type { Schemas } from '../../api/client';
import { FormError, Submit, text, useSubmit } from '../../form';
import { CopyButton, type Answer } from '../../ui';
import { groups, type EventType } from './webhook-events';

export function EndpointForm<T>(props: {
  id: string;
  title: string;
  submit: string;
  initial?: Pick<Schemas['WebhookListItem'], 'endpoint' | 'events'>;
  /** Put the focus in the URL field on opening (the button that opened the form is gone). */
  focusFirst?: boolean;
  send: (body: { endpoint: string; events: EventType[] }) => Promise<Answer<T>>;
  done: (data: T) => void;
}) {
  const [chosen, setChosen] = useState<Set<EventType>>(
    new Set(props.initial?.events ?? ['email.sent', 'email.delivered', 'email.bounced']),
  );
  const form = useSubmit((f) => props.send({ endpoint: text(f, 'endpoint'), events: [...chosen] }), props.done);
  const url = useRef<HTMLInputElement>(null);
  const { focusFirst } = props;
  useEffect(() => {
    if (focusFirst) url.current?.focus();
  }, [focusFirst]);
  const toggle = (types: EventType[], on: boolean) => {
    const next = new Set(chosen);
    for (const t of types)
      if (on) next.add(t);
      else next.delete(t);
    setChosen(next);
  };
  return (
    <form className="panel" id={props.id} onSubmit={form.onSubmit}>
      <h2>{props.title}</h2>
      <label className="field">
        <span>Endpoint URL</span>
        <input
          ref={url}
          name="endpoint"
          type="url"
          required
          defaultValue={props.initial?.endpoint}
          placeholder="https://example.com/webhooks"
        />
      </label>
      <div className="event-groups">
        {groups().map(([group, types]) => {
          const all = types.every((t) => chosen.has(t));
          return (
            <fieldset key={group} className="events">
              <legend>
                <label>
                  <input type="checkbox" checked={all} onChange={(e) => toggle(types, e.target.checked)} /> All {group}{' '}
                  events
                </label>
              </legend>
              {types.map((t) => (
                <label key={t} className="check">
                  <input
                    type="checkbox"
                    name="events"
                    value={t}
                    checked={chosen.has(t)}
                    onChange={(e) => toggle([t], e.target.checked)}
                  />{' '}
                  <code>{t}</code>
                </label>
              ))}
            </fieldset>
          );
        })}
      </div>
      <p className="muted">{chosen.size} event types chosen.</p>
      <FormError error={form.error} />
      <Submit busy={form.busy}>{props.submit}</Submit>
    </form>
  );
}

/** A signing secret, shown only in the answer that made it. */
export function SecretOnce({ secret, close }: { secret: string; close: () => void }) {
  return (
    <section className="panel once" aria-labelledby="secret-title">
      <h2 id="secret-title">The endpoint's signing secret</h2>
      <p>Copy it now: it is shown only this once. Verify each request's signature with it.</p>
      <p className="secret">
        <code id="signing-secret">{secret}</code> <CopyButton text={secret} label="Copy the signing secret" />
      </p>
      <button type="button" onClick={close}>
        Done
      </button>
    </section>
  );
}
