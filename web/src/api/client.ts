// The one way the dashboard talks to the api: openapi-fetch over the generated types of its OpenAPI document. The
// session rides in its httpOnly cookie; every write carries the CSRF cookie's value in `X-CSRF-Token`.
import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from './schema';

export type Schemas = components['schemas'];
export type ApiError = Schemas['Error'];

function csrfToken(): string | undefined {
  for (const part of document.cookie.split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === 'postwerk_csrf' || name === '__Host-postwerk_csrf') return decodeURIComponent(rest.join('='));
  }
  return undefined;
}

const csrf: Middleware = {
  onRequest({ request }) {
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const token = csrfToken();
      if (token) request.headers.set('X-CSRF-Token', token);
    }
    return request;
  },
};

export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: 'same-origin' });
api.use(csrf);

/** What an answer's `error` is when the api did not answer in its Error shape (the network failed, a proxy page). */
export function asApiError(error: unknown, status?: number): ApiError {
  // A thrown Error (fetch's TypeError when nothing answered) is not the api's: its name would show as a code.
  if (error && typeof error === 'object' && 'message' in error && !(error instanceof Error)) return error as ApiError;
  return {
    statusCode: status ?? 0,
    name: 'network_error',
    message: status ? `The api answered ${status}.` : 'The api could not be reached.',
  } as ApiError;
}
