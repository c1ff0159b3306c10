// The team: its facts, renaming it (admins), leaving it (anyone but the last admin).
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api } from '../../api/client';
import { Confirm } from '../../dialog';
import { Field, FormError, Submit, text, useSubmit } from '../../form';
import { useSession } from '../../session';
import { formatTime } from '../../time';
import { ErrorBox, Shown, useLoad } from '../../ui';
import { AdminsOnly, isAdmin, useAction, useCurrent } from './common';

export function TeamSettings() {
  const current = useCurrent();
  const { load } = useSession();
  const team = load.state === 'ready' ? load.data.me.teams.find((t) => t.id === current.teamId) : undefined;
  return (
    <>
      <h1>Team</h1>
      {team ? (
        <dl className="facts">
          <dt>Name</dt>
          <dd id="team-name">{team.name}</dd>
          <dt>Slug</dt>
          <dd>
            <code>{team.slug}</code>
          </dd>
          <dt>Created</dt>
          <dd>{formatTime(team.created_at)}</dd>
          <dt>Your role</dt>
          <dd>{current.role}</dd>
          <dt>State</dt>
          <dd>{team.risk_state === 'deletion_scheduled' ? 'deletion scheduled' : team.risk_state}</dd>
        </dl>
      ) : null}
      <Sending />
      {isAdmin(current) ? (
        <Rename name={current.teamName} />
      ) : (
        <AdminsOnly what="rename the team" role={current.role} />
      )}
      <Leave />
    </>
  );
}

/** What the team sends from and to (GET /team): its plan, managed domain, the sandbox and its identities. */
function Sending() {
  const [team] = useLoad(() => api.GET('/team'), []);
  return (
    <section aria-labelledby="sending-title">
      <h2 id="sending-title">Sending</h2>
      <Shown load={team} what="the team's sending facts">
        {(t) => (
          <dl className="facts" id="sending-facts">
            <dt>Plan</dt>
            <dd>{t.plan.name}</dd>
            <dt>Managed domain</dt>
            <dd>{t.sender_identity.managed_domain ? <code>{t.sender_identity.managed_domain}</code> : '—'}</dd>
            <dt>Sandbox</dt>
            <dd>
              {t.sending.sandbox_regions.length === 0
                ? 'out of the sandbox'
                : `in the sandbox (${t.sending.sandbox_regions.join(', ')}): it sends only to its identities`}
            </dd>
            <dt>Identities</dt>
            <dd>{t.sender_identity.verified_identities.join(', ') || '—'}</dd>
            <dt>Rate limit</dt>
            <dd>{t.sending.rate_limit.requests_per_second} requests a second</dd>
          </dl>
        )}
      </Shown>
    </section>
  );
}

function Rename({ name }: { name: string }) {
  const current = useCurrent();
  const { reload } = useSession();
  const [done, setDone] = useState(false);
  const rename = useSubmit(
    (f) =>
      api.PATCH('/teams/{team_id}', { params: { path: { team_id: current.teamId } }, body: { name: text(f, 'name') } }),
    () => {
      setDone(true);
      reload();
    },
  );
  return (
    <form className="panel" id="rename-team-form" onSubmit={rename.onSubmit}>
      <h2>Rename the team</h2>
      <Field label="Team name" name="name" required defaultValue={name} />
      <FormError error={rename.error} />
      {done ? <p role="status">The team is renamed.</p> : null}
      <Submit busy={rename.busy}>Save the name</Submit>
    </form>
  );
}

function Leave() {
  const current = useCurrent();
  const { reload } = useSession();
  const navigate = useNavigate();
  const [asking, setAsking] = useState(false);
  const leave = useAction();
  return (
    <section className="panel">
      <h2>Leave the team</h2>
      <p>You lose access to its emails, domains and keys. The last admin cannot leave.</p>
      {leave.error && !asking ? <ErrorBox error={leave.error} /> : null}
      <button type="button" className="secondary danger" onClick={() => setAsking(true)}>
        Leave the team
      </button>
      {asking ? (
        <Confirm
          title={`Leave “${current.teamName}”?`}
          action="Leave"
          busy={leave.busy}
          onClose={() => setAsking(false)}
          onConfirm={() =>
            void leave
              .run(
                () => api.POST('/teams/{team_id}/leave', { params: { path: { team_id: current.teamId } }, body: {} }),
                () => {
                  reload();
                  navigate('/dashboard/emails');
                },
              )
              .then(() => setAsking(false))
          }
        >
          <p>An admin has to invite you again for you to come back.</p>
        </Confirm>
      ) : null}
    </section>
  );
}
