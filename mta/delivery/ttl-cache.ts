// Lookups kept for a while per key (the delivery's DNS answers, sending domains and their keys), so a busy
// destination or domain costs one lookup per TTL however many messages ask at once: the promise is kept, so the
// messages that ask while it is in flight share it. A lookup that fails, or whose answer `keep` refuses, is not
// remembered and is asked again next time. `ttlMs <= 0` keeps nothing.
export type TtlCache<T> = (key: string, load: () => Promise<T>) => Promise<T>;

export function ttlCache<T>(ttlMs: number, keep: (value: T) => boolean = () => true, maxEntries = 10_000): TtlCache<T> {
  const entries = new Map<string, { at: number; value: Promise<T> }>();
  return (key, load) => {
    const now = Date.now();
    const hit = entries.get(key);
    if (hit && now - hit.at < ttlMs) return hit.value;
    const value = load();
    if (ttlMs <= 0) return value;
    const entry = { at: now, value };
    entries.set(key, entry);
    // Only this entry: a newer one for the same key stays.
    const forget = () => entries.get(key) === entry && entries.delete(key);
    value.then((v) => keep(v) || forget(), forget);
    if (entries.size > maxEntries) entries.delete(entries.keys().next().value!);
    return value;
  };
}
