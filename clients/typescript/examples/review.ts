// Push a compiled workflow, start it once, follow it to its review, approve, follow it to the end.
// Usage: HENSU_SERVER=http://127.0.0.1:8080 [HENSU_TOKEN=JWT] node review.js WORKFLOW.json TOPIC
import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { HensuClient, PAUSED_EVENT, StoreUnavailableError, type HensuEvent } from "@hensu/client";

const token = process.env.HENSU_TOKEN; // undefined on a dev-mode server
const client = new HensuClient({ baseUrl: process.env.HENSU_SERVER ?? "http://127.0.0.1:8080", ...(token ? { token } : {}) });
const definition = JSON.parse(readFileSync(process.argv[2]!, "utf8")); // `hensuc build FILE.hwf -o -`
await client.pushWorkflow(definition);

// One key per logical start: a retry after a timeout or a 503 gives the same execution.
const idempotencyKey = randomUUID();
const context = { topic: process.argv[3] };
const run = await client
  .start(definition.id, context, { idempotencyKey })
  .catch((error) => {
    if (error instanceof StoreUnavailableError) return client.start(definition.id, context, { idempotencyKey });
    throw error;
  });

// The stream ends at the run's end, or at a pause.
let last: HensuEvent | undefined;
for await (const event of client.events(run.executionId)) {
  console.log(event.id, event.type);
  last = event;
}
if (last?.data.type === PAUSED_EVENT) {
  await client.approve(run.executionId, last.data.correlationId!);
  for await (const event of client.events(run.executionId, { lastEventId: last.id })) console.log(event.id, event.type);
}

console.log((await client.result(run.executionId)).status);
for await (const execution of client.iterExecutions({ workflow: definition.id, pageSize: 100 })) {
  console.log(execution.executionId, execution.status);
}
