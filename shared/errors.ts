// One error type for every surface. HTTP translates it to the spec's Error shape; SMTP maps the status to a
// reply code. Anything that is not a ServiceError is our own bug: 500 application_error, no internals.

export const errorNames = {
  invalid_idempotency_key: 400,
  validation_error: 422,
  missing_api_key: 401,
  restricted_api_key: 401,
  invalid_api_key: 403,
  invalid_permission: 403,
  suspended_api_key: 403,
  inbox_not_set_up: 403,
  email_above_quota: 403,
  not_found: 404,
  method_not_allowed: 405,
  invalid_idempotent_request: 409,
  concurrent_idempotent_requests: 409,
  receiving_mx_in_use: 409,
  conversation_conflict: 409,
  site_moved: 410,
  precondition_failed: 412,
  missing_required_field: 422,
  missing_required_parameter: 422,
  invalid_parameter: 422,
  invalid_attachment: 422,
  snooze_needs_a_person: 422,
  resource_locked: 423,
  rate_limit_exceeded: 429,
  daily_quota_exceeded: 429,
  monthly_quota_exceeded: 429,
  marketing_quota_exceeded: 429,
  application_error: 500,
  not_implemented: 501,
  service_unavailable: 503,
} as const;

export type ErrorName = keyof typeof errorNames;

export interface FieldError {
  path: string;
  message: string;
}

export interface ErrorBody {
  statusCode: number;
  name: string;
  message: string;
  errors?: FieldError[];
  claimable?: boolean;
  details?: Record<string, unknown>;
}

export class ServiceError extends Error {
  readonly status: number;
  constructor(
    readonly errorName: ErrorName,
    message: string,
    readonly options: {
      status?: number;
      errors?: FieldError[];
      details?: Record<string, unknown>;
      claimable?: boolean;
      /** The SMTP reply when the status alone does not say it (never in the HTTP body). */
      smtp?: { code: number; enhanced: string };
    } = {},
  ) {
    super(message);
    this.status = options.status ?? errorNames[errorName];
  }

  toBody(): ErrorBody {
    const body: ErrorBody = { statusCode: this.status, name: this.errorName, message: this.message };
    if (this.options.errors) body.errors = this.options.errors;
    if (this.options.claimable !== undefined) body.claimable = this.options.claimable;
    if (this.options.details) body.details = this.options.details;
    return body;
  }
}

/** 413 has no name in the spec's list; the body says validation_error with the 413 status. */
export function payloadTooLarge(limit: number): ServiceError {
  return new ServiceError('validation_error', `The request body is larger than ${limit} bytes.`, { status: 413 });
}

export function notFound(what: string): ServiceError {
  return new ServiceError('not_found', `${what} not found.`);
}

export function internalError(): ServiceError {
  return new ServiceError(
    'application_error',
    'An unexpected error occurred. We are unable to process your request right now, please try again later.',
  );
}

export function toServiceError(err: unknown): ServiceError {
  return err instanceof ServiceError ? err : internalError();
}
