"""The synchronous client."""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping, Sequence
from datetime import datetime
from typing import Any, cast

import httpx
from httpx_sse import SSEError, connect_sse

from . import _common as c
from ._common import Event, Page
from ._generated.api.executions import cancel as _cancel
from ._generated.api.executions import list_executions as _list
from ._generated.api.executions import pause as _pause
from ._generated.api.executions import paused as _paused
from ._generated.api.executions import result as _result
from ._generated.api.executions import resume as _resume
from ._generated.api.executions import start as _start
from ._generated.api.executions import start_batch as _start_batch
from ._generated.api.executions import execution_status as _status
from ._generated.api.operations import health as _health
from ._generated.api.workflows import delete as _delete
from ._generated.api.workflows import list_workflows as _workflows
from ._generated.api.workflows import pull as _pull
from ._generated.api.workflows import push as _push
from ._generated.client import AuthenticatedClient, Client
from ._generated.models.batch_started import BatchStarted
from ._generated.models.execution_ack import ExecutionAck
from ._generated.models.execution_result import ExecutionResult
from ._generated.models.execution_started import ExecutionStarted
from ._generated.models.execution_status import ExecutionStatus
from ._generated.models.health_status import HealthStatus
from ._generated.models.paused_execution import PausedExecution
from ._generated.models.push_body import PushBody
from ._generated.models.resume_execution import ResumeExecution
from ._generated.models.workflow_entry import WorkflowEntry
from ._generated.models.workflow_saved import WorkflowSaved
from ._generated.types import UNSET


class HensuClient:
    """A hensu server's API. ``token``: the tenant's JWT (omit it for a dev-mode server).

    ``api`` is the generated low-level client, for calls this layer does not wrap.
    """

    def __init__(self, base_url: str, token: str | None = None, *, timeout: float = 30.0) -> None:
        self.api: AuthenticatedClient | Client
        if token is not None:
            self.api = AuthenticatedClient(base_url=base_url, token=token, timeout=httpx.Timeout(timeout))
        else:
            self.api = Client(base_url=base_url, timeout=httpx.Timeout(timeout))
        self._timeout = timeout

    def close(self) -> None:
        self.api.get_httpx_client().close()

    def __enter__(self) -> HensuClient:
        return self

    def __exit__(self, *args: object) -> None:
        self.close()

    # Operations and workflows

    def health(self) -> HealthStatus:
        return cast(HealthStatus, c.unwrap(_health.sync_detailed(client=self.api)))

    def push_workflow(self, definition: Mapping[str, Any]) -> WorkflowSaved:
        """Pushes a compiled workflow (the JSON ``hensuc build`` writes)."""
        body = PushBody.from_dict(definition)
        return cast(WorkflowSaved, c.unwrap(_push.sync_detailed(client=self.api, body=body)))

    def list_workflows(self) -> list[WorkflowEntry]:
        return cast(list[WorkflowEntry], c.unwrap(_workflows.sync_detailed(client=self.api)))

    def get_workflow(self, workflow_id: str) -> dict[str, Any]:
        pulled = c.unwrap(_pull.sync_detailed(workflow_id, client=self.api))
        return cast(dict[str, Any], pulled.to_dict())

    def delete_workflow(self, workflow_id: str) -> None:
        c.unwrap(_delete.sync_detailed(workflow_id, client=self.api))

    # Executions

    def start(
        self,
        workflow_id: str,
        context: Mapping[str, Any] | None = None,
        *,
        idempotency_key: str | None = None,
    ) -> ExecutionStarted:
        """Starts an execution. Retrying with the same ``idempotency_key`` (and the same
        request) within 24 hours gives the same execution and starts nothing."""
        response = _start.sync_detailed(
            client=self.api,
            body=c.start_body(workflow_id, context),
            idempotency_key=idempotency_key if idempotency_key is not None else UNSET,
        )
        return cast(ExecutionStarted, c.unwrap(response))

    def start_batch(
        self,
        workflow_id: str,
        contexts: Sequence[Mapping[str, Any]],
        *,
        idempotency_key: str | None = None,
    ) -> list[ExecutionStarted]:
        """Queues one execution per context (one request; the server's workers run them) and
        returns them in order. With ``idempotency_key`` a retried batch queues nothing twice."""
        response = _start_batch.sync_detailed(
            client=self.api,
            body=c.batch_body(workflow_id, contexts),
            idempotency_key=idempotency_key if idempotency_key is not None else UNSET,
        )
        return cast(BatchStarted, c.unwrap(response)).executions

    def status(self, execution_id: str) -> ExecutionStatus:
        return cast(ExecutionStatus, c.unwrap(_status.sync_detailed(execution_id, client=self.api)))

    def result(self, execution_id: str) -> ExecutionResult:
        return cast(ExecutionResult, c.unwrap(_result.sync_detailed(execution_id, client=self.api)))

    def paused(self) -> list[PausedExecution]:
        return cast(list[PausedExecution], c.unwrap(_paused.sync_detailed(client=self.api)))

    def cancel(self, execution_id: str) -> ExecutionAck:
        return cast(ExecutionAck, c.unwrap(_cancel.sync_detailed(execution_id, client=self.api)))

    def pause(self, execution_id: str) -> ExecutionAck:
        """Asks a running execution to pause at its next node boundary (`pausing`), whichever
        server runs it; `paused` when it was paused already."""
        return cast(ExecutionAck, c.unwrap(_pause.sync_detailed(execution_id, client=self.api)))

    def resume(self, execution_id: str, *, context_edits: Mapping[str, Any] | None = None) -> ExecutionAck:
        """A plain resume (not for a review pause: answer those with approve/reject/backtrack)."""
        return self._resume(execution_id, c.resume_body(context_edits=context_edits))

    def approve(
        self,
        execution_id: str,
        correlation_id: str,
        *,
        context_edits: Mapping[str, Any] | None = None,
        arguments: Mapping[str, Any] | None = None,
    ) -> ExecutionAck:
        """Approves a pending review; for a gated tool call (a review of kind ``tool``),
        ``arguments`` replaces the call's arguments (docs/server.md, *Pending reviews*)."""
        body = c.resume_body(
            decision="approve", correlation_id=correlation_id, context_edits=context_edits, arguments=arguments
        )
        return self._resume(execution_id, body)

    def reject(self, execution_id: str, correlation_id: str, *, reason: str | None = None) -> ExecutionAck:
        body = c.resume_body(decision="reject", correlation_id=correlation_id, reason=reason)
        return self._resume(execution_id, body)

    def backtrack(
        self,
        execution_id: str,
        correlation_id: str,
        target_step: str,
        *,
        reason: str | None = None,
        context_edits: Mapping[str, Any] | None = None,
    ) -> ExecutionAck:
        body = c.resume_body(
            decision="backtrack",
            correlation_id=correlation_id,
            target_step=target_step,
            reason=reason,
            context_edits=context_edits,
        )
        return self._resume(execution_id, body)

    def _resume(self, execution_id: str, body: ResumeExecution) -> ExecutionAck:
        return cast(ExecutionAck, c.unwrap(_resume.sync_detailed(execution_id, client=self.api, body=body)))

    # Paging

    def list_executions(
        self,
        *,
        status: str | Sequence[str] | None = None,
        workflow: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        cursor: str | None = None,
        limit: int | None = None,
    ) -> Page[ExecutionStatus]:
        """One page, newest first; pass its ``next_cursor`` (with the same filters) for the next."""
        params = c.list_params(status=status, workflow=workflow, since=since, until=until, cursor=cursor, limit=limit)
        response = _list.sync_detailed(client=self.api, **params)
        items = cast(list[ExecutionStatus], c.unwrap(response))
        return Page(items=items, next_cursor=response.headers.get("x-next-cursor"))

    def iter_executions(
        self,
        *,
        status: str | Sequence[str] | None = None,
        workflow: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
        page_size: int | None = None,
    ) -> Iterator[ExecutionStatus]:
        """Every matching execution, newest first, one page request at a time."""
        cursor: str | None = None
        while True:
            page = self.list_executions(
                status=status, workflow=workflow, since=since, until=until, cursor=cursor, limit=page_size
            )
            yield from page.items
            if page.next_cursor is None:
                return
            cursor = page.next_cursor

    # Events

    def events(
        self,
        execution_id: str,
        *,
        last_event_id: str | None = None,
        through_pauses: bool = False,
        max_reconnects: int = 5,
        backoff: float = 0.5,
        silence_timeout: float = c.STREAM_SILENCE_TIMEOUT,
    ) -> Iterator[Event]:
        """One execution's events until it ends (or pauses, unless ``through_pauses``).

        A dropped connection is reopened with ``Last-Event-ID`` of the last event seen, so no
        event is lost or repeated; ``through_pauses`` reopens after a pause too, and the
        server holds that stream until the run is resumed. A stream silent for
        ``silence_timeout`` seconds (no event, no keep-alive comment) counts as dropped.
        """
        return self._follow(
            c.events_path(execution_id), last_event_id, True, through_pauses, max_reconnects, backoff, silence_timeout
        )

    def tenant_events(
        self,
        *,
        last_event_id: str | None = None,
        max_reconnects: int = 5,
        backoff: float = 0.5,
        silence_timeout: float = c.STREAM_SILENCE_TIMEOUT,
    ) -> Iterator[Event]:
        """Every execution's events of the tenant, from now on; never ends by itself."""
        return self._follow(c.events_path(None), last_event_id, False, True, max_reconnects, backoff, silence_timeout)

    def _follow(
        self,
        path: str,
        last_event_id: str | None,
        one_execution: bool,
        through_pauses: bool,
        max_reconnects: int,
        backoff: float,
        silence_timeout: float,
    ) -> Iterator[Event]:
        http = self.api.get_httpx_client()
        last = last_event_id
        failures = 0
        while True:
            headers = {"Last-Event-ID": last} if last is not None else {}
            paused = False
            try:
                # The server sends a keep-alive comment every 15 s, even on a paused run's
                # stream: a longer silence is a dead connection, reopened below.
                timeout = httpx.Timeout(self._timeout, read=silence_timeout)
                with connect_sse(http, "GET", path, headers=headers, timeout=timeout) as source:
                    response = source.response
                    if response.status_code >= 300:
                        response.read()
                        c.check_http(response.status_code, response.content, response.headers)
                    for message in source.iter_sse():
                        event = c.parse_event(message.id, message.event, message.data)
                        if event is None:
                            continue
                        last = event.id or last
                        failures = 0
                        yield event
                        if one_execution and event.type in c.TERMINAL_EVENTS:
                            return
                        paused = event.type == c.PAUSED_EVENT
            except (httpx.TransportError, SSEError):
                pass
            if one_execution and paused:
                if not through_pauses:
                    return
                continue  # reopened right after the pause: waits for the resume
            # Closed (or dropped) before an end: the server restarting, a proxy, the network.
            failures += 1
            if failures > max_reconnects:
                raise c.StreamEnded(f"event stream {path} closed {failures} times without an end", status=0)
            time.sleep(backoff * failures)
