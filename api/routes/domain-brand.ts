import { z } from 'zod';
import {
  deleteLogo,
  getLogo,
  logoFile,
  presentLogo,
  uploadLogo,
  type BrandContext,
} from '../../shared/domains/brand.ts';
import { MAX_SVG_BYTES } from '../../shared/domains/svg.ts';
import { defineOperation } from './operation.ts';
import { pathId, timestamp } from './schemas.ts';
import type { ApiDeps } from '../deps.ts';

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);

const logo = z
  .object({
    object: z.literal('domain_brand_logo'),
    domain_id: z.uuid(),
    url: z.url().describe('Stable public URL of the SVG: the `l=` value of the `default._bimi` record'),
    bytes: z.number().int().describe('Size of the hosted SVG'),
    sha256: sha256.describe('SHA-256 of the hosted SVG, 64 lowercase hex'),
    uploaded_at: timestamp,
  })
  .meta({ id: 'DomainBrandLogo' });

const certificateState = z.enum(['none', 'awaiting_certificate', 'active', 'logo_changed', 'expired']);
const certificate = z
  .object({
    object: z.literal('domain_brand_certificate'),
    domain_id: z.uuid(),
    state: certificateState,
    csr_pem: z.string().nullable(),
    subject: z
      .object({
        common_name: z.string(),
        organization: z.string(),
        organizational_unit: z.string().nullable(),
        locality: z.string(),
        state: z.string(),
        country: z.string(),
      })
      .nullable(),
    requested_at: timestamp.nullable(),
    url: z.string().nullable().describe('The `a=` value'),
    bytes: z.number().int().nullable(),
    sha256: sha256.nullable(),
    issuer: z.string().nullable(),
    expires_at: timestamp.nullable(),
    installed_at: timestamp.nullable(),
    published: z.boolean().describe('True only while state is active, when `default._bimi` carries `a=`'),
    reason: z.string().nullable(),
  })
  .meta({ id: 'DomainBrandCertificate' });

const brandDeleted = <T extends string>(object: T) =>
  z.object({ object: z.literal(object), domain_id: z.uuid(), deleted: z.literal(true) });

const domainParams = z.object({ domain_id: pathId('domain') });

function context(deps: ApiDeps): BrandContext {
  return { hosts: deps.config, blobs: deps.blobs, baseUrl: deps.config.PUBLIC_BASE_URL };
}

const base = { tag: 'domains', permission: 'full_access' } as const;

export const domainBrandOperations = [
  defineOperation({
    ...base,
    operationId: 'uploadDomainBrandLogo',
    method: 'put',
    path: '/domains/{domain_id}/brand/logo',
    summary: 'Upload the brand logo',
    description:
      'Upload (or replace) the brand logo: an SVG Tiny PS file, square, at most 32 KB; adds the BIMI record.',
    scope: 'domains:write',
    params: domainParams,
    body: z.object({
      svg: z.string().min(1).describe(`The SVG document itself (UTF-8, at most ${MAX_SVG_BYTES} bytes)`),
    }),
    // Room for a 32 KB SVG after JSON escaping (each quote and newline takes two bytes).
    bodyLimit: 3 * MAX_SVG_BYTES,
    response: logo,
    handler: async ({ auth, params, body, deps }) =>
      presentLogo(await uploadLogo(deps.db, auth.team.id, params.domain_id, body.svg, context(deps))),
  }),
  defineOperation({
    ...base,
    operationId: 'getDomainBrandLogo',
    method: 'get',
    path: '/domains/{domain_id}/brand/logo',
    summary: 'Retrieve the brand logo',
    description: "The domain's brand logo: its public URL, size and SHA-256.",
    scope: 'domains:read',
    params: domainParams,
    response: logo,
    handler: async ({ auth, params, deps }) => presentLogo(await getLogo(deps.db, auth.team.id, params.domain_id)),
  }),
  defineOperation({
    ...base,
    operationId: 'deleteDomainBrandLogo',
    method: 'delete',
    path: '/domains/{domain_id}/brand/logo',
    summary: 'Remove the brand logo',
    description: 'Remove the brand logo: its public file and the BIMI record go.',
    scope: 'domains:write',
    params: domainParams,
    response: brandDeleted('domain_brand_logo'),
    handler: async ({ auth, params, deps }) => {
      await deleteLogo(deps.db, auth.team.id, params.domain_id, context(deps));
      return { object: 'domain_brand_logo' as const, domain_id: params.domain_id, deleted: true as const };
    },
  }),
  defineOperation({
    operationId: 'getDomainBrandLogoFile',
    method: 'get',
    path: '/brand/{domain_id}/{sha256}.svg',
    tag: 'domains',
    summary: 'Fetch the public logo file',
    description: 'The public logo file (what mailbox providers fetch): image/svg+xml, cacheable for good.',
    permission: 'none',
    scope: null,
    params: z.object({
      domain_id: pathId('domain'),
      sha256: sha256.describe("The logo's SHA-256, as in the logo's `url`"),
    }),
    // Raw: the handler answers the file itself; this only documents it (the router checks no raw answer).
    response: z.string().optional().describe('The SVG file, served as image/svg+xml'),
    raw: true,
    handler: async ({ params, deps, ctx }) => {
      const { row, data } = await logoFile(deps.db, deps.blobs, params.domain_id, params.sha256);
      // Inert wherever it is opened: nothing may run or load, inline styles only; the address names the
      // content, so the file never changes and may be cached for a year.
      ctx.set('Content-Security-Policy', "default-src 'none'; style-src 'unsafe-inline'");
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Cache-Control', 'public, max-age=31536000, immutable');
      ctx.etag = row.sha256;
      ctx.status = 200;
      if (ctx.fresh) {
        ctx.status = 304;
        return undefined;
      }
      ctx.body = data;
      ctx.type = 'image/svg+xml';
      return undefined;
    },
  }),
  // The mark certificate (VMC/CMC) is not built yet: declared (schemas documented) and answering 501.
  ...(
    [
      [
        'get',
        'getDomainBrandCertificate',
        'Retrieve the mark certificate (not built yet)',
        "The domain's mark certificate (VMC/CMC) and its state. Not built yet: answers 501 `not_implemented`.",
        certificate,
      ],
      [
        'put',
        'putDomainBrandCertificate',
        'Request or install a mark certificate (not built yet)',
        "Request or install the domain's mark certificate (VMC/CMC), which lets BIMI's `a=` name it. Not built yet: answers 501 `not_implemented`.",
        certificate,
      ],
      [
        'delete',
        'deleteDomainBrandCertificate',
        'Remove the mark certificate (not built yet)',
        "Remove the domain's mark certificate; the BIMI record loses its `a=`. Not built yet: answers 501 `not_implemented`.",
        brandDeleted('domain_brand_certificate'),
      ],
    ] as const
  ).map(([method, operationId, summary, description, response]) =>
    defineOperation({
      ...base,
      operationId,
      method,
      path: '/domains/{domain_id}/brand/certificate',
      summary,
      description,
      scope: method === 'get' ? 'domains:read' : 'domains:write',
      params: domainParams,
      response,
      notImplemented: true,
      handler: async () => {
        throw new Error('unreachable: declared notImplemented');
      },
    }),
  ),
];
