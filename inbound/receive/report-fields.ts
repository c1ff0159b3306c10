// The header-like syntax that DSNs (RFC 3464 §2.1), feedback reports (RFC 5965 §3.1) and the headers of a
// returned message share: `Name: value` lines, continued by lines that start with white space (RFC 5322
// §2.2.3), in groups separated by blank lines. Pure: text in, fields out.

/** A field group: lower-cased name → its values in order (a field may repeat, e.g. Original-Rcpt-To). */
export type Fields = Map<string, string[]>;

export function fieldGroups(text: string): Fields[] {
  const groups: Fields[] = [];
  let current: Fields | null = null;
  let last: { name: string; index: number } | null = null;
  for (const line of text.split(/\r?\n/)) {
    if (line.trim() === '') {
      current = null;
      last = null;
      continue;
    }
    if (/^[ \t]/.test(line) && current && last) {
      const values = current.get(last.name)!;
      values[last.index] += ` ${line.trim()}`;
      continue;
    }
    const colon = line.indexOf(':');
    if (colon <= 0) continue;
    if (!current) {
      current = new Map();
      groups.push(current);
    }
    const name = line.slice(0, colon).trim().toLowerCase();
    const values = current.get(name) ?? [];
    values.push(line.slice(colon + 1).trim());
    current.set(name, values);
    last = { name, index: values.length - 1 };
  }
  return groups;
}

export const first = (fields: Fields, name: string): string | null => fields.get(name)?.[0] ?? null;

/** The header block of a message (up to the first blank line) as one field group. */
export function headerFields(message: string): Fields {
  const end = message.search(/\r?\n\r?\n/);
  return fieldGroups(end < 0 ? message : message.slice(0, end))[0] ?? new Map();
}

// Bounded by RFC 5321 §4.5.3.1 (local part 64, label 63) and unambiguous, so a hostile text cannot make the
// match backtrack: linear in the text's length.
const LOCAL = "A-Za-z0-9.!#$%&'*+/=?^_`{|}~-";
const ADDRESS = new RegExp(`(?<![${LOCAL}])[${LOCAL}]{1,64}@[A-Za-z0-9-]{1,63}(?:\\.[A-Za-z0-9-]{1,63}){1,16}`, 'g');

/** Every address-looking string in `text`, in order, without duplicates (compared case-insensitively). */
export function addressesIn(text: string): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const m of text.matchAll(ADDRESS)) {
    const key = m[0].toLowerCase();
    if (!seen.has(key)) {
      seen.add(key);
      out.push(m[0]);
    }
  }
  return out;
}

/**
 * The address of a typed address field (`rfc822; user@example.net`, RFC 3464 §2.3.2), or of a bare one
 * (`<user@example.net>`, as some reporters write Original-Rcpt-To). `utf-8` addresses (RFC 6533 §3) are read
 * as written; xtext escapes (`+2B`) are decoded. Null when the value holds no address.
 */
export function typedAddress(value: string | null): string | null {
  if (!value) return null;
  const semi = value.indexOf(';');
  const bare = (semi >= 0 ? value.slice(semi + 1) : value).replace(/\+([0-9A-Fa-f]{2})/g, (_, h: string) =>
    String.fromCharCode(parseInt(h, 16)),
  );
  return addressesIn(bare)[0] ?? null;
}

/** To and Cc of a returned message's header block. */
export function originalRecipients(message: string): string[] {
  const h = headerFields(message);
  return addressesIn([...(h.get('to') ?? []), ...(h.get('cc') ?? [])].join(', '));
}
