// The TypeScript client against a real hensuc serve (test/server.ts).
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { createServer, connect, type Server as NetServer, type Socket } from "node:net";
import { after, before, test } from "node:test";
import {
  BadRequestError,
  ClientError,
  ConflictError,
  ForbiddenError,
  HensuClient,
  IdempotencyKeyReusedError,
  InvalidCursorError,
  InvalidIdempotencyKeyError,
  InvalidParameterError,
  NotFoundError,
  PAUSED_EVENT,
  UnauthorizedError,
  type HensuEvent,
} from "../src/index.js";
import { startServer, type TestServer } from "./server.js";

let server: TestServer;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server.stop();
});

async function collect(events: AsyncIterable<HensuEvent>): Promise<HensuEvent[]> {
  const out: HensuEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

async function toPause(client: HensuClient, executionId: string): Promise<HensuEvent> {
  const events = await collect(client.events(executionId));
  assert.equal(events[0]?.type, "execution.started");
  const pause = events.at(-1)!;
  assert.equal(pause.type, PAUSED_EVENT);
  return pause;
}

async function waitStatus(client: HensuClient, executionId: string, wanted: string) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const status = await client.status(executionId);
    if (status.status === wanted) return status;
    if (Date.now() > deadline) throw new Error(`${executionId} is ${status.status}, not ${wanted}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test("push, list, pull and delete a workflow", async () => {
  const client = new HensuClient({ baseUrl: server.url, token: server.token(`ts-${randomUUID().slice(0, 8)}`) });
  const saved = await client.pushWorkflow(server.definitions.client_quick!);
  assert.deepEqual([saved.id, saved.version, saved.created], ["client_quick", "1.0.0", true]);
  assert.deepEqual((await client.listWorkflows()).map((w) => w.id), ["client_quick"]);
  assert.equal((await client.getWorkflow("client_quick")).id, "client_quick");
  await client.deleteWorkflow("client_quick");
  assert.deepEqual(await client.listWorkflows(), []);
  await assert.rejects(client.getWorkflow("client_quick"), NotFoundError);
});

test("the same Idempotency-Key twice gives the same execution", async () => {
  const client = await server.newTenant();
  const key = `start-${randomUUID()}`;
  const first = await client.start("client_quick", { topic: "idempotency" }, { idempotencyKey: key });
  const again = await client.start("client_quick", { topic: "idempotency" }, { idempotencyKey: key });
  assert.equal(again.executionId, first.executionId);
  const listed = [];
  for await (const e of client.iterExecutions()) listed.push(e.executionId);
  assert.deepEqual(listed, [first.executionId]);
  await assert.rejects(client.start("client_quick", { topic: "other" }, { idempotencyKey: key }), (error: unknown) => {
    assert.ok(error instanceof IdempotencyKeyReusedError);
    assert.equal(error.status, 422);
    assert.equal(error.code, "idempotency_key_reused");
    assert.match(error.message, new RegExp(first.executionId));
    return true;
  });
});

test("a batch start queues one execution per context, in order", async () => {
  const client = await server.newTenant();
  const topics = ["alpha", "beta", "gamma"];
  const key = `batch-${randomUUID()}`;
  const queued = await client.startBatch("client_quick", topics.map((topic) => ({ topic })), { idempotencyKey: key });
  assert.equal(new Set(queued.map((e) => e.executionId)).size, 3);
  const again = await client.startBatch("client_quick", topics.map((topic) => ({ topic })), { idempotencyKey: key });
  assert.deepEqual(again.map((e) => e.executionId), queued.map((e) => e.executionId));
  for (const [i, started] of queued.entries()) {
    await waitStatus(client, started.executionId, "completed");
    assert.equal((await client.result(started.executionId)).output["topic"], topics[i]);
  }
  await assert.rejects(client.startBatch("client_quick", []), InvalidParameterError);
});

test("a bad Idempotency-Key is a typed 400", async () => {
  const client = await server.newTenant();
  await assert.rejects(client.start("client_quick", { topic: "x" }, { idempotencyKey: "has spaces" }), (error: unknown) => {
    assert.ok(error instanceof InvalidIdempotencyKeyError && error instanceof BadRequestError && error instanceof ClientError);
    assert.equal(error.status, 400);
    assert.equal(error.code, "invalid_idempotency_key");
    return true;
  });
});

test("unknown execution, no token and a bad tenant are typed", async () => {
  const client = await server.newTenant();
  await assert.rejects(client.status("no-such-execution"), (error: unknown) => {
    assert.ok(error instanceof NotFoundError);
    assert.equal(error.status, 404);
    assert.equal(error.code, undefined);
    return true;
  });
  await assert.rejects(new HensuClient({ baseUrl: server.url }).listWorkflows(), UnauthorizedError);
  await assert.rejects(new HensuClient({ baseUrl: server.url, token: server.token("-bad tenant") }).listWorkflows(), ForbiddenError);
});

test("a review is approved and the run followed to its end", async () => {
  const client = await server.newTenant();
  const { executionId } = await client.start("client_review", { topic: "approval" });
  const pause = await toPause(client, executionId);
  assert.equal(pause.data.type, "execution.paused");
  if (pause.data.type !== "execution.paused") return;
  assert.equal(pause.data.reason, "review");
  const correlationId = pause.data.correlationId!;
  assert.deepEqual((await client.paused()).map((p) => p.executionId), [executionId]);
  assert.equal((await client.approve(executionId, correlationId)).status, "resumed");
  const rest = await collect(client.events(executionId, { lastEventId: pause.id }));
  assert.ok(Number(rest[0]!.id) > Number(pause.id));
  const end = rest.at(-1)!;
  assert.equal(end.data.type, "execution.completed");
  if (end.data.type === "execution.completed") assert.equal(end.data.success, true);
  const result = await client.result(executionId);
  assert.equal(result.status, "completed");
  assert.equal(result.output.topic, "approval");
});

test("reject and the decision errors", async () => {
  const client = await server.newTenant();
  const { executionId } = await client.start("client_review", { topic: "reject" });
  const pause = await toPause(client, executionId);
  const correlationId = (await client.status(executionId)).correlationId!;
  await assert.rejects(client.approve(executionId, "review-wrong"), /Correlation id mismatch/);
  await assert.rejects(client.resume(executionId), /awaiting a review decision/);
  await assert.rejects(client.backtrack(executionId, correlationId, "no-node"), BadRequestError);
  // Edited arguments answer a gated tool call's review, not a node's.
  await assert.rejects(client.approve(executionId, correlationId, { arguments: { path: "/tmp/x" } }), /this review is a node's/);
  await client.reject(executionId, correlationId, { reason: "not today" });
  const end = (await collect(client.events(executionId, { lastEventId: pause.id }))).at(-1)!;
  assert.equal(end.data.type, "execution.completed");
  if (end.data.type === "execution.completed") assert.equal(end.data.success, false);
});

test("following through a pause reconnects after it", async () => {
  const client = await server.newTenant();
  const { executionId } = await client.start("client_review", { topic: "through" });
  const following = collect(client.events(executionId, { throughPauses: true }));
  const paused = await waitStatus(client, executionId, "paused");
  await new Promise((r) => setTimeout(r, 300)); // let the follower reopen after the pause
  await client.approve(executionId, paused.correlationId!);
  const seen = await following;
  // Token events (`<row>.<token>`) and review announcements (no id) aside, ids are the rows.
  const rows = seen.filter((e) => e.type !== "execution.token" && e.type !== "execution.review_requested");
  const ids = rows.map((e) => Number(e.id));
  assert.deepEqual(ids, [...new Set(ids)].sort((a, b) => a - b), "no event lost or repeated");
  assert.ok(seen.some((e) => e.type === PAUSED_EVENT));
  assert.equal(seen.at(-1)!.type, "execution.completed");
});

/** A loopback TCP proxy whose first connection is cut right after the first SSE message, as
 * a load balancer or a flaky network would, or with `stall` goes silent there and stays open,
 * as a dead peer behind a NAT does; later connections pass through. */
function droppingProxy(
  upstream: URL,
  stall = false,
): Promise<{ url: string; requests: string[]; server: NetServer; close: () => void }> {
  const requests: string[] = [];
  const stalled: Socket[] = [];
  const proxy = createServer((down: Socket) => {
    const cut = requests.length === 0;
    const index = requests.push("") - 1;
    const up = connect(Number(upstream.port), upstream.hostname);
    down.once("data", (request) => {
      requests[index] = request.toString();
      up.write(request);
    });
    let received = "";
    up.on("data", (chunk) => {
      if (!cut) return void down.write(chunk);
      received += chunk.toString();
      const id = received.indexOf("id:");
      const end = id >= 0 ? received.indexOf("\n\n", id) : -1;
      if (end >= 0) {
        up.destroy();
        if (!stall) return void down.end(received.slice(0, end + 2));
        down.write(received.slice(0, end + 2));
        stalled.push(down);
      }
    });
    up.on("end", () => {
      if (!stalled.includes(down)) down.end();
    });
    up.on("error", () => down.destroy());
    down.on("error", () => up.destroy());
  });
  return new Promise((done) =>
    proxy.listen(0, "127.0.0.1", () => {
      const address = proxy.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      const close = () => {
        for (const socket of stalled) socket.destroy();
        proxy.close();
      };
      done({ url: `http://127.0.0.1:${port}`, requests, server: proxy, close });
    }),
  );
}

for (const stall of [false, true]) {
  test(`a ${stall ? "silent" : "dropped"} stream is resumed with Last-Event-ID`, async () => {
    const tenant = `ts-${randomUUID().slice(0, 12)}`;
    const client = await server.newTenant(tenant);
    const { executionId } = await client.start("client_quick", { topic: "drop" });
    await waitStatus(client, executionId, "completed");
    const direct = (await collect(client.events(executionId))).map((e) => [e.id, e.type]);
    assert.equal(direct.at(-1)![1], "execution.completed");

    const proxy = await droppingProxy(new URL(server.url), stall);
    try {
      const viaProxy = new HensuClient({ baseUrl: proxy.url, token: server.token(tenant) });
      const options = { backoffMs: 50, silenceTimeoutMs: 1000 };
      const through = (await collect(viaProxy.events(executionId, options))).map((e) => [e.id, e.type]);
      assert.deepEqual(through, direct);
      assert.equal(proxy.requests.length, 2);
      assert.match(proxy.requests[1]!, /^last-event-id: 0\r$/im);
    } finally {
      proxy.close();
    }
  });
}

test("paging follows the cursor", async () => {
  const client = await server.newTenant();
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await client.start("client_quick", { topic: `page ${i}` })).executionId);
  const first = await client.listExecutions({ limit: 3 });
  assert.equal(first.items.length, 3);
  assert.ok(first.nextCursor);
  const second = await client.listExecutions({ limit: 3, cursor: first.nextCursor });
  const firstIds = new Set(first.items.map((e) => e.executionId));
  assert.ok(second.items.every((e) => !firstIds.has(e.executionId)));
  const listed = [];
  for await (const e of client.iterExecutions({ pageSize: 3 })) listed.push(e);
  assert.deepEqual(listed.map((e) => e.executionId).sort(), [...ids].sort());
  const startedAt = listed.map((e) => e.startedAt);
  assert.deepEqual(startedAt, [...startedAt].sort().reverse(), "newest first");
  await assert.rejects(client.listExecutions({ cursor: "not-a-cursor" }), InvalidCursorError);
  await assert.rejects(client.listExecutions({ limit: 0 }), InvalidParameterError);
});

test("the tenant stream shows a new execution", async () => {
  const client = await server.newTenant();
  const seen: HensuEvent[] = [];
  const following = (async () => {
    // A fresh tenant: the first completion is the execution started below.
    for await (const event of client.tenantEvents()) {
      // Token events (the stub agent's text as it is written) are not log events.
      if (event.type !== "execution.token") seen.push(event);
      if (event.type === "execution.completed") return;
    }
  })();
  await new Promise((r) => setTimeout(r, 500)); // it shows executions from the moment it opens
  const { executionId } = await client.start("client_quick", { topic: "tenant" });
  await following;
  assert.deepEqual(seen.map((e) => e.type), ["execution.started", "execution.step", "execution.completed"]);
  assert.ok(seen.every((e) => "executionId" in e.data && e.data.executionId === executionId));
  // The tenant stream's ids are the server's global event sequence: increasing integers.
  const ids = seen.map((e) => Number(e.id));
  assert.ok(
    ids.every((id, i) => Number.isInteger(id) && (i === 0 || id > (ids[i - 1] ?? id))),
    ids.join(","),
  );
});

test("pause and cancel a paused execution, then a 409", async () => {
  const client = await server.newTenant();
  const { executionId } = await client.start("client_review", { topic: "cancel" });
  await toPause(client, executionId);
  // Paused for its review already: a pause changes nothing (200, `paused`).
  assert.equal((await client.pause(executionId)).status, "paused");
  assert.equal((await client.cancel(executionId)).status, "cancelled");
  await assert.rejects(client.cancel(executionId), ConflictError);
  await assert.rejects(client.pause(executionId), ConflictError);
});

test("the worked example of docs/clients.md runs", async () => {
  const { execFile } = await import("node:child_process");
  const { writeFileSync, mkdtempSync } = await import("node:fs");
  const { join } = await import("node:path");
  const { tmpdir } = await import("node:os");
  const file = join(mkdtempSync(join(tmpdir(), "hensu-example-")), "client_review.json");
  writeFileSync(file, JSON.stringify(server.definitions.client_review));
  const script = new URL("../examples/review.js", import.meta.url).pathname;
  const env = { ...process.env, HENSU_SERVER: server.url, HENSU_TOKEN: server.token("example-ts") };
  const stdout = await new Promise<string>((done, fail) =>
    execFile(process.execPath, [script, file, "docs"], { env, timeout: 60_000 }, (error, out) => (error ? fail(error) : done(out))),
  );
  const lines = stdout.trim().split("\n");
  const paused = lines.indexOf("2 execution.paused");
  assert.ok(paused > 0, stdout);
  assert.deepEqual(lines.slice(paused + 1, paused + 3), ["3 execution.completed", "completed"]);
  assert.match(lines.at(-1)!, / completed$/);
});
