// An import survives a real kill of the worker: the worker process (worker/main.ts) is killed with SIGKILL in the
// middle of an import; while it is dead the committed progress is consistent (as many contacts as counted created);
// a new worker resumes the import where it stopped, and at the end every row is counted once and every contact,
// membership and topic choice exists once: no row was created twice (it would show as skipped) or lost. A worker
// stopped with SIGTERM pauses its import at the next batch and exits; the next worker resumes it at once.
import test from 'ava';
import { startPlatform, type Platform } from './helpers/platform.ts';
import { startEntry, type EntryProcess } from './helpers/processes.ts';
import { createSegment, createTopic } from './helpers/contacts.ts';
import { finished, startImport } from './helpers/imports.ts';
import { until } from './helpers/wait.ts';

/** Enough that the kill (at 4,000 created) lands with most of the file to go: 40 batches after it. */
const ROWS = 20_000;
/** Small batches: many commits, so the kill lands between some and inside another. */
const BATCH_ROWS = '400';

let p: Platform;
const workers: EntryProcess[] = [];
test.before(async () => {
  p = await startPlatform();
});
test.after.always(async () => {
  for (const w of workers) await w.stop();
  await p?.close();
});

const startWorker = async () => {
  const w = startEntry('worker/main.ts', p.config, { CONTACT_IMPORT_BATCH_ROWS: BATCH_ROWS });
  workers.push(w);
  await w.logged('worker.started', 60_000);
  return w;
};

const count = async (table: string, where: Record<string, string>) =>
  Number((await p.db(table).where(where).count({ n: '*' }).first())!.n);

test.serial(
  'a worker killed with SIGKILL mid-import: a new one resumes it, nothing created or counted twice',
  async (t) => {
    t.timeout(240_000);
    const team = await p.createTeam('Kill');
    const segment = await createSegment(p, team, 'Imported');
    const topic = await createTopic(p, team, { name: 'News', default_subscription: 'opt_out' });
    const rows = Array.from({ length: ROWS }, (_, i) => `person${i}@example.com,Person,${i}`);
    const csv = `email,first_name,last_name\n${rows.join('\n')}\n`;

    const first = await startWorker();
    const id = await startImport(p, team, csv, {
      segments: [{ id: segment }],
      topics: [{ id: topic, subscription: 'opt_in' }],
    });
    // Live counts while it runs: in progress, part of the rows done.
    const live = await until(
      async () => {
        const res = await p.request('GET', `/contacts/imports/${id}`, { key: team.key });
        return res.body.counts.created >= 4000 ? res.body : undefined;
      },
      { timeoutMs: 120_000, intervalMs: 20, what: 'the import under way' },
    );
    process.kill(first.pid, 'SIGKILL');
    await first.exit();
    t.is(live.status, 'in_progress');
    t.is(live.counts.total, ROWS);
    t.true(live.counts.created < ROWS, `killed before the end (${live.counts.created} of ${ROWS})`);

    // What the dead worker committed is consistent: the counts, the offset and the rows moved together.
    const atKill = await p.db('contact_imports').where({ id }).first();
    t.is(atKill.status, 'in_progress');
    t.true(atKill.row_offset < ROWS, `the kill landed mid-import (offset ${atKill.row_offset})`);
    t.is(atKill.created, atKill.row_offset);
    t.is(await count('contacts', { team_id: team.id }), atKill.created);
    t.is(await count('contact_segments', { segment_id: segment }), atKill.created);
    t.is(await count('topic_subscriptions', { topic_id: topic }), atKill.created);

    const second = await startWorker();
    const done = await finished(p, team, id, 180_000);
    t.is(done.status, 'completed');
    t.deepEqual(done.counts, { total: ROWS, created: ROWS, updated: 0, skipped: 0, failed: 0 });
    t.regex(second.output(), new RegExp(`"resumeAt":${atKill.row_offset}[,}]`), 'the new worker resumed at the offset');
    t.is(await count('contacts', { team_id: team.id }), ROWS);
    t.is(await count('contact_segments', { segment_id: segment }), ROWS);
    t.is(await count('topic_subscriptions', { topic_id: topic }), ROWS);
    t.is(await count('audit_log', { team_id: team.id }), 1, 'one audit entry');
    t.is(await count('events', { team_id: team.id }), 0, 'no contact.* events');
    const last = await p
      .db('contacts')
      .where({ team_id: team.id, email: `person${ROWS - 1}@example.com` })
      .first();
    t.like(last, { first_name: 'Person', last_name: String(ROWS - 1) });
  },
);

test.serial(
  'a worker stopped with SIGTERM mid-import pauses it and exits; the next one resumes it at once',
  async (t) => {
    t.timeout(240_000);
    // Only this test's workers may take its import.
    for (const w of workers.splice(0)) await w.stop();
    const team = await p.createTeam('Stop');
    const rows = Array.from({ length: ROWS }, (_, i) => `stopped${i}@example.com`);
    const first = await startWorker();
    const id = await startImport(p, team, `email\n${rows.join('\n')}\n`);
    await until(async () => (await p.db('contact_imports').where({ id }).first()).created >= 4000, {
      timeoutMs: 120_000,
      intervalMs: 20,
      what: 'the import under way',
    });
    const asked = Date.now();
    t.is(await first.stop(60_000), 0, 'a clean exit');
    t.log(`stopped ${Date.now() - asked} ms after SIGTERM`);
    const at = (msg: string) => Number(new RegExp(`"time":(\\d+)[^\\n]*"msg":"${msg}"`).exec(first.output())?.[1]);
    t.log(`the import paused ${at('contact_import.paused') - at('process.stopping')} ms after the stop began`);
    t.true(at('contact_import.paused') >= at('process.stopping'));
    const paused = await p.db('contact_imports').where({ id }).first();
    t.is(paused.status, 'in_progress');
    t.true(paused.row_offset < ROWS, `paused mid-import (offset ${paused.row_offset})`);
    t.is(paused.created, paused.row_offset);

    const second = await startWorker();
    const done = await finished(p, team, id, 180_000);
    t.deepEqual(done.counts, { total: ROWS, created: ROWS, updated: 0, skipped: 0, failed: 0 });
    t.regex(second.output(), new RegExp(`"resumeAt":${paused.row_offset}[,}]`));
    t.is(await count('contacts', { team_id: team.id }), ROWS);
  },
);
