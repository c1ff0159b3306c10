// OAuth scopes (CONTRACT "Credentials"): `<area>:read` / `<area>:write` (and `emails:send`), as the operations
// declare them in x-service-scope, plus the spec's billing:read, ai:use, inbox:read and inbox:write. The consent
// page shows each in plain words.

/** The spec's named scopes (Authentication 3), whether or not an operation declares them yet. */
export const SPEC_SCOPES = ['billing:read', 'ai:use', 'inbox:read', 'inbox:write'];

const SPECIAL: Record<string, string> = {
  'emails:send': 'Send emails from your domains',
  // No token creates API keys (a key would outlive the grant: docs/oauth.md).
  'api-keys:write': 'Rename and revoke your API keys (never create one)',
  'billing:read': 'See your plan, usage and invoices (never change them)',
  'ai:use': "Use AI assist, spending the team's AI credits",
  'inbox:read': 'Read your support inboxes',
  'inbox:write': 'Reply, add notes and update conversations in your support inboxes',
};

/** `contact-properties` → `contact properties`, `api-keys` → `API keys`. */
function areaWords(area: string): string {
  return area.replace(/-/g, ' ').replace(/^api /, 'API ');
}

/** What a scope lets a client do, for a person deciding whether to grant it. */
export function describeScope(scope: string): string {
  if (SPECIAL[scope]) return SPECIAL[scope];
  const [area, action] = scope.split(':');
  if (action === 'read') return `See your ${areaWords(area)}`;
  if (action === 'write') return `Create, change and delete your ${areaWords(area)}`;
  return scope;
}

/** The scopes a client may ask for: those the operations declare and the spec's, sorted, each once. */
export function scopeList(declared: (string | null)[]): string[] {
  return [...new Set([...declared.filter((s): s is string => !!s), ...SPEC_SCOPES])].sort();
}
