"""Typed errors: every non-2xx answer of the server becomes a :class:`HensuError`.

The server's error body is ``{"error", "status", "code"?, "diagnostics"?}``. The class is
chosen by ``code`` when the server sent one (a refusal by a limit or a rule), else by the
HTTP status, else by its family (4xx / 5xx), so ``except NotFoundError`` and
``except IdempotencyKeyReusedError`` both work.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

__all__ = [
    "HensuError",
    "ClientError",
    "ServerError",
    "BadRequestError",
    "UnauthorizedError",
    "ForbiddenError",
    "NotFoundError",
    "MethodNotAllowedError",
    "ConflictError",
    "PayloadTooLargeError",
    "UnsupportedMediaTypeError",
    "UnprocessableError",
    "TooManyRequestsError",
    "ServiceUnavailableError",
    "InvalidParameterError",
    "InvalidCursorError",
    "InvalidIdempotencyKeyError",
    "ContextTooDeepError",
    "ContextTooLargeError",
    "BodyTooLargeError",
    "IdempotencyKeyReusedError",
    "TooManyStreamsError",
    "StoreUnavailableError",
    "ServerBusyError",
    "RequestTimeoutError",
    "HostNotAllowedError",
    "error_from_response",
]


class HensuError(Exception):
    """An error answer of the server (or an unreadable one)."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        code: str | None = None,
        body: Mapping[str, Any] | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.body: Mapping[str, Any] = body or {}
        self.retry_after = retry_after

    @property
    def diagnostics(self) -> Any:
        """A refused push's diagnostics (the ``hensuc check --format json`` report), if any."""
        return self.body.get("diagnostics")

    def __str__(self) -> str:
        code = f" {self.code}" if self.code else ""
        return f"{self.status}{code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, message={self.message!r})"


class ClientError(HensuError):
    """A 4xx answer: the request was refused; retrying it unchanged will not help."""


class ServerError(HensuError):
    """A 5xx answer."""


class BadRequestError(ClientError):
    """400."""


class UnauthorizedError(ClientError):
    """401: no token, or one that does not verify."""


class ForbiddenError(ClientError):
    """403: a valid token without ``sub`` or with a bad ``tenant_id``."""


class NotFoundError(ClientError):
    """404: unknown (or another tenant's) workflow or execution."""


class MethodNotAllowedError(ClientError):
    """405."""


class ConflictError(ClientError):
    """409: the execution ended or runs elsewhere."""


class PayloadTooLargeError(ClientError):
    """413."""


class UnsupportedMediaTypeError(ClientError):
    """415."""


class UnprocessableError(ClientError):
    """422."""


class TooManyRequestsError(ClientError):
    """429."""


class ServiceUnavailableError(ServerError):
    """503: shutting down, or the store is unreachable (see ``retry_after``)."""


class InvalidParameterError(BadRequestError):
    """400 ``invalid_parameter``: a bad list filter or limit."""


class InvalidCursorError(BadRequestError):
    """400 ``invalid_cursor``."""


class InvalidIdempotencyKeyError(BadRequestError):
    """400 ``invalid_idempotency_key``: not 1-255 visible ASCII characters."""


class ContextTooDeepError(BadRequestError):
    """400 ``context_too_deep``."""


class ContextTooLargeError(PayloadTooLargeError):
    """413 ``context_too_large``."""


class BodyTooLargeError(PayloadTooLargeError):
    """413 ``body_too_large``."""


class IdempotencyKeyReusedError(UnprocessableError):
    """422 ``idempotency_key_reused``: the key started a different request."""


class TooManyStreamsError(TooManyRequestsError):
    """429 ``too_many_streams``."""


class StoreUnavailableError(ServiceUnavailableError):
    """503 ``store_unavailable``: retry after ``retry_after`` seconds (same Idempotency-Key)."""


class ServerBusyError(ServiceUnavailableError):
    """``server_busy``."""


class RequestTimeoutError(HensuError):
    """``request_timeout``."""


class HostNotAllowedError(ClientError):
    """``host_not_allowed``."""


BY_CODE: dict[str, type[HensuError]] = {
    "invalid_parameter": InvalidParameterError,
    "invalid_cursor": InvalidCursorError,
    "invalid_idempotency_key": InvalidIdempotencyKeyError,
    "context_too_deep": ContextTooDeepError,
    "context_too_large": ContextTooLargeError,
    "body_too_large": BodyTooLargeError,
    "idempotency_key_reused": IdempotencyKeyReusedError,
    "too_many_streams": TooManyStreamsError,
    "store_unavailable": StoreUnavailableError,
    "server_busy": ServerBusyError,
    "request_timeout": RequestTimeoutError,
    "host_not_allowed": HostNotAllowedError,
}

BY_STATUS: dict[int, type[HensuError]] = {
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
}


def error_class(status: int, code: str | None) -> type[HensuError]:
    """The most specific class for a status and an optional ``code``."""
    if code is not None and code in BY_CODE:
        return BY_CODE[code]
    if status in BY_STATUS:
        return BY_STATUS[status]
    return ClientError if 400 <= status < 500 else ServerError if status >= 500 else HensuError


def error_from_response(status: int, content: bytes, headers: Mapping[str, str]) -> HensuError:
    """Builds the typed error of a non-2xx answer (its body need not be JSON)."""
    body: dict[str, Any] = {}
    try:
        parsed = json.loads(content) if content else None
        if isinstance(parsed, dict):
            body = parsed
    except ValueError:
        pass
    message = body.get("error")
    if not isinstance(message, str):
        message = content.decode("utf-8", "replace")[:500] or f"HTTP {status}"
    code = body.get("code") if isinstance(body.get("code"), str) else None
    retry_after: float | None = None
    raw = headers.get("retry-after")
    if raw is not None:
        try:
            retry_after = float(raw)
        except ValueError:
            retry_after = None
    cls = error_class(status, code)
    return cls(message, status=status, code=code, body=body, retry_after=retry_after)
