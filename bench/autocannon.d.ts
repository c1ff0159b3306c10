// autocannon ships no types and @types/autocannon is not a dependency: just the part of its v8 programmatic API
// the benchmark uses (lib/init.js, lib/aggregateResult.js).
declare module 'autocannon' {
  namespace autocannon {
    interface Options {
      url: string;
      connections?: number;
      /** Seconds. */
      duration?: number;
      method?: string;
      headers?: Record<string, string>;
      /** Seconds before a request counts as a timeout (and an error). */
      timeout?: number;
      /** Requests in all, instead of a duration. */
      amount?: number;
      /** Requests per second across every connection. */
      overallRate?: number;
      /** Requests in turn; `setupRequest` may change each one (its path, its body) before it is sent. */
      requests?: {
        method?: string;
        path?: string;
        headers?: Record<string, string>;
        body?: string;
        setupRequest?: (req: Record<string, unknown>) => Record<string, unknown>;
      }[];
    }

    /** hdr-histogram summary; latency values are in milliseconds, request values are requests per second. */
    interface Histogram {
      average: number;
      mean: number;
      stddev: number;
      min: number;
      max: number;
      total: number;
      p50: number;
      p90: number;
      p99: number;
    }

    interface Result {
      /** Seconds the run lasted. */
      duration: number;
      /** Socket errors, timeouts included. */
      errors: number;
      timeouts: number;
      non2xx: number;
      '2xx': number;
      statusCodeStats: Record<string, { count: number }>;
      latency: Histogram;
      requests: Histogram & { sent: number };
    }

    interface Instance extends PromiseLike<Result> {
      stop(): void;
      /** Each answer as it arrives (`responseTime` in ms). */
      on(
        event: 'response',
        listener: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
      ): this;
    }
  }

  function autocannon(options: autocannon.Options): autocannon.Instance;
  export = autocannon;
}
