// Open and click tracking in the deliver job: when the sending domain has it on (signing-domain.ts), the message is
// planned once (shared/tracking/mime.ts: its HTML parts, their links, where the pixel goes) and each recipient gets
// a copy of its own, its pixel and links carrying tokens that name it (shared/tracking/tokens.ts), signed and sent in
// a transaction for it alone, as topic sends' List-Unsubscribe copies are (job.ts). With tracking off, or a message
// tracking changes nothing in (no HTML part), this returns null and the job sends the message as it always did:
// the same bytes (test/tracking-off.test.ts). A job with one recipient of a message it composes tracks the HTML
// before composing instead (trackedHtml): a newsletter's tracking then costs its HMACs and a scan, not a second
// MIME parse and encoding of the message (bench/README.md, the tracking suite).
import { personalize, planMessage } from '../../shared/tracking/mime.ts';
import { planHtml, renderHtml, type RecipientUrls } from '../../shared/tracking/links.ts';
import { clickToken, domainKey, openToken } from '../../shared/tracking/tokens.ts';
import type { DeliveryConfig } from './deps.ts';
import type { TrackingSettings } from './signing-domain.ts';

export interface TrackedCopies {
  /** One recipient's copy of the message. */
  copyFor(recipientId: string): Buffer;
}

/** The address tracked links and the pixel point at: `<scheme>://<tracking host>[:port]`. */
export function trackingBase(
  config: Pick<DeliveryConfig, 'TRACKING_LINK_SCHEME' | 'TRACKING_LINK_PORT'>,
  host: string,
): string {
  return `${config.TRACKING_LINK_SCHEME}://${host}${config.TRACKING_LINK_PORT ? `:${config.TRACKING_LINK_PORT}` : ''}`;
}

/** Links tracking never rewrites whatever they say: our unsubscribe pages, and links on a tracking host already. */
function keeper(config: Pick<DeliveryConfig, 'PUBLIC_BASE_URL'>, base: string) {
  const unsubscribe = [`${config.PUBLIC_BASE_URL}/unsubscribe/`, `${config.PUBLIC_BASE_URL}/api/v1/unsubscribe/`];
  return (url: string) => url.startsWith(`${base}/`) || unsubscribe.some((u) => url.startsWith(u));
}

/** One recipient's pixel and links. */
function recipientUrls(key: Buffer, base: string, recipientId: string): RecipientUrls {
  return {
    open: () => `${base}/o/${openToken(key, recipientId)}`,
    click: (index, url) => `${base}/c/${clickToken(key, recipientId, index, url)}`,
  };
}

/**
 * One recipient's HTML with its pixel and links, for a message not composed yet: the job composes that recipient's
 * copy with it (job.ts), instead of composing the message, splitting it and encoding its HTML again as
 * trackedCopies does. Null when tracking is off or changes nothing in it.
 */
export function trackedHtml(
  deps: { config: DeliveryConfig; secrets: Buffer },
  domainId: string,
  settings: TrackingSettings | null,
  html: string | null,
  recipientId: string,
): string | null {
  if (!settings || html === null) return null;
  const base = trackingBase(deps.config, settings.host);
  const plan = planHtml(html, {
    open: settings.open,
    click: settings.click,
    keep: keeper(deps.config, base),
    charset: 'utf8',
  });
  return plan && renderHtml(plan, recipientUrls(domainKey(deps.secrets, domainId), base, recipientId));
}

export async function trackedCopies(
  deps: { config: DeliveryConfig; secrets: Buffer },
  domainId: string,
  settings: TrackingSettings | null,
  raw: Buffer,
): Promise<TrackedCopies | null> {
  if (!settings) return null;
  const base = trackingBase(deps.config, settings.host);
  const plan = await planMessage(raw, { open: settings.open, click: settings.click, keep: keeper(deps.config, base) });
  if (!plan) return null;
  const key = domainKey(deps.secrets, domainId);
  return { copyFor: (recipientId) => personalize(plan, recipientUrls(key, base, recipientId)) };
}
