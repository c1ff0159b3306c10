// Resources the declaration-driven suites need: for an operation's area (its tag), a function that creates one
// resource of that area for a team and answers its id. test/security.test.ts fails for an implemented operation
// with path parameters whose area has no fixture here, so every new area adds one when it lands.
import type { Operation } from '../../api/routes/operation.ts';
import type { Platform, TestTeam } from './platform.ts';

/**
 * The id of a new resource of the area, owned by `team`. An area whose paths carry several ids (a webhook's
 * events) answers an object naming each path parameter instead.
 */
export type Fixture = (p: Platform, team: TestTeam) => Promise<string | Record<string, string>>;

export const fixtures: Record<string, Fixture> = {
  'api-keys': async (p, team) => {
    const res = await p.request('POST', '/api-keys', { key: team.key, body: { name: 'fixture' } });
    if (res.status !== 201) throw new Error(`api-keys fixture: POST /api-keys answered ${res.status} ${res.text}`);
    return res.body.id;
  },
  logs: async (p, team) => {
    const res = await p.request('GET', '/team', { key: team.key });
    const id = res.headers.get('x-request-log-id');
    if (!id) throw new Error(`logs fixture: GET /team answered ${res.status} without X-Request-Log-Id`);
    return id;
  },
};

/**
 * A valid body for each implemented operation that has both path parameters and a body, so a cross-team
 * request gets past body validation and reaches the lookup that must answer 404.
 */
export const sampleBodies: Record<string, unknown> = {
  updateApiKey: { name: 'renamed by another team' },
};

export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]);
}

/** `op.path` with every `{param}` replaced: from `values` when it names the parameter, otherwise `fallback`. */
export function fillPath(path: string, values: string | Record<string, string>): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, name: string) => {
    const v = typeof values === 'string' ? values : values[name];
    if (v === undefined) throw new Error(`no value for path parameter {${name}} of ${path}`);
    return encodeURIComponent(v);
  });
}

export function fixtureFor(op: Pick<Operation, 'tag'>): Fixture | undefined {
  return fixtures[op.tag];
}
