// Send now or schedule: `scheduled_at` as the emails' phrase grammar (`in 2 hours`, `tomorrow at 9am`) or a date and
// time picked in the browser's timezone. A send refused by failing pre-send checks offers to send anyway once the
// person confirms they read them (`acknowledge_checks: true`).
import { useId, useState } from 'react';

export interface SendRequest {
  scheduled_at?: string;
  acknowledge_checks?: boolean;
}

export function SendPanel(p: {
  saved: boolean;
  busy: string | null;
  failing: number;
  send: (req: SendRequest) => void;
}) {
  const [when, setWhen] = useState<'now' | 'later'>('now');
  const [at, setAt] = useState('');
  const [acknowledged, setAcknowledged] = useState(false);
  const id = useId();
  const req = (): SendRequest => ({
    ...(when === 'later' ? { scheduled_at: at } : {}),
    ...(p.failing > 0 && acknowledged ? { acknowledge_checks: true } : {}),
  });
  return (
    <section className="panel editor-panel" aria-labelledby="send-title" id="send-panel">
      <h2 id="send-title">Send</h2>
      {!p.saved ? (
        <p className="hint">Save the draft first; then send it now or schedule it.</p>
      ) : (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            p.send(req());
          }}
        >
          <fieldset className="choice">
            <legend>When</legend>
            <label>
              <input type="radio" name="when" checked={when === 'now'} onChange={() => setWhen('now')} /> Now
            </label>
            <label>
              <input type="radio" name="when" checked={when === 'later'} onChange={() => setWhen('later')} /> At a time
            </label>
          </fieldset>
          {when === 'later' ? (
            <div className="field">
              <label htmlFor={`${id}-at`}>
                <span>Send at</span>
              </label>
              <input
                id={`${id}-at`}
                name="scheduled_at"
                value={at}
                placeholder="in 2 hours"
                aria-describedby={`${id}-at-hint`}
                onChange={(e) => setAt(e.target.value)}
              />
              <small className="hint" id={`${id}-at-hint`}>
                A phrase (<code>in 2 hours</code>, <code>tomorrow at 9am</code>) or a date and time, within 30 days.
              </small>
              <label className="field">
                <span>Or pick a date and time (your timezone)</span>
                <input
                  type="datetime-local"
                  onChange={(e) => setAt(e.target.value ? new Date(e.target.value).toISOString() : '')}
                />
              </label>
            </div>
          ) : null}
          {p.failing > 0 ? (
            <label className="acknowledge">
              <input type="checkbox" checked={acknowledged} onChange={(e) => setAcknowledged(e.target.checked)} />{' '}
              {p.failing === 1 ? 'A pre-send check fails' : `${p.failing} pre-send checks fail`}: I have read the
              findings and send anyway.
            </label>
          ) : null}
          <button type="submit" disabled={!!p.busy || (p.failing > 0 && !acknowledged)}>
            {p.busy === 'send' ? 'Sending…' : when === 'later' ? 'Schedule' : 'Send now'}
          </button>
        </form>
      )}
    </section>
  );
}
