// A small line chart drawn as SVG by React (no chart library, nothing fetched): one line per series over labelled
// periods, a legend, and the same numbers as a table for screen readers and anyone who prefers one. The SVG names
// itself with <title> and <desc>; each series also has its own dash so colour is not the only cue.
import { useId } from 'react';

export interface Series {
  key: string;
  label: string;
  color: string;
  dash?: string;
  values: number[];
}

const W = 480;
const H = 220;
// Room on the right for the last label, centred on its point as every label is (the left has the y axis's).
const PAD = { left: 40, right: 22, top: 12, bottom: 28 };

/** A round top for the y axis: 1, 2 or 5 times a power of ten, at least `max`. */
export function niceMax(max: number): number {
  if (max <= 4) return 4;
  const p = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * p >= max) return m * p;
  return 10 * p;
}

/**
 * The points labelled on the x axis: every one when `n` fit (a week's seven days), else every `step`-th from the
 * first, so the labels stand at even distances, and the last point, whose label replaces the one before it when the
 * two would stand closer than half a step.
 */
function ticks(length: number, n: number): number[] {
  if (length <= n) return [...Array(length).keys()];
  const step = Math.ceil((length - 1) / (n - 1));
  const out: number[] = [];
  for (let i = 0; i < length - 1; i += step) out.push(i);
  if (length - 1 - out[out.length - 1] < step / 2) out.pop();
  out.push(length - 1);
  return out;
}

export function LineChart(props: { title: string; desc: string; labels: string[]; series: Series[] }) {
  const { title, desc, labels, series } = props;
  const id = useId();
  const top = niceMax(Math.max(0, ...series.flatMap((s) => s.values)));
  const innerW = W - PAD.left - PAD.right;
  const innerH = H - PAD.top - PAD.bottom;
  const x = (i: number) => PAD.left + (labels.length <= 1 ? innerW / 2 : (i * innerW) / (labels.length - 1));
  const y = (v: number) => PAD.top + innerH - (v / top) * innerH;
  const grid = [0, 0.25, 0.5, 0.75, 1].map((f) => Math.round(top * f));
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`} className="chart-svg">
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{desc}</desc>
        {grid.map((g) => (
          <g key={g}>
            <line x1={PAD.left} x2={W - PAD.right} y1={y(g)} y2={y(g)} stroke="#d0d7de" strokeWidth="1" />
            <text x={PAD.left - 6} y={y(g) + 4} textAnchor="end" fontSize="12" fill="#57606a">
              {g}
            </text>
          </g>
        ))}
        {ticks(labels.length, 8).map((i) => (
          <text key={i} className="x-label" x={x(i)} y={H - 8} textAnchor="middle" fontSize="12" fill="#57606a">
            {labels[i]}
          </text>
        ))}
        {series.map((s) => (
          <g key={s.key} data-series={s.key}>
            <polyline
              fill="none"
              stroke={s.color}
              strokeWidth="2"
              strokeDasharray={s.dash}
              points={s.values.map((v, i) => `${x(i)},${y(v)}`).join(' ')}
            />
            {labels.length <= 31
              ? s.values.map((v, i) => <circle key={i} cx={x(i)} cy={y(v)} r="2.5" fill={s.color} />)
              : null}
          </g>
        ))}
      </svg>
      <figcaption>
        <ul className="legend">
          {series.map((s) => (
            <li key={s.key}>
              <svg width="22" height="10" aria-hidden="true">
                <line x1="0" x2="22" y1="5" y2="5" stroke={s.color} strokeWidth="3" strokeDasharray={s.dash} />
              </svg>
              {s.label}
            </li>
          ))}
        </ul>
      </figcaption>
      <details className="chart-table">
        <summary>The numbers as a table</summary>
        <div className="table-wrap">
          <table>
            <caption className="visually-hidden">{title}</caption>
            <thead>
              <tr>
                <th scope="col">Period</th>
                {series.map((s) => (
                  <th scope="col" key={s.key}>
                    {s.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {labels.map((l, i) => (
                <tr key={i}>
                  <th scope="row">{l}</th>
                  {series.map((s) => (
                    <td key={s.key}>{s.values[i]}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </figure>
  );
}
