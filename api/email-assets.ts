// Images the platform serves for the mail it renders (shared/templates/social-icons.ts): a social block's default
// icons at /email-assets/social/<network>.png, for anyone (a recipient's mail client, an image proxy), no key.
import type Koa from 'koa';
import { SOCIAL_ICON_PATH, socialIcon } from '../shared/templates/social-icons.ts';

const ICON = new RegExp(`^${SOCIAL_ICON_PATH}([a-z]+)\\.png$`);

export const emailAssets: Koa.Middleware = async (ctx, next) => {
  const m = ICON.exec(ctx.path);
  const icon = m && (ctx.method === 'GET' || ctx.method === 'HEAD') ? socialIcon(m[1]) : undefined;
  if (!icon) return next();
  ctx.set('Cache-Control', 'public, max-age=86400');
  ctx.type = 'image/png';
  ctx.body = icon;
};
