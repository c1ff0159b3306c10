// Plain-text tables: left-aligned first column, right-aligned numbers, "-" where a figure is unknown.

export type Cell = string | number | undefined;

export function fixed(n: number | undefined, digits: number): string {
  return n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits);
}

export function renderTable(header: string[], rows: Cell[][]): string {
  const text = rows.map((r) => r.map((c) => (c === undefined ? '-' : String(c))));
  const widths = header.map((h, i) => Math.max(h.length, ...text.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...text.map(line)].join('\n');
}
