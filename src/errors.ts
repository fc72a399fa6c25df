/**
 * The error vocabulary of the service, shared by every layer: each error carries the status and
 * the safe message a client sees. Stores, the database layer and the domains throw them without
 * knowing HTTP; the error middleware (src/http) renders them as `{message}` with their status,
 * and anything else becomes a redacted 500.
 */
export const JSON_BODY_REQUIRED = 'request body must be JSON (Content-Type: application/json)';

export class ServiceError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Fields the body carries beside `message` (a machine-readable reason, as Grafana's 412 `status`). */
    readonly fields: Record<string, string | boolean> = {},
  ) {
    super(message);
  }
}

export class BadRequestError extends ServiceError {
  constructor(message: string) {
    super(400, message);
  }
}
export class UnauthorizedError extends ServiceError {
  constructor(message = 'authentication required') {
    super(401, message);
  }
}
export class ForbiddenError extends ServiceError {
  constructor(message = 'permission denied') {
    super(403, message);
  }
}
export class NotFoundError extends ServiceError {
  constructor(message = 'not found') {
    super(404, message);
  }
}
export class ConflictError extends ServiceError {
  constructor(message: string) {
    super(409, message);
  }
}
/** A session that must enrol a second factor (MFA_REQUIRED_FOR) before it may do anything else. */
export class MfaEnrolmentRequiredError extends ServiceError {
  constructor() {
    super(
      403,
      'enrol a second factor first: your account needs one (POST /api/user/mfa/totp or a passkey) before it may do anything else',
      {},
      { mfaEnrolmentRequired: true },
    );
  }
}
/** A save whose precondition no longer holds (Grafana's dashboard 412): `status` says which one. */
export class PreconditionFailedError extends ServiceError {
  constructor(message: string, status: 'version-mismatch' | 'name-exists') {
    super(412, message, {}, { status });
  }
}
export class PayloadTooLargeError extends ServiceError {
  constructor(message = 'request body is too large') {
    super(413, message);
  }
}
/** A dependency (the database) cannot be reached for now; the client may retry after the given seconds. */
export class ServiceUnavailableError extends ServiceError {
  constructor(message: string, retryAfterSeconds: number) {
    super(503, message, { 'Retry-After': String(retryAfterSeconds) });
  }
}
export class TooManyRequestsError extends ServiceError {
  constructor(message: string, retryAfterSeconds: number) {
    super(429, message, { 'Retry-After': String(retryAfterSeconds) });
  }
}
/** A backend the service called could not be reached or did not answer usably (the service itself is fine). */
export class BadGatewayError extends ServiceError {
  constructor(message: string) {
    super(502, message);
  }
}
export class GatewayTimeoutError extends ServiceError {
  constructor(message: string) {
    super(504, message);
  }
}
