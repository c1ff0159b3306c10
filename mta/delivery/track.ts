// Open and click tracking in the deliver job: when the sending domain has it on (signing-domain.ts), the message is
// planned once (shared/tracking/mime.ts: its HTML parts, their links, where the pixel goes) and each recipient gets
// a copy of its own, its pixel and links carrying tokens that name it (shared/tracking/tokens.ts), signed and sent in
// a transaction for it alone, as topic sends' List-Unsubscribe copies are (job.ts). With tracking off, or a message
// tracking changes nothing in (no HTML part), this returns null and the job sends the message as it always did:
// the same bytes (test/tracking-off.test.ts).
import { personalize, planMessage } from '../../shared/tracking/mime.ts';
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
  return {
    copyFor: (recipientId) =>
      personalize(plan, {
        open: () => `${base}/o/${openToken(key, recipientId)}`,
        click: (index, url) => `${base}/c/${clickToken(key, recipientId, index, url)}`,
      }),
  };
}
