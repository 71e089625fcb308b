"""What the sync and async clients share: request bodies, answers, events, pages."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, Generic, TypedDict, TypeVar
from urllib.parse import quote

from ._generated.models.batch_start import BatchStart
from ._generated.models.resume_execution import ResumeExecution
from ._generated.models.start_execution import StartExecution
from ._generated.types import UNSET, Response, Unset
from .errors import HensuError, error_from_response

T = TypeVar("T")

#: Event types after which an execution's stream closes for good.
TERMINAL_EVENTS = frozenset({"execution.completed", "execution.error", "execution.cancelled"})
#: The event after which an execution's stream closes until the run is resumed.
PAUSED_EVENT = "execution.paused"
#: Seconds an event stream may stay silent before it counts as dropped and is reopened after the
#: last event id: four of the server's 15-second keep-alive comments.
STREAM_SILENCE_TIMEOUT = 60.0


@dataclass(frozen=True)
class Event:
    """One server-sent event: ``id`` (for ``Last-Event-ID``), ``type`` and the JSON ``data``.

    On one execution's stream ``id`` is the run-log step; on the tenant stream it is
    ``<executionId>:<step>``.
    """

    id: str
    type: str
    data: dict[str, Any]

    @property
    def execution_id(self) -> str | None:
        value = self.data.get("executionId")
        return value if isinstance(value, str) else None


@dataclass
class Page(Generic[T]):
    """One page of a list; ``next_cursor`` is None on the last page."""

    items: list[T]
    next_cursor: str | None = None


def parse_event(event_id: str, event_type: str, data: str) -> Event | None:
    """An Event from one SSE message; None for messages without data (keep-alives)."""
    if not data:
        return None
    payload = json.loads(data)
    if not isinstance(payload, dict):
        return None
    # `type` in the data is what upstream clients dispatch on; `event:` repeats it.
    kind = payload.get("type") if isinstance(payload.get("type"), str) else event_type
    return Event(id=event_id, type=str(kind), data=payload)


def unwrap(response: Response[Any]) -> Any:
    """The parsed body of a 2xx answer; raises the typed error of any other."""
    status = int(response.status_code)
    if 200 <= status < 300:
        return response.parsed
    raise error_from_response(status, response.content, response.headers)


def check_http(status: int, content: bytes, headers: Mapping[str, str]) -> None:
    if not 200 <= status < 300:
        raise error_from_response(status, content, headers)


def start_body(workflow_id: str, context: Mapping[str, Any] | None) -> StartExecution:
    body: dict[str, Any] = {"workflowId": workflow_id}
    if context is not None:
        body["context"] = dict(context)
    return StartExecution.from_dict(body)


def batch_body(workflow_id: str, contexts: Sequence[Mapping[str, Any]]) -> BatchStart:
    return BatchStart.from_dict({"workflowId": workflow_id, "contexts": [dict(c) for c in contexts]})


def resume_body(
    *,
    decision: str | None = None,
    correlation_id: str | None = None,
    reason: str | None = None,
    target_step: str | None = None,
    context_edits: Mapping[str, Any] | None = None,
    arguments: Mapping[str, Any] | None = None,
) -> ResumeExecution:
    # Only the fields given: the server refuses unknown fields, and treats a missing
    # `decision` as a plain resume.
    body: dict[str, Any] = {}
    for key, value in (
        ("decision", decision),
        ("correlationId", correlation_id),
        ("reason", reason),
        ("targetStep", target_step),
        ("contextEdits", dict(context_edits) if context_edits is not None else None),
        ("arguments", dict(arguments) if arguments is not None else None),
    ):
        if value is not None:
            body[key] = value
    return ResumeExecution.from_dict(body)


class ListParams(TypedDict):
    """The list's query parameters, typed per key as the generated call takes them."""

    status: str | Unset
    workflow: str | Unset
    since: str | Unset
    until: str | Unset
    cursor: str | Unset
    limit: int | Unset


def list_params(
    *,
    status: str | Sequence[str] | None,
    workflow: str | None,
    since: datetime | str | None,
    until: datetime | str | None,
    cursor: str | None,
    limit: int | None,
) -> ListParams:
    def time(value: datetime | str | None) -> str | Unset:
        if value is None:
            return UNSET
        if isinstance(value, datetime):
            if value.tzinfo is None:
                value = value.replace(tzinfo=timezone.utc)
            return value.isoformat()
        return value

    statuses: str | Unset = UNSET
    if isinstance(status, str):
        statuses = status
    elif status is not None:
        statuses = ",".join(status)
    return {
        "status": statuses,
        "workflow": workflow if workflow is not None else UNSET,
        "since": time(since),
        "until": time(until),
        "cursor": cursor if cursor is not None else UNSET,
        "limit": limit if limit is not None else UNSET,
    }


def events_path(execution_id: str | None) -> str:
    if execution_id is None:
        return "/api/v1/executions/events"
    return f"/api/v1/executions/{quote(execution_id, safe='')}/events"


class StreamEnded(HensuError):
    """An event stream kept closing before its execution ended (``max_reconnects`` reached)."""
