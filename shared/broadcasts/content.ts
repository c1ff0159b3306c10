// A broadcast's fields as a create or an update gives them: checked here (the route's schema checks types), each
// refusal a 422 validation_error naming its field. The segment and topic must be the team's now; whether they still
// exist is asked again at send (gate.ts), since either may be deleted while the broadcast is a draft.
import type { Knex } from 'knex';
import { ServiceError } from '../errors.ts';
import { AddressError, parseAddress, parseMailbox } from '../emails/addresses.ts';
import { isUuid } from '../ids.ts';
import type { BroadcastContent } from './store.ts';
import type { BlockDocument } from '../templates/blocks.ts';
import { readBody } from './document.ts';

export const NAME_MAX_LENGTH = 200;
export const SUBJECT_MAX_LENGTH = 998;
export const PREVIEW_MAX_LENGTH = 500;
export const BODY_MAX_BYTES = 1024 * 1024;
export const MAX_REPLY_TO = 50;

export function fieldError(path: string, message: string): ServiceError {
  return new ServiceError('validation_error', `Invalid \`${path}\`: ${message}`, { errors: [{ path, message }] });
}

function checkFrom(from: string): string {
  try {
    parseMailbox(from);
  } catch (err) {
    if (err instanceof AddressError) throw fieldError('from', `\`${from}\` ${err.message}.`);
    throw err;
  }
  return from.trim();
}

function checkReplyTo(value: string | string[]): string[] {
  const list = Array.isArray(value) ? value : [value];
  if (list.length > MAX_REPLY_TO) throw fieldError('reply_to', `at most ${MAX_REPLY_TO} addresses.`);
  return list.map((a, i) => {
    try {
      return parseMailbox(a) && a.trim();
    } catch (err) {
      if (err instanceof AddressError) throw fieldError(`reply_to.${i}`, `\`${a}\` ${err.message}.`);
      throw err;
    }
  });
}

function checkText(path: string, value: string | null | undefined, max: number, bytes = false) {
  if (value === null || value === undefined) return;
  if (/[\r\n]/.test(value) && path !== 'html' && path !== 'text') throw fieldError(path, 'must be a single line.');
  const size = bytes ? Buffer.byteLength(value) : value.length;
  if (size > max) throw fieldError(path, `at most ${max} ${bytes ? 'bytes' : 'characters'}.`);
}

/** The team's segment with this id exists (a refusal names `field`). */
export async function checkSegment(db: Knex, teamId: string, id: string, field = 'segment_id'): Promise<void> {
  const found = isUuid(id) && (await db('segments').where({ team_id: teamId, id }).first('id'));
  if (!found) throw fieldError(field, `\`${id}\` is not one of this team's segments (deleted, or never made).`);
}

export async function checkTopic(db: Knex, teamId: string, id: string): Promise<void> {
  const found = isUuid(id) && (await db('topics').where({ team_id: teamId, id }).first('id'));
  if (!found) throw fieldError('topic_id', `\`${id}\` is not one of this team's topics (deleted, or never made).`);
}

export interface ContentInput {
  name?: string | null;
  segment_id?: string;
  audience_id?: string;
  topic_id?: string | null;
  from?: string;
  reply_to?: string | string[] | null;
  subject?: string;
  preview_text?: string | null;
  html?: string | null;
  text?: string | null;
  document?: BlockDocument | null;
  template_id?: string;
}

/** The checked content of a create or an update (undefined: not given, left as it is). */
export async function readContent(
  db: Knex,
  teamId: string,
  input: ContentInput,
  publicBaseUrl: string,
): Promise<BroadcastContent> {
  const segment = input.segment_id ?? input.audience_id;
  const segmentField = input.segment_id !== undefined ? 'segment_id' : 'audience_id';
  if (segment !== undefined) await checkSegment(db, teamId, segment, segmentField);
  if (input.topic_id) await checkTopic(db, teamId, input.topic_id);
  checkText('name', input.name, NAME_MAX_LENGTH);
  checkText('subject', input.subject, SUBJECT_MAX_LENGTH);
  checkText('preview_text', input.preview_text, PREVIEW_MAX_LENGTH);
  checkText('html', input.html, BODY_MAX_BYTES, true);
  checkText('text', input.text, BODY_MAX_BYTES, true);
  const body = await readBody(input, publicBaseUrl);
  return {
    name: input.name,
    segment_id: segment,
    topic_id: input.topic_id,
    from: input.from === undefined ? undefined : checkFrom(input.from),
    reply_to: input.reply_to === undefined ? undefined : input.reply_to === null ? [] : checkReplyTo(input.reply_to),
    subject: input.subject,
    preview_text: input.preview_text,
    ...body,
    template_id: input.template_id,
  };
}

/** The sender's domain name, for the gate's check that it is verified. */
export const fromDomain = (from: string) => parseAddress(parseMailbox(from).address).domain;
