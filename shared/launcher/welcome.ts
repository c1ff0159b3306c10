// What the first run tells a newcomer, printed once the api answers: the key (shown this once), where they can
// send from and to right away, and how to go further.
import type { Config } from '../config.ts';
import type { FirstTeam } from './first-run.ts';

type WelcomeConfig = Pick<Config, 'PUBLIC_BASE_URL' | 'SIMULATOR_DOMAIN'>;

export function welcome(first: FirstTeam, config: WelcomeConfig): string {
  const base = config.PUBLIC_BASE_URL;
  const from = `hello@${first.team.managed_domain}`;
  const sim = config.SIMULATOR_DOMAIN;
  const body = JSON.stringify({ from, to: `delivered@${sim}`, subject: 'Hello', text: 'It works.' });
  const sandbox = first.team.sandbox_regions.length
    ? `Lift the sending sandbox to reach anyone: npm run cli -- team sandbox-lift --team ${first.team.id} --region ${first.team.sandbox_regions[0]}`
    : 'The team is out of the sending sandbox.';
  return [
    '',
    `First run: created team "${first.team.name}" (${first.team.id}).`,
    'Its API key is shown this once; keep it somewhere safe:',
    '',
    `  ${first.api_key}`,
    '',
    `The API answers at ${base} (reference: ${base}/docs, OpenAPI: ${base}/openapi.json).`,
    '',
    `Send right away from ${from}, your team's managed domain. It reaches the simulator`,
    `(delivered@${sim}, bounced@, complained@, delayed@, suppressed@) and the verified addresses of your team`,
    `(npm run cli -- team verify-identity --team ${first.team.id} --email you@example.com):`,
    '',
    `  curl ${base}/emails -H 'Authorization: Bearer ${first.api_key}' -H 'User-Agent: curl' \\`,
    `    -H 'Content-Type: application/json' -d '${body}'`,
    '',
    `Send from your own domain: POST ${base}/domains {"name":"yourdomain.com"}, publish the records it answers,`,
    `then POST ${base}/domains/<id>/verify. ${sandbox}`,
    '',
  ].join('\n');
}
