// What the settings pages share: the current team and the member's role (from the session), a note for what a role
// may not see, and a hook that runs one action (busy, the api's Error kept to show).
import { useState } from 'react';
import { asApiError, type ApiError } from '../../api/client';
import { can, useSession, type Role } from '../../session';
import type { Answer } from '../../ui';
export { useQuietLoad } from '../../ui';

export interface Current {
  teamId: string;
  teamName: string;
  role: Role | null;
  userId: string;
  email: string;
}

/** The signed-in frame renders settings only with a current team: it is there. */
export function useCurrent(): Current {
  const { load } = useSession();
  if (load.state !== 'ready' || !load.data.me.current_team_id) throw new Error('settings outside the signed-in frame');
  const me = load.data.me;
  const team = me.teams.find((t) => t.id === me.current_team_id);
  return {
    teamId: me.current_team_id!,
    teamName: team?.name ?? '',
    role: load.data.role,
    userId: me.id,
    email: me.email,
  };
}

export const isAdmin = (c: Current) => can(c.role, 'admin');

export function AdminsOnly({ what, role }: { what: string; role: Role | null }) {
  return (
    <p className="note admins-only">
      Only the team&apos;s admins {what}. Your role is {role ?? 'none'}.
    </p>
  );
}

/** One action at a time: `run` sends it; `error` is the api's refusal (kept until the next run). */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiError | null>(null);
  async function run<T>(send: () => Promise<Answer<T>>, done: (data: T) => void) {
    setBusy(true);
    setError(null);
    try {
      const r = await send();
      if (r.response.ok && r.data !== undefined) done(r.data);
      else setError(asApiError(r.error, r.response.status));
    } catch (e) {
      setError(asApiError(e));
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, run, clear: () => setError(null) };
}
