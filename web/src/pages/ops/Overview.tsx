// The dashboard's landing page: the team's sends, deliveries, bounces, complaints, opens and clicks over a range
// (GET /emails/metrics), counted in the browser's own timezone. The range is in the URL (?range=7d), so a link shows
// the same view.
import { useSearchParams } from 'react-router';
import { api, type Schemas } from '../../api/client';
import { Empty, Shown, useLoad } from '../../ui';
import { LineChart, type Series } from './Chart';

type Metrics = Schemas['EmailMetrics'];
type Metric = 'sent' | 'delivered' | 'bounced' | 'complained' | 'opened' | 'clicked';

const METRICS: { key: Metric; label: string; color: string; dash?: string }[] = [
  { key: 'sent', label: 'Sent', color: '#0b57d0' },
  { key: 'delivered', label: 'Delivered', color: '#1a7f37', dash: '6 3' },
  { key: 'bounced', label: 'Bounced', color: '#b3261e', dash: '2 3' },
  { key: 'complained', label: 'Complaints', color: '#8250df', dash: '8 3 2 3' },
  { key: 'opened', label: 'Opens', color: '#0b57d0' },
  { key: 'clicked', label: 'Clicks', color: '#bc4c00', dash: '6 3' },
];

const RANGES = {
  '24h': { label: 'Last 24 hours', granularity: 'hourly', days: 1 },
  '7d': { label: 'Last 7 days', granularity: 'daily', days: 7 },
  '30d': { label: 'Last 30 days', granularity: 'daily', days: 30 },
  '12w': { label: 'Last 12 weeks', granularity: 'weekly', days: 84 },
} as const;
type Range = keyof typeof RANGES;

/** The browser's IANA zone (the api refuses fixed offsets; a browser always names a zone). */
export const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** A local calendar date, YYYY-MM-DD, `daysBack` days before today. */
function localDate(daysBack: number): string {
  const d = new Date();
  d.setDate(d.getDate() - daysBack);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

function startOf(range: Range): string {
  if (range === '24h') {
    const d = new Date(Date.now() - 23 * 3600_000);
    d.setMinutes(0, 0, 0);
    return d.toISOString();
  }
  return localDate(RANGES[range].days - 1);
}

function periodLabel(iso: string, granularity: Metrics['granularity']): string {
  const d = new Date(iso);
  if (granularity === 'hourly') return d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (granularity === 'monthly') return d.toLocaleDateString(undefined, { month: 'short', year: 'numeric' });
  return d.toLocaleDateString(undefined, { month: 'short', day: 'numeric' });
}

export function Overview() {
  const [params, setParams] = useSearchParams();
  const asked = params.get('range');
  const range: Range = asked && asked in RANGES ? (asked as Range) : '7d';
  const zone = browserZone();
  const [load, reload] = useLoad(
    () =>
      api.GET('/emails/metrics', {
        params: {
          query: {
            start_date: startOf(range),
            timezone: zone,
            granularity: RANGES[range].granularity,
            dimensions: 'period',
            metrics: METRICS.map((m) => m.key).join(','),
          },
        },
      }),
    [range, zone],
  );
  return (
    <>
      <h1>Overview</h1>
      <div className="toolbar">
        <label className="field">
          <span>Range</span>
          <select value={range} onChange={(e) => setParams({ range: e.target.value })}>
            {Object.entries(RANGES).map(([k, r]) => (
              <option key={k} value={k}>
                {r.label}
              </option>
            ))}
          </select>
        </label>
        <button type="button" className="secondary" onClick={reload}>
          Refresh
        </button>
        <p className="muted">Times in {zone}.</p>
      </div>
      <Shown load={load} what="the metrics">
        {(m) => <Charts m={m} />}
      </Shown>
    </>
  );
}

function Charts({ m }: { m: Metrics }) {
  const total = (k: Metric) => m.totals[k] ?? 0;
  const rows = m.data ?? [];
  const labels = rows.map((r) => periodLabel(r.period ?? '', m.granularity));
  const series = (keys: Metric[]): Series[] =>
    METRICS.filter((d) => keys.includes(d.key)).map((d) => ({ ...d, values: rows.map((r) => r[d.key] ?? 0) }));
  const range = `${periodLabel(m.start_date, 'daily')} to ${periodLabel(m.end_date, 'daily')}`;
  return (
    <>
      <dl className="stats" aria-label="Totals over the range">
        {METRICS.map((d) => (
          <div key={d.key} className="stat" data-metric={d.key}>
            <dt>{d.label}</dt>
            <dd>{total(d.key).toLocaleString()}</dd>
          </div>
        ))}
      </dl>
      {METRICS.every((d) => total(d.key) === 0) ? (
        <Empty>Nothing sent in this range yet. Send an email with an API key and its counts show here.</Empty>
      ) : (
        <div className="charts">
          <section aria-labelledby="delivery-title">
            <h2 id="delivery-title">Delivery</h2>
            <LineChart
              title="Delivery over time"
              desc={`Recipients sent, delivered, bounced and complaining, ${m.granularity}, ${range}.`}
              labels={labels}
              series={series(['sent', 'delivered', 'bounced', 'complained'])}
            />
          </section>
          <section aria-labelledby="engagement-title">
            <h2 id="engagement-title">Engagement</h2>
            <LineChart
              title="Opens and clicks over time"
              desc={`Human opens and clicks, ${m.granularity}, ${range}.`}
              labels={labels}
              series={series(['opened', 'clicked'])}
            />
          </section>
        </div>
      )}
    </>
  );
}
