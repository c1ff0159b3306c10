// Who is signed in (GET /me), their current team and their role in it.
import { createContext, useContext, type ReactNode } from 'react';
import { api, type Schemas } from './api/client';
import { useLoad, type Load } from './ui';

export type Role = Schemas['TeamMember']['role'];

export interface SessionInfo {
  me: Schemas['Me'];
  role: Role | null;
}

interface SessionState {
  load: Load<SessionInfo>;
  reload: () => void;
}

const Ctx = createContext<SessionState | null>(null);

/** One request: /me names the current team and the role in it, so a page's own requests follow it directly. */
async function fetchSession() {
  const me = await api.GET('/me');
  if (!me.data) return { error: me.error, response: me.response };
  return { data: { me: me.data, role: me.data.current_team_role }, response: me.response };
}

export function SessionProvider({ children }: { children: ReactNode }) {
  const [load, reload] = useLoad(fetchSession, []);
  return <Ctx.Provider value={{ load, reload }}>{children}</Ctx.Provider>;
}

export function useSession(): SessionState {
  const s = useContext(Ctx);
  if (!s) throw new Error('useSession outside SessionProvider');
  return s;
}

/** A viewer reads; a member works; an admin manages keys and members (docs/accounts.md). */
export function can(role: Role | null, needs: Role): boolean {
  const rank = { viewer: 0, member: 1, admin: 2 } as const;
  return role !== null && rank[role] >= rank[needs];
}
