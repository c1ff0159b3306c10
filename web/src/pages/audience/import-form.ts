// What the import's upload reads in the browser before sending: the CSV's header row (from the file's first bytes,
// never the whole file) and the form fields made of the person's choices (`column_map`, `segments`, `topics`, as
// JSON text: docs/imports.md).

/** The first row's names, as the api reads them (quotes, `""` inside quotes, a byte order mark; names trimmed). */
export function headerOf(text: string): string[] {
  const s = text.replace(/^\uFEFF/, '');
  const names: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (quoted) {
      if (c !== '"') cell += c;
      else if (s[i + 1] === '"') cell += s[++i];
      else quoted = false;
    } else if (c === '"' && cell.trim() === '') {
      quoted = true;
      cell = '';
    } else if (c === ',') {
      names.push(cell);
      cell = '';
    } else if (c === '\n' || c === '\r') break;
    else cell += c;
  }
  names.push(cell);
  return names.map((n) => n.trim());
}

/** Up to 1 MB of the file's start: the header row is within it (the api refuses a longer row). */
export async function readHeader(file: File): Promise<string[]> {
  return headerOf(await file.slice(0, 1_048_576).text());
}

export const FIELDS = [
  ['email', 'Email address'],
  ['first_name', 'First name'],
  ['last_name', 'Last name'],
  ['full_name', 'Full name (split at its first space)'],
  ['unsubscribed', 'Unsubscribed (true/false)'],
  ['subscription_status', 'Subscription status'],
] as const;

/** A column's mapping: '' (read by its own name, if it is a field's), a field, or `property:<key>`. */
export type Mapping = Record<string, string>;

/** The `column_map` of the choices, or undefined when nothing is mapped; a field named twice: the first wins. */
export function columnMap(mapping: Mapping): Record<string, unknown> | undefined {
  const map: Record<string, unknown> = {};
  const properties: Record<string, string> = {};
  for (const [column, to] of Object.entries(mapping)) {
    if (to.startsWith('property:')) properties[to.slice('property:'.length)] ??= column;
    else if (to !== '') map[to] ??= column;
  }
  if (Object.keys(properties).length > 0) map.properties = properties;
  return Object.keys(map).length > 0 ? map : undefined;
}

/** The fields mapped from more than one column (refused before sending: which column was meant is unclear). */
export function twice(mapping: Mapping): string[] {
  const seen = new Map<string, number>();
  for (const to of Object.values(mapping)) if (to !== '') seen.set(to, (seen.get(to) ?? 0) + 1);
  return [...seen].filter(([, n]) => n > 1).map(([to]) => to.replace(/^property:/, ''));
}
