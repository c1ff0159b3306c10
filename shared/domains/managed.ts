// The managed domain every team gets at creation: `<word>.<MANAGED_DOMAIN_HOST>`, verified by the platform
// (it owns the zone), no records to publish, sending only to the team's verified identities and the simulator.
import { randomInt } from 'node:crypto';
import type { Knex } from 'knex';
import { newId } from '../ids.ts';
import type { DomainRow } from './store.ts';

const ADJECTIVES = [
  'amber',
  'brisk',
  'calm',
  'clever',
  'cosmic',
  'daring',
  'eager',
  'gentle',
  'golden',
  'happy',
  'lively',
  'lucky',
  'mellow',
  'nimble',
  'plucky',
  'quiet',
  'rapid',
  'silver',
  'sunny',
  'swift',
  'tidy',
  'vivid',
  'witty',
  'zesty',
];
const NOUNS = [
  'badger',
  'comet',
  'falcon',
  'fjord',
  'harbor',
  'heron',
  'lagoon',
  'maple',
  'meadow',
  'otter',
  'pebble',
  'pine',
  'quartz',
  'raven',
  'river',
  'robin',
  'summit',
  'thistle',
  'tulip',
  'walrus',
  'willow',
  'wren',
];

function word(): string {
  return `${ADJECTIVES[randomInt(ADJECTIVES.length)]}-${NOUNS[randomInt(NOUNS.length)]}-${randomInt(1000, 10000)}`;
}

export async function createManagedDomain(db: Knex, teamId: string, host: string): Promise<DomainRow> {
  for (let attempt = 0; ; attempt++) {
    const name = `${word()}.${host}`;
    if (await db('domains').where({ name }).first('id')) {
      if (attempt > 20) throw new Error('could not find a free managed domain name');
      continue;
    }
    const now = new Date();
    const [row] = await db<DomainRow>('domains')
      .insert({
        id: newId(),
        team_id: teamId,
        name,
        managed: true,
        status: 'verified',
        verified_at: now,
        sending: 'enabled',
        receiving: 'disabled',
      })
      .returning('*');
    return row;
  }
}

export function findManagedDomain(db: Knex, teamId: string): Promise<DomainRow | undefined> {
  return db<DomainRow>('domains').where({ team_id: teamId, managed: true }).first();
}
