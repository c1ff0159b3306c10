import type { Counter, Histogram } from 'prom-client';

/** A job's runs by result and their duration. */
export interface JobMetrics {
  jobs: Counter<'result'>;
  duration: Histogram<'result'>;
}

/** Runs a job, counting it by the result it answers (`failed` when it throws) and timing it. */
export async function measured<R extends string>(metrics: JobMetrics, work: () => Promise<R>): Promise<R> {
  const end = metrics.duration.startTimer();
  let result = 'failed';
  try {
    result = await work();
    return result as R;
  } finally {
    metrics.jobs.inc({ result });
    end({ result });
  }
}
