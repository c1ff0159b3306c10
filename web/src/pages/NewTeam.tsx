// A signed-in person with no team yet (a fresh account): name the first team, and be its admin.
import { Link } from 'react-router';
import { api } from '../api/client';
import { Field, FormError, Submit, text, useSubmit } from '../form';
import { useSession } from '../session';

export function NewTeam() {
  const { reload } = useSession();
  // A new team is not the session's current one until switched to (which renews the session's cookies).
  const create = useSubmit(async (f) => {
    const made = await api.POST('/teams', { body: { name: text(f, 'name') } });
    if (!made.data) return made;
    return api.POST('/teams/{team_id}/switch', { params: { path: { team_id: made.data.id } } });
  }, reload);
  return (
    <section className="panel">
      <h1>Create your team</h1>
      <p>Domains, keys and emails belong to a team. You will be its admin and can invite others.</p>
      <form onSubmit={create.onSubmit} id="new-team-form">
        <Field label="Team name" name="name" required />
        <FormError error={create.error} />
        <Submit busy={create.busy}>Create team</Submit>
      </form>
      <p>
        Your account&apos;s own settings need no team: <Link to="/dashboard/settings/mfa">two-factor</Link>,{' '}
        <Link to="/dashboard/settings/sessions">sessions</Link> and{' '}
        <Link to="/dashboard/settings/password">password</Link>.
      </p>
    </section>
  );
}
