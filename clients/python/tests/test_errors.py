"""The error mapping for answers the live tests cannot provoke (a store outage, a proxy's page)."""

from __future__ import annotations

import hensu_client as h
from hensu_client.errors import error_from_response


def test_store_unavailable_carries_retry_after() -> None:
    body = b'{"error":"store unavailable","status":503,"code":"store_unavailable"}'
    error = error_from_response(503, body, {"retry-after": "1"})
    assert isinstance(error, h.StoreUnavailableError) and isinstance(error, h.ServerError)
    assert (error.status, error.code, error.retry_after, error.message) == (503, "store_unavailable", 1.0, "store unavailable")


def test_unknown_code_falls_back_to_the_status_then_the_family() -> None:
    assert type(error_from_response(404, b'{"error":"x","status":404,"code":"new_code"}', {})) is h.NotFoundError
    assert type(error_from_response(418, b'{"error":"teapot","status":418}', {})) is h.ClientError
    assert type(error_from_response(502, b"<html>bad gateway</html>", {})) is h.ServerError


def test_a_body_that_is_not_json_becomes_the_message() -> None:
    error = error_from_response(502, b"bad gateway", {})
    assert error.message == "bad gateway" and error.code is None and error.body == {}
    assert str(error) == "502: bad gateway"
