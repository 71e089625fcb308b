/**
 * Following an event stream over fetch, parsed by eventsource-parser, reopened with
 * `Last-Event-ID` when it drops (docs/clients.md, *Events*).
 */
import { createParser, type EventSourceMessage } from "eventsource-parser";
import type { components } from "./schema.js";
import { errorFromResponse, HensuError, StreamEndedError } from "./errors.js";

export type ExecutionEvent = components["schemas"]["ExecutionEvent"];

/** One server-sent event: `id` (for `Last-Event-ID`), `type` and the JSON `data`. On one
 * execution's stream `id` is the run-log step; on the tenant stream `<executionId>:<step>`. */
export interface HensuEvent {
  id: string;
  type: ExecutionEvent["type"];
  data: ExecutionEvent;
}

/** Event types after which an execution's stream closes for good. */
export const TERMINAL_EVENTS: ReadonlySet<string> = new Set([
  "execution.completed",
  "execution.error",
  "execution.cancelled",
]);
/** The event after which an execution's stream closes until the run is resumed. */
export const PAUSED_EVENT = "execution.paused";
/** Milliseconds a stream may stay silent before it counts as dropped and is reopened after the
 * last event id: four of the server's 15-second keep-alive comments. */
export const STREAM_SILENCE_TIMEOUT_MS = 60_000;

export interface FollowOptions {
  /** Continue right after this event (a previous stream's last `id`). */
  lastEventId?: string;
  /** Reopen after a pause too: the server holds that stream until the run is resumed. */
  throughPauses?: boolean;
  /** Consecutive closes without a new event before giving up (StreamEndedError). */
  maxReconnects?: number;
  /** Wait before the n-th consecutive reconnect: n times this (milliseconds). */
  backoffMs?: number;
  /** A stream silent this long (no event, no keep-alive comment) counts as dropped
   * (milliseconds; default STREAM_SILENCE_TIMEOUT_MS). */
  silenceTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface StreamTarget {
  url: string;
  headers: Record<string, string>;
  fetch: typeof fetch;
  /** One execution's stream (ends at its end) rather than the tenant's (never ends). */
  oneExecution: boolean;
}

function parseMessage(message: EventSourceMessage): HensuEvent | undefined {
  if (message.data === "") return undefined;
  const data = JSON.parse(message.data) as ExecutionEvent;
  // `type` in the data is what upstream clients dispatch on; `event:` repeats it.
  const type = (typeof data?.type === "string" ? data.type : message.event) as ExecutionEvent["type"];
  return { id: message.id ?? "", type, data };
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => {
      clearTimeout(timer);
      reject(signal.reason);
    }, { once: true });
  });

/** Raised inside `follow` when a read waits longer than the silence timeout; handled there as
 * a dropped connection. */
class StreamSilent extends Error {}

/** The reader's next chunk, or StreamSilent after `ms` without one. */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): Promise<ReadableStreamReadResult<Uint8Array>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StreamSilent(`no data for ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([reader.read(), silent]);
  } finally {
    clearTimeout(timer);
  }
}

export async function* follow(target: StreamTarget, options: FollowOptions = {}): AsyncGenerator<HensuEvent> {
  const maxReconnects = options.maxReconnects ?? 5;
  const backoffMs = options.backoffMs ?? 500;
  const silenceMs = options.silenceTimeoutMs ?? STREAM_SILENCE_TIMEOUT_MS;
  let last = options.lastEventId;
  let failures = 0;
  for (;;) {
    let paused = false;
    try {
      const headers: Record<string, string> = { ...target.headers, Accept: "text/event-stream" };
      if (last !== undefined) headers["Last-Event-ID"] = last;
      const response = await target.fetch(target.url, { headers, signal: options.signal ?? null });
      if (!response.ok) {
        const text = await response.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        throw errorFromResponse(response.status, body, response.headers);
      }
      if (response.body === null) throw new TypeError("event stream without a body");
      const queue: HensuEvent[] = [];
      const parser = createParser({
        onEvent(message) {
          const event = parseMessage(message);
          if (event !== undefined) queue.push(event);
        },
      });
      const decoder = new TextDecoder();
      const reader = response.body.getReader();
      try {
        for (;;) {
          const { done, value } = await readWithin(reader, silenceMs);
          if (done) break;
          parser.feed(decoder.decode(value, { stream: true }));
          while (queue.length > 0) {
            const event = queue.shift()!;
            if (event.id !== "") last = event.id;
            failures = 0;
            yield event;
            if (target.oneExecution && TERMINAL_EVENTS.has(event.type)) return;
            paused = event.type === PAUSED_EVENT;
          }
        }
      } finally {
        // The consumer stopped early or the stream ended: release the connection.
        await reader.cancel().catch(() => undefined);
      }
    } catch (error) {
      // An answer of the server (HensuError), a malformed event or the caller's abort is
      // final; anything else is a dropped connection (undici's "terminated", a reset, a
      // silence longer than the keep-alive interval), retried.
      if (error instanceof HensuError || error instanceof SyntaxError || options.signal?.aborted) throw error;
    }
    if (target.oneExecution && paused) {
      if (!options.throughPauses) return;
      continue; // reopened right after the pause: waits for the resume
    }
    // Closed (or dropped) before an end: the server restarting, a proxy, the network.
    failures += 1;
    if (failures > maxReconnects) {
      throw new StreamEndedError(`event stream ${target.url} closed ${failures} times without an end`, 0);
    }
    await sleep(backoffMs * failures, options.signal);
  }
}
