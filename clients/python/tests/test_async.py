"""The async client against the same server: the same layer, awaited."""

from __future__ import annotations

import asyncio
import uuid

import pytest

import hensu_client as h
from hensu_client import AsyncHensuClient, Event

from .conftest import Server

# Events that are not run-log rows: token events (`<row>.<token>` ids) and review
# announcements (no id of their own; an SSE client repeats the last one it saw).
NOT_ROWS = ("execution.token", "execution.review_requested")


async def tenant(server: Server) -> AsyncHensuClient:
    client = AsyncHensuClient(server.url, server.token(f"a-{uuid.uuid4().hex[:12]}"))
    for definition in server.definitions.values():
        await client.push_workflow(definition)
    return client


async def test_async_idempotent_start_and_errors(server: Server) -> None:
    async with await tenant(server) as client:
        key = str(uuid.uuid4())
        first, again = await asyncio.gather(
            client.start("client_quick", {"topic": "a"}, idempotency_key=key),
            client.start("client_quick", {"topic": "a"}, idempotency_key=key),
        )
        assert first.execution_id == again.execution_id
        with pytest.raises(h.IdempotencyKeyReusedError):
            await client.start("client_quick", {"topic": "b"}, idempotency_key=key)
        with pytest.raises(h.InvalidIdempotencyKeyError):
            await client.start("client_quick", {"topic": "a"}, idempotency_key="")
        with pytest.raises(h.NotFoundError):
            await client.result("missing")
        queued = await client.start_batch("client_quick", [{"topic": "x"}, {"topic": "y"}])
        assert [e.workflow_id for e in queued] == ["client_quick", "client_quick"]
        with pytest.raises(h.NotFoundError):
            await client.start_batch("missing", [{}])


async def test_async_review_through_pause(server: Server) -> None:
    async with await tenant(server) as client:
        started = await client.start("client_review", {"topic": "async"})
        seen: list[Event] = []

        async def follow() -> None:
            async for event in client.events(started.execution_id, through_pauses=True):
                seen.append(event)

        follower = asyncio.create_task(follow())
        for _ in range(400):
            if seen and seen[-1].type == h.PAUSED_EVENT:
                break
            await asyncio.sleep(0.05)
        pause = seen[-1]
        assert pause.type == h.PAUSED_EVENT
        await client.approve(started.execution_id, pause.data["correlationId"])
        await asyncio.wait_for(follower, 20)
        assert seen[-1].type == "execution.completed" and seen[-1].data["success"] is True
        ids = [int(e.id) for e in seen if e.type not in NOT_ROWS]
        assert ids == sorted(set(ids))
        assert (await client.result(started.execution_id)).status == h.ExecutionState.COMPLETED


async def test_async_paging(server: Server) -> None:
    async with await tenant(server) as client:
        ids = {(await client.start("client_quick", {"topic": str(i)})).execution_id for i in range(5)}
        page = await client.list_executions(limit=2)
        assert len(page.items) == 2 and page.next_cursor is not None
        listed = [e.execution_id async for e in client.iter_executions(page_size=2)]
        assert len(listed) == 5 and set(listed) == ids
        with pytest.raises(h.InvalidParameterError):
            await client.list_executions(limit=0)
