// A decoded string kept exactly in PostgreSQL. A text column cannot hold U+0000, and no UTF-8 encodes an unpaired
// UTF-16 surrogate; both round-trip through the string's UTF-16 code units, kept as bytes beside the text
// column's storable form (NUL removed, a lone surrogate as U+FFFD), and only when they differ.

// eslint-disable-next-line no-control-regex -- the NUL is what this looks for
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** What a text column can hold of `value`: NULs removed, a lone surrogate as U+FFFD. */
export function storable(value: string): string {
  return value.replace(UNSTORABLE, (c) => (c === '\u0000' ? '' : '\uFFFD'));
}

/** The text column's value and, when that loses something, the exact value as UTF-16LE code units. */
export function toStored(value: string | null): { text: string | null; exact: Buffer | null } {
  if (value === null) return { text: null, exact: null };
  const text = storable(value);
  return { text, exact: text === value ? null : Buffer.from(value, 'utf16le') };
}

/** The value as it was given to toStored. */
export function fromStored(text: string | null, exact: Buffer | null | undefined): string | null {
  return exact ? exact.toString('utf16le') : text;
}
