// Running the pre-send checks on one message, and what a campaign send does with them. A campaign send (a send
// under a topic through POST /emails; broadcasts when they come call campaignRefusal the same way) is refused while
// any check fails, unless it sends `acknowledge_checks: true`. Transactional sends never run them.
import { ServiceError } from '../errors.ts';
import { htmlFacts } from './facts.ts';
import { probeAll, type NetworkOptions } from './network.ts';
import * as rules from './rules.ts';
import type { CheckedContent, EmailCheck } from './types.ts';

const RULES = [
  rules.unresolvedVariable,
  rules.links,
  rules.linkScheme,
  rules.subject,
  rules.preheader,
  rules.altText,
  rules.imageWeight,
  rules.textRatio,
  rules.unsubscribe,
];

/**
 * Every check's findings, in the spec's order of codes. `network`: ask the links and images (CHECKS_NETWORK on);
 * null reads the message alone.
 */
export async function runChecks(content: CheckedContent, network: NetworkOptions | null): Promise<EmailCheck[]> {
  const facts =
    content.html !== null ? htmlFacts(content.html) : { links: [], images: [], visibleText: '', hiddenPreview: null };
  let probes = null;
  if (network) {
    const links = content.blocks?.links ?? facts.links;
    const images = content.blocks?.images ?? facts.images;
    probes = await probeAll([...links.map((l) => l.href), ...images.map((i) => i.src)], network);
  }
  return RULES.flatMap((rule) => rule({ ...facts, content, probes }));
}

/** The refusal of a campaign send whose checks failed (422 validation_error, `details.checks`), or null. */
export function campaignRefusal(checks: EmailCheck[]): ServiceError | null {
  const failed = checks.filter((c) => c.status === 'fail');
  if (failed.length === 0) return null;
  const codes = [...new Set(failed.map((c) => c.code))].join(', ');
  return new ServiceError(
    'validation_error',
    `This campaign send fails pre-send checks (${codes}): ${failed[0].message} Fix it, or send again with \`acknowledge_checks: true\` to send anyway.`,
    { details: { checks } },
  );
}

/** Runs the checks on a campaign send's message (no network: a send never waits on a web server) and refuses it. */
export async function refuseFailedChecks(content: CheckedContent): Promise<void> {
  const refusal = campaignRefusal(await runChecks(content, null));
  if (refusal) throw refusal;
}
