// A team's export and deletion (teams area, session only, admins): ask for an archive and download it by a signed
// link, schedule the team's deletion by typing its name, cancel it inside the grace window.
import { z } from 'zod';
import * as exports from '../../shared/teams/export.ts';
import * as deletion from '../../shared/teams/deletion.ts';
import { issueLink, linkKey, linkUrl, liveLinkExpiry, serveSignedDownload } from '../../shared/links/signed.ts';
import { iso, isoRequired } from '../../shared/time.ts';
import type { ApiDeps } from '../deps.ts';
import { defineOperation } from './operation.ts';
import { pathId } from './schemas.ts';
import { listEnvelope } from '../../shared/pagination.ts';
import * as s from './auth-schemas.ts';
import { teamAccess } from './team-access.ts';

const base = { tag: 'teams', permission: 'session', scope: null } as const;
const teamParams = z.object({ team_id: pathId('team') });
const exportParams = z.object({ team_id: pathId('team'), export_id: pathId('export') });
const KIND = 'team_export';

function presentExport(deps: ApiDeps, e: exports.ExportRow) {
  const ready = e.status === 'completed' && e.expires_at && new Date(e.expires_at) > new Date();
  let download_url: string | null = null;
  if (ready) {
    const link = issueLink(linkKey(deps.config), { kind: KIND, teamId: e.team_id, objectId: e.id });
    download_url = linkUrl(deps.config.PUBLIC_BASE_URL, `/teams/${e.team_id}/exports/${e.id}/download`, link);
  }
  return {
    object: 'team_export' as const,
    id: e.id,
    status: e.status,
    created_at: isoRequired(e.created_at),
    completed_at: iso(e.completed_at),
    expires_at: iso(e.expires_at),
    bytes: e.bytes === null ? null : Number(e.bytes),
    truncated: e.truncated,
    download_url,
  };
}

export const lifecycleOperations = [
  defineOperation({
    ...base,
    operationId: 'createTeamExport',
    method: 'post',
    path: '/teams/{team_id}/exports',
    summary: 'Export the team',
    description:
      "An admin asks for an archive of the team's data: a zip with a JSON file per area and manifest.json naming what was left out (secrets, the blob store's files, rows past the size or time ceiling: then `truncated`). The worker builds it (pending → running → completed or failed); the archive is deleted 7 days after it is ready (expired).",
    status: 201,
    params: teamParams,
    body: z.object({}),
    response: s.teamExport,
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      return presentExport(deps, await exports.requestExport(deps.db, params.team_id, session.user.id));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'listTeamExports',
    method: 'get',
    path: '/teams/{team_id}/exports',
    summary: 'List the exports',
    description: "The team's exports, newest first (at most 100); a ready one carries a signed download link.",
    params: teamParams,
    response: listEnvelope(s.teamExport),
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      const rows = await exports.listExports(deps.db, params.team_id);
      return { object: 'list' as const, has_more: false, data: rows.map((r) => presentExport(deps, r)) };
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getTeamExport',
    method: 'get',
    path: '/teams/{team_id}/exports/{export_id}',
    summary: 'Retrieve an export',
    description:
      'An export and, once completed and until it expires, `download_url`: a signed link valid 15 minutes for an admin signed in.',
    params: exportParams,
    response: s.teamExport,
    handler: async ({ session, params, deps }) => {
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      return presentExport(deps, await exports.getExport(deps.db, params.team_id, params.export_id));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'downloadTeamExport',
    method: 'get',
    path: '/teams/{team_id}/exports/{export_id}/download',
    summary: 'Download an export',
    description:
      'The archive (application/zip), for an admin signed in, by the signed `download_url` (expires, token; 15 minutes). Every refusal of the link is the same 404.',
    params: exportParams,
    query: z.object({
      expires: z.string().default('').describe('Unix seconds: the link works strictly before then'),
      token: z.string().default('').describe('The signature of the link'),
    }),
    raw: true,
    response: z.any(),
    handler: async ({ session, params, query, deps, ctx }) => {
      const expires = liveLinkExpiry(query, params.team_id, params.export_id);
      await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      const e = await exports.getExport(deps.db, params.team_id, params.export_id).catch(() => undefined);
      const object =
        e?.status === 'completed' && e.blob_key
          ? {
              id: e.id,
              team_id: e.team_id,
              blob_key: e.blob_key,
              filename: `postwerk-export-${e.id}.zip`,
              content_type: 'application/zip',
            }
          : undefined;
      await serveSignedDownload(ctx, {
        key: linkKey(deps.config),
        kind: KIND,
        expires,
        token: query.token,
        blobs: deps.blobs,
        object,
      });
      return undefined;
    },
  }),
  defineOperation({
    ...base,
    operationId: 'getTeamDeletion',
    method: 'get',
    path: '/teams/{team_id}/deletion',
    summary: "Retrieve the team's deletion",
    description: 'Whether a deletion is scheduled (and when the team will be erased) or in progress.',
    params: teamParams,
    response: s.teamDeletion,
    handler: async ({ session, params, deps }) => {
      const { team } = await teamAccess(deps.db, session.user.id, params.team_id, 'viewer');
      return deletion.presentDeletion(team);
    },
  }),
  defineOperation({
    ...base,
    operationId: 'scheduleTeamDeletion',
    method: 'post',
    path: '/teams/{team_id}/deletion',
    summary: 'Delete the team',
    description:
      "An admin schedules the team's deletion by typing its name in `confirm`. Sending and receiving stop at once; the deletion can be canceled for 30 days, after which the nightly retention job erases every row and file of the team.",
    params: teamParams,
    body: z.object({ confirm: z.string().max(200).describe("The team's name, typed exactly") }),
    response: s.teamDeletion,
    handler: async ({ session, params, body, deps }) => {
      const { team } = await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      return deletion.presentDeletion(await deletion.scheduleDeletion(deps.db, team, session.user.id, body.confirm));
    },
  }),
  defineOperation({
    ...base,
    operationId: 'cancelTeamDeletion',
    method: 'delete',
    path: '/teams/{team_id}/deletion',
    summary: "Cancel the team's deletion",
    description: 'An admin cancels a scheduled deletion inside the grace window: sending and receiving resume.',
    params: teamParams,
    response: s.teamDeletion,
    handler: async ({ session, params, deps }) => {
      const { team } = await teamAccess(deps.db, session.user.id, params.team_id, 'admin');
      return deletion.presentDeletion(await deletion.cancelDeletion(deps.db, team));
    },
  }),
];
