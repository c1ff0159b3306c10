// Spec, Authentication 5: "No scope reaches OAuth grants, team member listing or billing writes; those need a
// full_access key." Every operation whose answer lists team members (GET /team among them) has no OAuth scope, and
// a key below full_access is refused it.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];
let p: Platform;
let doc: Json;

test.before(async () => {
  p = await startPlatform();
  const res = await p.request('GET', '/openapi.json');
  if (res.status !== 200) throw new Error(`GET /openapi.json answered ${res.status}: ${res.text}`);
  doc = res.body;
});

test.after.always(async () => {
  await p?.close();
});

function documented(): { method: string; path: string; op: Json }[] {
  return Object.entries(doc.paths as Record<string, Json>).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([m]) => METHODS.includes(m))
      .map(([method, op]) => ({ method, path, op: op as Json })),
  );
}

test('spec Authentication 5: no scope reaches team member listing; only a full_access key or a session does', (t) => {
  /** Whether a schema names TeamMember, directly or through the schemas it refers to. */
  const names = (node: unknown, seen = new Set<string>()): boolean => {
    if (Array.isArray(node)) return node.some((n) => names(n, seen));
    if (!node || typeof node !== 'object') return false;
    return Object.entries(node).some(([k, v]) => {
      if (k !== '$ref' || typeof v !== 'string') return names(v, seen);
      const name = v.replace('#/components/schemas/', '');
      if (name === 'TeamMember') return true;
      if (seen.has(name)) return false;
      seen.add(name);
      return names(doc.components.schemas[name], seen);
    });
  };
  const listing = documented().filter(({ op }) =>
    Object.entries(op.responses as Record<string, Json>).some(([code, r]) => /^2/.test(code) && names(r)),
  );
  const ids = listing.map(({ op }) => op.operationId);
  t.true(ids.includes('getTeam') && ids.includes('listTeamMembers'), ids.join(', '));
  for (const { op } of listing) {
    t.is(op['x-service-scope'], null, `${op.operationId}: no scope`);
    t.true(
      ['full_access', 'session'].includes(op['x-service-permission']),
      `${op.operationId}: full_access or session`,
    );
  }
});

test('GET /team (it lists the members) refuses a sending_access key and answers a full_access one', async (t) => {
  const team = await p.createTeam();
  const restricted = await p.request('POST', '/api-keys', {
    key: team.key,
    body: { name: 'sending only', permission: 'sending_access' },
  });
  t.is(restricted.status, 201, restricted.text);
  const refused = await p.request('GET', '/team', { key: restricted.body.token });
  t.is(refused.status, 401, refused.text);
  t.is(refused.body.name, 'restricted_api_key');
  t.false('members' in refused.body);
  const full = await p.request('GET', '/team', { key: team.key });
  t.is(full.status, 200, full.text);
  t.true(Array.isArray(full.body.members));
});
