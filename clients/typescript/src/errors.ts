/**
 * Typed errors: every non-2xx answer of the server becomes a HensuError. The class is chosen
 * by the body's `code` when the server sent one (a refusal by a limit or a rule), else by the
 * HTTP status, else by its family (4xx / 5xx), so both `instanceof NotFoundError` and
 * `instanceof IdempotencyKeyReusedError` work.
 */

/** The server's error body: `{error, status, code?, diagnostics?}`. */
export interface ErrorBody {
  error?: string;
  status?: number;
  code?: string | null;
  diagnostics?: unknown;
  [key: string]: unknown;
}

export class HensuError extends Error {
  readonly status: number;
  readonly code: string | undefined;
  readonly body: ErrorBody;
  /** Seconds, from `Retry-After` (a 503 `store_unavailable`). */
  readonly retryAfter: number | undefined;

  constructor(message: string, status: number, code?: string, body: ErrorBody = {}, retryAfter?: number) {
    super(message);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.body = body;
    this.retryAfter = retryAfter;
  }

  /** A refused push's diagnostics (the `hensuc check --format json` report), if any. */
  get diagnostics(): unknown {
    return this.body.diagnostics;
  }
}

/** 4xx: the request was refused; retrying it unchanged will not help. */
export class ClientError extends HensuError {}
/** 5xx. */
export class ServerError extends HensuError {}

export class BadRequestError extends ClientError {}
/** 401: no token, or one that does not verify. */
export class UnauthorizedError extends ClientError {}
/** 403: a valid token without `sub` or with a bad `tenant_id`. */
export class ForbiddenError extends ClientError {}
/** 404: unknown (or another tenant's) workflow or execution. */
export class NotFoundError extends ClientError {}
export class MethodNotAllowedError extends ClientError {}
/** 409: the execution ended or runs elsewhere. */
export class ConflictError extends ClientError {}
export class PayloadTooLargeError extends ClientError {}
export class UnsupportedMediaTypeError extends ClientError {}
export class UnprocessableError extends ClientError {}
export class TooManyRequestsError extends ClientError {}
/** 503: shutting down, or the store is unreachable (see `retryAfter`). */
export class ServiceUnavailableError extends ServerError {}

export class InvalidParameterError extends BadRequestError {}
export class InvalidCursorError extends BadRequestError {}
export class InvalidIdempotencyKeyError extends BadRequestError {}
export class ContextTooDeepError extends BadRequestError {}
export class ContextTooLargeError extends PayloadTooLargeError {}
export class BodyTooLargeError extends PayloadTooLargeError {}
export class IdempotencyKeyReusedError extends UnprocessableError {}
export class TooManyStreamsError extends TooManyRequestsError {}
export class StoreUnavailableError extends ServiceUnavailableError {}
export class ServerBusyError extends ServiceUnavailableError {}
export class RequestTimeoutError extends HensuError {}
export class HostNotAllowedError extends ClientError {}
/** An event stream kept closing before its execution ended (`maxReconnects` reached). */
export class StreamEndedError extends HensuError {}

type ErrorClass = new (message: string, status: number, code?: string, body?: ErrorBody, retryAfter?: number) => HensuError;

export const BY_CODE: Record<string, ErrorClass> = {
  invalid_parameter: InvalidParameterError,
  invalid_cursor: InvalidCursorError,
  invalid_idempotency_key: InvalidIdempotencyKeyError,
  context_too_deep: ContextTooDeepError,
  context_too_large: ContextTooLargeError,
  body_too_large: BodyTooLargeError,
  idempotency_key_reused: IdempotencyKeyReusedError,
  too_many_streams: TooManyStreamsError,
  store_unavailable: StoreUnavailableError,
  server_busy: ServerBusyError,
  request_timeout: RequestTimeoutError,
  host_not_allowed: HostNotAllowedError,
};

export const BY_STATUS: Record<number, ErrorClass> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  405: MethodNotAllowedError,
  409: ConflictError,
  413: PayloadTooLargeError,
  415: UnsupportedMediaTypeError,
  422: UnprocessableError,
  429: TooManyRequestsError,
  503: ServiceUnavailableError,
};

export function errorClass(status: number, code?: string): ErrorClass {
  if (code !== undefined && Object.hasOwn(BY_CODE, code)) return BY_CODE[code]!;
  if (Object.hasOwn(BY_STATUS, status)) return BY_STATUS[status]!;
  if (status >= 400 && status < 500) return ClientError;
  return status >= 500 ? ServerError : HensuError;
}

/** The typed error of a non-2xx answer; `body` is its parsed JSON or its text. */
export function errorFromResponse(status: number, body: unknown, headers: Headers): HensuError {
  const parsed: ErrorBody = typeof body === "object" && body !== null ? (body as ErrorBody) : {};
  let message = typeof parsed.error === "string" ? parsed.error : undefined;
  if (message === undefined) message = typeof body === "string" && body !== "" ? body.slice(0, 500) : `HTTP ${status}`;
  const code = typeof parsed.code === "string" ? parsed.code : undefined;
  const raw = headers.get("retry-after");
  const retryAfter = raw !== null && raw.trim() !== "" && Number.isFinite(Number(raw)) ? Number(raw) : undefined;
  const Cls = errorClass(status, code);
  return new Cls(message, status, code, parsed, retryAfter);
}
