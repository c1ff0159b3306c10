// The tracking listener's metrics (api process; docs/observability.md): hits by kind and verdict, and what the
// engagement recorder wrote or had to drop.
import { Counter, Registry } from 'prom-client';
import { zeroed } from './registry.ts';

export function trackingMetrics(registry: Registry = new Registry()) {
  const hits = new Counter({
    name: 'postwerk_tracking_hits_total',
    help: 'Hits on tracking hosts, by kind (open, click) and verdict (human, machine, refused)',
    labelNames: ['kind', 'verdict'] as const,
    registers: [registry],
  });
  // Every pair from the start, at 0, as the counters with one label (zeroed).
  for (const kind of ['open', 'click'])
    for (const verdict of ['human', 'machine', 'refused']) hits.inc({ kind, verdict }, 0);
  return {
    hits,
    recorded: zeroed(
      new Counter({
        name: 'postwerk_tracking_recorded_total',
        help: 'Engagement rows written (recorded) and hits dropped unrecorded (dropped: the database failed or lagged)',
        labelNames: ['outcome'] as const,
        registers: [registry],
      }),
      'outcome',
      ['recorded', 'dropped'],
    ),
  };
}

/** What the listener and the recorder call on them: a thread relaying to its process's metrics is one too. */
export interface TrackingMetrics {
  hits: Pick<Counter<'kind' | 'verdict'>, 'inc'>;
  recorded: Pick<Counter<'outcome'>, 'inc'>;
}
