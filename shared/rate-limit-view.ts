// One api copy's view of each team's current rate-limit window, so that a request well under its team's limit need
// not wait for Redis's count (api/middleware/rate-limit.ts). The count itself stays Redis's: every request still
// counts there, and a request near the limit waits for the exact count before it runs (docs/guarantees.md).

/** A team's window as this copy knows it: the highest count Redis answered, and this copy's counts in flight. */
export interface WindowView {
  second: number;
  known: number;
  pending: number;
}

/** Views per Redis client: each api copy (its own client) keeps its own. */
const views = new WeakMap<object, Map<string, WindowView>>();
/** Teams kept before the views of past windows are dropped. */
const PRUNE_AT = 10_000;

/** The view of `teamId`'s window of `second` held for `client`; a new window starts at zero. */
export function viewOf(client: object, teamId: string, second: number): WindowView {
  let byTeam = views.get(client);
  if (!byTeam) views.set(client, (byTeam = new Map()));
  let view = byTeam.get(teamId);
  if (view?.second === second) return view;
  if (byTeam.size >= PRUNE_AT) for (const [id, v] of byTeam) if (v.second < second) byTeam.delete(id);
  view = { second, known: 0, pending: 0 };
  byTeam.set(teamId, view);
  return view;
}

/**
 * The least count this request can have in its window (the highest count Redis answered, this copy's in flight, and
 * its own), and whether that is at most half the limit: then it runs while its count is made. With one api copy that
 * least is the exact count. With several, another copy's requests of the last round trip are not in it yet, and a
 * copy runs at most half the limit a window without waiting: the limit can be passed by at most half of it per copy.
 */
export function underHalf(view: WindowView, limit: number): { least: number; runAtOnce: boolean } {
  const least = view.known + view.pending + 1;
  return { least, runAtOnce: least * 2 <= limit };
}

/** Counts one request in flight until `count` settles; the answer raises what the view knows. */
export function track(view: WindowView, count: Promise<number>): Promise<number> {
  view.pending++;
  return count.then(
    (n) => {
      view.pending--;
      view.known = Math.max(view.known, n);
      return n;
    },
    (err: unknown) => {
      view.pending--;
      throw err;
    },
  );
}
