"""The sync client against a real hensuc serve (conftest.py)."""

from __future__ import annotations

import socket
import threading
import time
import uuid

import pytest

import hensu_client as h
from hensu_client import Event, HensuClient

from .conftest import Server

# Events that are not run-log rows: token events (`<row>.<token>` ids) and review
# announcements (no id of their own; an SSE client repeats the last one it saw).
NOT_ROWS = ("execution.token", "execution.review_requested")


def wait_status(client: HensuClient, execution_id: str, *wanted: str, timeout: float = 20) -> h.ExecutionStatus:
    deadline = time.monotonic() + timeout
    while True:
        status = client.status(execution_id)
        if status.status.value in wanted:
            return status
        if time.monotonic() > deadline:
            raise AssertionError(f"{execution_id} is {status.status.value}, not {wanted}")
        time.sleep(0.05)


def test_push_list_pull_delete(server: Server) -> None:
    with server.client(f"t-{uuid.uuid4().hex[:8]}") as client:
        saved = client.push_workflow(server.definitions["client_quick"])
        assert (saved.id, saved.version, saved.created) == ("client_quick", "1.0.0", True)
        assert not client.push_workflow(server.definitions["client_quick"]).created
        assert [w.id for w in client.list_workflows()] == ["client_quick"]
        assert client.get_workflow("client_quick")["id"] == "client_quick"
        client.delete_workflow("client_quick")
        assert client.list_workflows() == []
        with pytest.raises(h.NotFoundError):
            client.get_workflow("client_quick")


def test_refused_push_carries_diagnostics(client: HensuClient) -> None:
    broken = dict(client.get_workflow("client_quick"), startNode="nowhere")
    with pytest.raises(h.BadRequestError) as caught:
        client.push_workflow(broken)
    assert caught.value.status == 400
    assert caught.value.diagnostics["valid"] is False


def test_idempotent_start(client: HensuClient) -> None:
    key = f"start-{uuid.uuid4()}"
    first = client.start("client_quick", {"topic": "idempotency"}, idempotency_key=key)
    again = client.start("client_quick", {"topic": "idempotency"}, idempotency_key=key)
    assert again.execution_id == first.execution_id
    assert [e.execution_id for e in client.iter_executions()] == [first.execution_id]
    with pytest.raises(h.IdempotencyKeyReusedError) as caught:
        client.start("client_quick", {"topic": "something else"}, idempotency_key=key)
    assert (caught.value.status, caught.value.code) == (422, "idempotency_key_reused")
    assert first.execution_id in caught.value.message


def test_batch_start_queues_one_run_per_context_in_order(client: HensuClient) -> None:
    topics = ["alpha", "beta", "gamma"]
    key = f"batch-{uuid.uuid4()}"
    queued = client.start_batch("client_quick", [{"topic": t} for t in topics], idempotency_key=key)
    assert len({e.execution_id for e in queued}) == 3
    again = client.start_batch("client_quick", [{"topic": t} for t in topics], idempotency_key=key)
    assert [e.execution_id for e in again] == [e.execution_id for e in queued]
    for started, topic in zip(queued, topics, strict=True):
        wait_status(client, started.execution_id, "completed")
        assert client.result(started.execution_id).output.to_dict()["topic"] == topic
    with pytest.raises(h.InvalidParameterError):
        client.start_batch("client_quick", [])


def test_bad_idempotency_key_is_typed(client: HensuClient) -> None:
    with pytest.raises(h.InvalidIdempotencyKeyError) as caught:
        client.start("client_quick", {"topic": "x"}, idempotency_key="has spaces")
    error = caught.value
    assert isinstance(error, h.BadRequestError) and isinstance(error, h.ClientError)
    assert (error.status, error.code) == (400, "invalid_idempotency_key")
    assert list(client.iter_executions()) == []


def test_unknown_execution_is_not_found(client: HensuClient) -> None:
    with pytest.raises(h.NotFoundError) as caught:
        client.status("no-such-execution")
    assert caught.value.status == 404 and caught.value.code is None and caught.value.message


def test_unknown_workflow_start_is_not_found(client: HensuClient) -> None:
    with pytest.raises(h.NotFoundError):
        client.start("no_such_workflow")


def test_missing_token_is_unauthorized(server: Server) -> None:
    with HensuClient(server.url) as anonymous:
        with pytest.raises(h.UnauthorizedError) as caught:
            anonymous.list_workflows()
    assert caught.value.status == 401


def test_bad_tenant_is_forbidden(server: Server) -> None:
    with server.client("-bad tenant") as client:
        with pytest.raises(h.ForbiddenError):
            client.list_workflows()


def follow_to_pause(client: HensuClient, execution_id: str) -> list[Event]:
    events = list(client.events(execution_id))
    assert events[0].type == "execution.started"
    assert events[-1].type == h.PAUSED_EVENT
    return events


def test_review_approve(client: HensuClient) -> None:
    started = client.start("client_review", {"topic": "approval"})
    events = follow_to_pause(client, started.execution_id)
    pause = events[-1]
    assert pause.data["reason"] == "review" and pause.data["nodeId"] == "write"
    correlation = pause.data["correlationId"]
    assert client.status(started.execution_id).correlation_id == correlation
    assert [p.execution_id for p in client.paused()] == [started.execution_id]

    assert client.approve(started.execution_id, correlation).status.value == "resumed"
    rest = list(client.events(started.execution_id, last_event_id=pause.id))
    assert int(rest[0].id) > int(pause.id)
    end = rest[-1]
    assert end.type == "execution.completed"
    assert (end.data["status"], end.data["success"], end.data["finalNodeId"]) == ("completed", True, "done")
    result = client.result(started.execution_id)
    assert result.status.value == "completed" and result.output["topic"] == "approval"


def test_review_reject(client: HensuClient) -> None:
    started = client.start("client_review", {"topic": "rejection"})
    pause = follow_to_pause(client, started.execution_id)[-1]
    client.reject(started.execution_id, pause.data["correlationId"], reason="not today")
    end = list(client.events(started.execution_id, last_event_id=pause.id))[-1]
    assert end.type == "execution.completed" and end.data["success"] is False


def test_review_decision_errors_are_typed(client: HensuClient) -> None:
    started = client.start("client_review", {"topic": "mismatch"})
    follow_to_pause(client, started.execution_id)
    with pytest.raises(h.BadRequestError) as caught:
        client.approve(started.execution_id, "review-wrong")
    assert "Correlation id mismatch" in caught.value.message
    with pytest.raises(h.BadRequestError) as caught:
        client.resume(started.execution_id)
    assert "awaiting a review decision" in caught.value.message
    correlation_id = client.status(started.execution_id).correlation_id or ""
    with pytest.raises(h.BadRequestError):
        client.backtrack(started.execution_id, correlation_id, "no-node")
    # Edited arguments answer a gated tool call's review, not a node's.
    with pytest.raises(h.BadRequestError) as caught:
        client.approve(started.execution_id, correlation_id, arguments={"path": "/tmp/x"})
    assert "this review is a node's" in caught.value.message
    assert client.status(started.execution_id).status.value == "paused"


def test_follow_through_pause_reconnects_after_the_pause(client: HensuClient) -> None:
    started = client.start("client_review", {"topic": "through"})
    seen: list[Event] = []
    follower = threading.Thread(
        target=lambda: seen.extend(client.events(started.execution_id, through_pauses=True)), daemon=True
    )
    follower.start()
    paused = wait_status(client, started.execution_id, "paused")
    time.sleep(0.3)  # let the follower reach the pause and reopen its stream
    client.approve(started.execution_id, paused.correlation_id or "")
    follower.join(timeout=20)
    assert not follower.is_alive()
    ids = [int(e.id) for e in seen if e.type not in NOT_ROWS]
    assert ids == sorted(set(ids)), "no event lost or repeated across the reconnect"
    types = [e.type for e in seen]
    assert types[0] == "execution.started" and h.PAUSED_EVENT in types
    assert types[-1] == "execution.completed"


class DroppingProxy:
    """A loopback TCP proxy whose first connection is cut right after the first SSE message,
    as a load balancer or a flaky network would, or with ``stall`` goes silent there and stays
    open, as a dead peer behind a NAT does; later connections pass through."""

    def __init__(self, upstream: str, *, stall: bool = False) -> None:
        host, port = upstream.removeprefix("http://").split(":")
        self.upstream = (host, int(port))
        self.stall = stall
        self.closed = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.requests: list[bytes] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                downstream, _ = self.listener.accept()
            except OSError:
                return
            # The slot exists before the thread that fills it starts (a thread started first can
            # reach `self.requests[index]` before the append).
            index = len(self.requests)
            self.requests.append(b"")
            threading.Thread(target=self._serve, args=(downstream, index), daemon=True).start()

    def _serve(self, downstream: socket.socket, index: int) -> None:
        cut = index == 0
        # Both sockets close however this ends, so a proxy failure reaches the client as a
        # dropped connection, never as a silent one.
        with downstream, socket.create_connection(self.upstream) as upstream:
            request = downstream.recv(65536)
            self.requests[index] = request
            upstream.sendall(request)
            received = b""
            while chunk := upstream.recv(65536):
                if not cut:
                    downstream.sendall(chunk)
                    continue
                received += chunk
                first_id = received.find(b"id:")
                end = received.find(b"\n\n", first_id)
                if first_id >= 0 and end >= 0:
                    downstream.sendall(received[: end + 2])
                    if self.stall:
                        self.closed.wait()
                    return

    def close(self) -> None:
        self.closed.set()
        self.listener.close()


@pytest.mark.parametrize("stall", [False, True], ids=["cut", "silent"])
def test_dropped_stream_reconnects_with_last_event_id(server: Server, client: HensuClient, stall: bool) -> None:
    started = client.start("client_quick", {"topic": "drop"})
    wait_status(client, started.execution_id, "completed")
    direct = [(e.id, e.type) for e in client.events(started.execution_id)]
    assert direct[-1][1] == "execution.completed"

    proxy = DroppingProxy(server.url, stall=stall)
    token = client.api.token  # type: ignore[union-attr]
    try:
        with HensuClient(proxy.url, token) as via_proxy:
            events = via_proxy.events(started.execution_id, backoff=0.05, silence_timeout=1.0)
            through = [(e.id, e.type) for e in events]
    finally:
        proxy.close()
    assert through == direct
    assert len(proxy.requests) == 2
    assert b"last-event-id: 0\r\n" in proxy.requests[1].lower()


def test_paging_follows_the_cursor(client: HensuClient) -> None:
    ids = [client.start("client_quick", {"topic": f"page {i}"}).execution_id for i in range(7)]
    first = client.list_executions(limit=3)
    assert len(first.items) == 3 and first.next_cursor
    second = client.list_executions(limit=3, cursor=first.next_cursor)
    assert not {e.execution_id for e in first.items} & {e.execution_id for e in second.items}

    listed = list(client.iter_executions(page_size=3))
    assert sorted(e.execution_id for e in listed) == sorted(ids)
    assert len({e.execution_id for e in listed}) == 7
    started_at = [e.started_at for e in listed]
    assert started_at == sorted(started_at, reverse=True), "newest first"
    assert [e.execution_id for e in client.iter_executions(workflow="client_review")] == []


def test_paging_errors_are_typed(client: HensuClient) -> None:
    with pytest.raises(h.InvalidCursorError) as caught:
        client.list_executions(cursor="not-a-cursor")
    assert caught.value.code == "invalid_cursor"
    with pytest.raises(h.InvalidParameterError):
        client.list_executions(limit=0)
    with pytest.raises(h.InvalidParameterError):
        client.list_executions(status="sleeping")


def test_pause_then_cancel_a_paused_execution(client: HensuClient) -> None:
    started = client.start("client_review", {"topic": "cancel"})
    follow_to_pause(client, started.execution_id)
    # Paused for its review already: a pause changes nothing (200, `paused`).
    assert client.pause(started.execution_id).status.value == "paused"
    assert client.cancel(started.execution_id).status.value == "cancelled"
    assert client.status(started.execution_id).status.value == "cancelled"
    with pytest.raises(h.ConflictError):
        client.cancel(started.execution_id)
    with pytest.raises(h.ConflictError):
        client.pause(started.execution_id)


def test_tenant_stream_shows_a_new_execution(client: HensuClient) -> None:
    seen: list[Event] = []
    ready = threading.Event()
    target: list[str] = []

    def follow() -> None:
        ready.set()
        # A fresh tenant: the first completion is the execution started below (its events
        # may arrive before start() returns its id).
        for event in client.tenant_events():
            seen.append(event)
            if event.type == "execution.completed":
                return

    follower = threading.Thread(target=follow, daemon=True)
    follower.start()
    ready.wait()
    time.sleep(0.5)  # the tenant stream shows executions from the moment it opens
    target.append(client.start("client_quick", {"topic": "tenant"}).execution_id)
    follower.join(timeout=20)
    assert not follower.is_alive()
    mine = [e for e in seen if e.execution_id == target[0]]
    assert [e.type for e in mine][0] == "execution.started" and mine[-1].type == "execution.completed"
    # The tenant stream's ids are the server's global event sequence: increasing integers.
    ids = [int(e.id) for e in mine if e.type not in NOT_ROWS]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
