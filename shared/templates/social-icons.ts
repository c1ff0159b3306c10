// The social block's default icons (shared/templates/social-icons/: white on transparent, 48 px for 24 px shown, on
// the network's colour MJML paints behind them), served by the api under PUBLIC_BASE_URL (api/email-assets.ts), so a
// recipient's mail client fetches them from the sender's platform, not from a third party.
import { readFileSync } from 'node:fs';
import { assetPath } from '../layout.ts';
import { socialNetworks, type SocialNetwork } from './blocks.ts';

export const SOCIAL_ICON_PATH = '/email-assets/social/';

export const socialIconUrl = (publicBaseUrl: string, network: SocialNetwork): string =>
  `${publicBaseUrl.replace(/\/+$/, '')}${SOCIAL_ICON_PATH}${network}.png`;

/** The PNG of each network, read on first use. */
let icons: Map<string, Buffer> | undefined;

export function socialIcon(network: string): Buffer | undefined {
  icons ??= new Map(socialNetworks.map((n) => [n, readFileSync(assetPath(`shared/templates/social-icons/${n}.png`))]));
  return icons.get(network);
}
