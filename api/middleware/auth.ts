// Bearer API keys. Which keys reach an operation is read from its declaration, never decided in a handler.
import type { Context } from 'koa';
import { authenticate } from '../../shared/api-keys/keys.ts';
import { ServiceError } from '../../shared/errors.ts';
import type { ApiDeps } from '../deps.ts';
import type { Auth, Operation } from '../routes/operation.ts';

const messages = {
  invalid_api_key: 'API key is invalid.',
  suspended_api_key: 'This API key belongs to a suspended team.',
} as const;

export async function identify(ctx: Context, deps: ApiDeps): Promise<Auth> {
  const header = ctx.get('authorization');
  if (!header)
    throw new ServiceError(
      'missing_api_key',
      'Missing API key in the authorization header. Include the header `Authorization: Bearer rk_...`.',
    );
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw new ServiceError('invalid_api_key', messages.invalid_api_key);
  const result = await authenticate(deps.db, match[1]);
  if (!result.ok) throw new ServiceError(result.error, messages[result.error]);
  return { key: result.key, team: result.team };
}

/** full_access reaches every key route; a narrower key reaches only routes declared with its own permission. */
export function checkPermission(op: Operation, auth: Auth): void {
  if (op.permission === 'session' || op.permission === null) {
    throw new ServiceError('restricted_api_key', 'This operation cannot be called with an API key.');
  }
  if (auth.key.permission === 'full_access' || auth.key.permission === op.permission) return;
  throw new ServiceError(
    'restricted_api_key',
    `This API key is restricted to ${auth.key.permission === 'sending_access' ? 'sending emails' : "its store's event pushes"}.`,
  );
}
