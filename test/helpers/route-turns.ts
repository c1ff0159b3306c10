// Answers a page's asks as they would have come at another moment, for the dashboard's tests of what a page does
// with them: the api's real answer edited to what it was before a change (reads straddling a commit), or a
// restarting api's 503. Used with page.route; the asks after the given turns go through to the api.
import type { Route } from 'playwright-core';

type Json = Record<string, unknown>;

/** The message of the 503 a `'restarting'` turn answers (in the api's Error shape). */
export const RESTARTING = 'The api is restarting';

/** An edit of the api's real answer, or a restarting api. */
export type Turn = ((body: Json) => Json) | 'restarting';

export interface Turns {
  handler: (route: Route) => Promise<void>;
  /** How many asks came, the turns' and the later ones. */
  asked: () => number;
}

export function inTurns(turns: Turn[]): Turns {
  let asked = 0;
  return {
    asked: () => asked,
    handler: async (route) => {
      const turn = turns[asked++];
      if (turn === undefined) return route.continue();
      if (turn === 'restarting')
        return route.fulfill({
          status: 503,
          json: { statusCode: 503, name: 'application_error', message: RESTARTING },
        });
      const response = await route.fetch();
      await route.fulfill({ response, json: turn((await response.json()) as Json) });
    },
  };
}
