// The consent step of an authorization (docs/oauth.md): the dashboard's page /oauth/consent/:uid asks the api what
// is being asked (client, scopes, resource) and answers confirm or deny. The interaction is read through
// oidc-provider with the browser's own interaction cookie (its path is the page's URL, which these API paths extend),
// so only the browser that started the authorization can finish it. Sign-in is the dashboard session's: the person
// signed in is the account, its current team the team granted.
import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { Knex } from 'knex';
import { ServiceError } from '../../shared/errors.ts';
import type { ActiveSession } from '../../shared/accounts/sessions.ts';
import { describeScope } from '../../shared/oauth/scopes.ts';
import { recordGrant } from '../../shared/oauth/grants.ts';
import type { Config } from '../../shared/config.ts';
import { resources } from './provider.ts';

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

async function interactionOf(provider: Provider, ctx: Context, uid: string): Promise<Interaction> {
  try {
    const interaction = await provider.interactionDetails(ctx.req, ctx.res);
    if (interaction.uid === uid) return interaction;
  } catch {
    // No cookie, an ended interaction or another browser's: the same answer below.
  }
  throw new ServiceError(
    'not_found',
    'This authorization request is not open in this browser (it ended, or was started elsewhere): start again from the application.',
  );
}

/** The resources asked for, each one we serve (the provider refused others before this page). */
function requestedResources(config: Config, interaction: Interaction): string[] {
  const given = interaction.params.resource;
  const list = (Array.isArray(given) ? given : given ? [given] : []).map(String);
  return list.length ? list : [resources(config).api];
}

/** The requested scopes we grant (offline_access is how a client asks for a refresh token, not a permission). */
function requestedScopes(interaction: Interaction, allowed: Set<string>): string[] {
  return String(interaction.params.scope ?? '')
    .split(' ')
    .filter((s) => allowed.has(s));
}

export async function consentDetails(
  provider: Provider,
  ctx: Context,
  uid: string,
  session: ActiveSession,
  config: Config,
  allowed: Set<string>,
) {
  const interaction = await interactionOf(provider, ctx, uid);
  const client = await provider.Client.find(String(interaction.params.client_id));
  if (!client) throw new ServiceError('not_found', 'The application asking for access is no longer registered.');
  const redirect = new URL(String(interaction.params.redirect_uri));
  return {
    object: 'oauth_consent' as const,
    uid,
    client: {
      id: client.clientId,
      name: client.clientName ?? null,
      logo_uri: client.logoUri ?? null,
      redirect_host: redirect.host || redirect.protocol,
    },
    scopes: requestedScopes(interaction, allowed).map((scope) => ({ scope, description: describeScope(scope) })),
    resources: requestedResources(config, interaction),
    team: session.team ? { id: session.team.id, name: session.team.name } : null,
    role: session.role,
  };
}

/** The scopes granted: those asked that the person kept (all when they said nothing); one not asked is refused. */
function grantedScopes(asked: string[], kept: string[] | undefined): string[] {
  if (kept === undefined) return asked;
  const strange = kept.filter((s) => !asked.includes(s));
  if (strange.length)
    throw new ServiceError('validation_error', `Not asked for by the application: ${strange.join(', ')}.`, {
      errors: [{ path: 'scopes', message: 'Only scopes the application asked for can be granted' }],
    });
  return asked.filter((s) => kept.includes(s));
}

export async function decideConsent(
  provider: Provider,
  ctx: Context,
  db: Knex,
  input: {
    uid: string;
    session: ActiveSession;
    config: Config;
    allowed: Set<string>;
    approve: boolean;
    /** The scopes the person left ticked; undefined: all those asked. */
    granted?: string[];
  },
): Promise<{ redirect_to: string }> {
  const interaction = await interactionOf(provider, ctx, input.uid);
  const { session } = input;
  if (!input.approve) {
    const result = { error: 'access_denied', error_description: 'The person declined to grant access.' };
    return {
      redirect_to: await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }),
    };
  }
  if (!session.team || !session.role)
    throw new ServiceError('invalid_permission', 'No current team: create a team or switch to one first.', {
      status: 403,
    });
  const accountId = session.user.id;
  const clientId = String(interaction.params.client_id);
  const requested = requestedScopes(interaction, input.allowed);
  const scopes = grantedScopes(requested, input.granted);
  const targets = requestedResources(input.config, interaction);
  const grant = new provider.Grant({ accountId, clientId });
  // Our scopes are also the provider's static scopes (so a client's registered `scope` limits them): granted as
  // such and for each resource the token may be bound to.
  const asked = String(interaction.params.scope ?? '').split(' ');
  grant.addOIDCScope([...scopes, ...(asked.includes('offline_access') ? ['offline_access'] : [])].join(' '));
  for (const resource of targets) grant.addResourceScope(resource, scopes.join(' '));
  // Those the person unticked are rejected, not missing: the provider does not ask again, its tokens lack them.
  const unticked = requested.filter((s) => !scopes.includes(s)).join(' ');
  if (unticked) {
    grant.rejectOIDCScope(unticked);
    for (const resource of targets) grant.rejectResourceScope(resource, unticked);
  }
  const grantId = await grant.save();
  await recordGrant(db, {
    provider_grant_id: grantId,
    team_id: session.team.id,
    user_id: accountId,
    client_id: clientId,
    scopes,
    resources: targets,
  });
  const result = { login: { accountId }, consent: { grantId } };
  return {
    redirect_to: await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }),
  };
}
