/**
 * The error vocabulary of the API. Every failure a client sees is one of these, rendered as
 * `{message}` with its status by the error middleware; anything else becomes a redacted 500.
 */
export const JSON_BODY_REQUIRED = 'request body must be JSON (Content-Type: application/json)';

export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Fields the body carries beside `message` (a machine-readable reason, as Grafana's 412 `status`). */
    readonly fields: Record<string, string> = {},
  ) {
    super(message);
  }
}

export class BadRequestError extends HttpError {
  constructor(message: string) {
    super(400, message);
  }
}
export class UnauthorizedError extends HttpError {
  constructor(message = 'authentication required') {
    super(401, message);
  }
}
export class ForbiddenError extends HttpError {
  constructor(message = 'permission denied') {
    super(403, message);
  }
}
export class NotFoundError extends HttpError {
  constructor(message = 'not found') {
    super(404, message);
  }
}
export class ConflictError extends HttpError {
  constructor(message: string) {
    super(409, message);
  }
}
/** A save whose precondition no longer holds (Grafana's dashboard 412): `status` says which one. */
export class PreconditionFailedError extends HttpError {
  constructor(message: string, status: 'version-mismatch' | 'name-exists') {
    super(412, message, {}, { status });
  }
}
export class PayloadTooLargeError extends HttpError {
  constructor(message = 'request body is too large') {
    super(413, message);
  }
}
export class TooManyRequestsError extends HttpError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, message, { 'Retry-After': String(retryAfterSeconds) });
  }
}
