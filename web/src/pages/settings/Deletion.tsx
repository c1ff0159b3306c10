// Deleting the team (admins): typed confirmation of its name, 30 days in which to cancel, then erased for good.
import { useState } from 'react';
import { api, type Schemas } from '../../api/client';
import { FormError, Submit, useSubmit } from '../../form';
import { useSession } from '../../session';
import { formatTime } from '../../time';
import { ErrorBox, Shown, useLoad } from '../../ui';
import { AdminsOnly, isAdmin, useAction, useCurrent } from './common';

type TeamDeletion = Schemas['TeamDeletion'];

export function Deletion() {
  const current = useCurrent();
  const [state, reload] = useLoad(
    () => api.GET('/teams/{team_id}/deletion', { params: { path: { team_id: current.teamId } } }),
    [current.teamId],
  );
  return (
    <>
      <h1>Delete the team</h1>
      <Shown load={state} what="the team's deletion">
        {(d) =>
          d.status === 'none' ? (
            isAdmin(current) ? (
              <Schedule changed={reload} />
            ) : (
              <>
                <p>No deletion is scheduled.</p>
                <AdminsOnly what="delete the team" role={current.role} />
              </>
            )
          ) : (
            <Scheduled deletion={d} changed={reload} />
          )
        }
      </Shown>
    </>
  );
}

function Schedule({ changed }: { changed: () => void }) {
  const current = useCurrent();
  const { reload } = useSession();
  const [typed, setTyped] = useState('');
  const schedule = useSubmit(
    () =>
      api.POST('/teams/{team_id}/deletion', {
        params: { path: { team_id: current.teamId } },
        body: { confirm: typed },
      }),
    () => {
      changed();
      reload();
    },
  );
  return (
    <form className="panel danger-zone" id="delete-team-form" onSubmit={schedule.onSubmit}>
      <p>
        Sending and receiving stop at once. For 30 days an admin can cancel; then every email, domain, key, contact and
        file of the team is erased. Members keep their accounts.
      </p>
      <label className="field">
        <span>
          Type the team&apos;s name, <strong className="typed-name">{current.teamName}</strong>, to confirm
        </span>
        <input name="confirm" value={typed} onChange={(e) => setTyped(e.target.value)} autoComplete="off" required />
      </label>
      <FormError error={schedule.error} />
      <Submit busy={schedule.busy}>Delete this team</Submit>
    </form>
  );
}

function Scheduled({ deletion, changed }: { deletion: TeamDeletion; changed: () => void }) {
  const current = useCurrent();
  const { reload } = useSession();
  const cancel = useAction();
  return (
    <section className="panel danger-zone">
      {deletion.status === 'scheduled' ? (
        <p id="deletion-state">
          The team is <strong>scheduled for deletion</strong> since {formatTime(deletion.requested_at)}. It will be
          erased after {formatTime(deletion.purge_after)}. Sending and receiving are stopped.
        </p>
      ) : (
        <p id="deletion-state">The team is being erased; this can no longer be canceled.</p>
      )}
      {cancel.error ? <ErrorBox error={cancel.error} /> : null}
      {deletion.status === 'scheduled' && isAdmin(current) ? (
        <button
          type="button"
          id="cancel-deletion"
          disabled={cancel.busy}
          onClick={() =>
            void cancel.run(
              () => api.DELETE('/teams/{team_id}/deletion', { params: { path: { team_id: current.teamId } } }),
              () => {
                changed();
                reload();
              },
            )
          }
        >
          Cancel the deletion
        </button>
      ) : null}
    </section>
  );
}
