/**
 * The hand-written layer over the openapi-fetch client typed by `schema.ts` (generated from
 * the server's OpenAPI document): typed errors, idempotent start, review decisions, paging,
 * and event streams that reconnect with `Last-Event-ID`.
 */
import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./schema.js";
import { errorFromResponse } from "./errors.js";
import { follow, type FollowOptions, type HensuEvent } from "./sse.js";

type Schemas = components["schemas"];
export type ExecutionStarted = Schemas["ExecutionStarted"];
export type ExecutionStatus = Schemas["ExecutionStatus"];
export type ExecutionResult = Schemas["ExecutionResult"];
export type ExecutionAck = Schemas["ExecutionAck"];
export type ExecutionState = Schemas["ExecutionState"];
export type PausedExecution = Schemas["PausedExecution"];
export type WorkflowEntry = Schemas["WorkflowEntry"];
export type WorkflowSaved = Schemas["WorkflowSaved"];
export type HealthStatus = Schemas["HealthStatus"];
type Context = Record<string, unknown>;

export interface HensuClientOptions {
  /** The server's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** The tenant's JWT; omit it for a dev-mode server. */
  token?: string;
  /** A fetch implementation (default: the global one). */
  fetch?: typeof fetch;
}

export interface ListOptions {
  status?: ExecutionState | ExecutionState[] | string;
  workflow?: string;
  since?: Date | string;
  until?: Date | string;
  cursor?: string;
  limit?: number;
}

/** One page of a list; `nextCursor` is undefined on the last page. */
export interface Page<T> {
  items: T[];
  nextCursor: string | undefined;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a 2xx answer; throws the typed error of any other. */
function unwrap<T>(answer: Answer<T>): T {
  if (!answer.response.ok) throw errorFromResponse(answer.response.status, answer.error, answer.response.headers);
  return answer.data as T;
}

export class HensuClient {
  /** The openapi-fetch client, typed by the document, for calls this layer does not wrap. */
  readonly api: Client<paths>;
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: HensuClientOptions) {
    this.#baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.#headers = options.token !== undefined ? { Authorization: `Bearer ${options.token}` } : {};
    this.#fetch = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.api = createClient<paths>({ baseUrl: this.#baseUrl, headers: this.#headers, fetch: this.#fetch });
  }

  // Operations and workflows

  async health(): Promise<HealthStatus> {
    return unwrap(await this.api.GET("/health"));
  }

  /** Pushes a compiled workflow (the JSON `hensuc build` writes). */
  async pushWorkflow(definition: Context): Promise<WorkflowSaved> {
    return unwrap(await this.api.POST("/api/v1/workflows", { body: definition }));
  }

  async listWorkflows(): Promise<WorkflowEntry[]> {
    return unwrap(await this.api.GET("/api/v1/workflows"));
  }

  async getWorkflow(workflowId: string): Promise<Context> {
    const pulled = unwrap(await this.api.GET("/api/v1/workflows/{workflowId}", { params: { path: { workflowId } } }));
    return pulled as Context;
  }

  async deleteWorkflow(workflowId: string): Promise<void> {
    unwrap(await this.api.DELETE("/api/v1/workflows/{workflowId}", { params: { path: { workflowId } } }));
  }

  // Executions

  /** Starts an execution. Retrying with the same `idempotencyKey` (and the same request)
   * within 24 hours gives the same execution and starts nothing. */
  async start(workflowId: string, context?: Context, options: { idempotencyKey?: string } = {}): Promise<ExecutionStarted> {
    const header = options.idempotencyKey !== undefined ? { "Idempotency-Key": options.idempotencyKey } : {};
    const body = context !== undefined ? { workflowId, context } : { workflowId };
    return unwrap(await this.api.POST("/api/v1/executions", { body, params: { header } }));
  }

  /** Queues one execution per context in one request (the server's workers run them) and
   * returns them in order; with `idempotencyKey` a retried batch queues nothing twice. */
  async startBatch(
    workflowId: string,
    contexts: Context[],
    options: { idempotencyKey?: string } = {},
  ): Promise<ExecutionStarted[]> {
    const header = options.idempotencyKey !== undefined ? { "Idempotency-Key": options.idempotencyKey } : {};
    const body = { workflowId, contexts };
    return unwrap(await this.api.POST("/api/v1/executions/batch", { body, params: { header } })).executions;
  }

  async status(executionId: string): Promise<ExecutionStatus> {
    return unwrap(await this.api.GET("/api/v1/executions/{executionId}", { params: { path: { executionId } } }));
  }

  async result(executionId: string): Promise<ExecutionResult> {
    return unwrap(
      await this.api.GET("/api/v1/executions/{executionId}/result", { params: { path: { executionId } } }),
    );
  }

  async paused(): Promise<PausedExecution[]> {
    return unwrap(await this.api.GET("/api/v1/executions/paused"));
  }

  async cancel(executionId: string): Promise<ExecutionAck> {
    return unwrap(
      await this.api.POST("/api/v1/executions/{executionId}/cancel", { params: { path: { executionId } } }),
    );
  }

  /** Asks a running execution to pause at its next node boundary (`pausing`), whichever server
   * runs it; `paused` when it was paused already. */
  async pause(executionId: string): Promise<ExecutionAck> {
    return unwrap(
      await this.api.POST("/api/v1/executions/{executionId}/pause", { params: { path: { executionId } } }),
    );
  }

  /** A plain resume (not for a review pause: answer those with approve/reject/backtrack). */
  async resume(executionId: string, options: { contextEdits?: Context } = {}): Promise<ExecutionAck> {
    return this.#resume(executionId, { contextEdits: options.contextEdits });
  }

  /** Approves a pending review; for a gated tool call (a review of kind `tool`), `arguments`
   * replaces the call's arguments (docs/server.md, *Pending reviews*). */
  async approve(
    executionId: string,
    correlationId: string,
    options: { contextEdits?: Context; arguments?: Context } = {},
  ): Promise<ExecutionAck> {
    return this.#resume(executionId, {
      decision: "approve",
      correlationId,
      contextEdits: options.contextEdits,
      arguments: options.arguments,
    });
  }

  async reject(executionId: string, correlationId: string, options: { reason?: string } = {}): Promise<ExecutionAck> {
    return this.#resume(executionId, { decision: "reject", correlationId, reason: options.reason });
  }

  async backtrack(
    executionId: string,
    correlationId: string,
    targetStep: string,
    options: { reason?: string; contextEdits?: Context } = {},
  ): Promise<ExecutionAck> {
    return this.#resume(executionId, { decision: "backtrack", correlationId, targetStep, ...options });
  }

  async #resume(executionId: string, fields: Schemas["ResumeExecution"]): Promise<ExecutionAck> {
    // Only the fields given: the server refuses unknown fields and reads a missing `decision`
    // as a plain resume.
    const body = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
    return unwrap(
      await this.api.POST("/api/v1/executions/{executionId}/resume", { params: { path: { executionId } }, body }),
    );
  }

  // Paging

  /** One page, newest first; pass its `nextCursor` (with the same filters) for the next. */
  async listExecutions(options: ListOptions = {}): Promise<Page<ExecutionStatus>> {
    const time = (value: Date | string | undefined) => (value instanceof Date ? value.toISOString() : value);
    const query = {
      status: Array.isArray(options.status) ? options.status.join(",") : options.status,
      workflow: options.workflow,
      since: time(options.since),
      until: time(options.until),
      cursor: options.cursor,
      limit: options.limit,
    };
    const answer = await this.api.GET("/api/v1/executions", { params: { query } });
    const items = unwrap(answer);
    return { items, nextCursor: answer.response.headers.get("x-next-cursor") ?? undefined };
  }

  /** Every matching execution, newest first, one page request at a time. */
  async *iterExecutions(options: Omit<ListOptions, "cursor" | "limit"> & { pageSize?: number } = {}): AsyncGenerator<ExecutionStatus> {
    const { pageSize, ...filters } = options;
    let cursor: string | undefined;
    for (;;) {
      const page: Page<ExecutionStatus> = await this.listExecutions({ ...filters, cursor, limit: pageSize });
      yield* page.items;
      if (page.nextCursor === undefined) return;
      cursor = page.nextCursor;
    }
  }

  // Events

  /** One execution's events until it ends (or pauses, unless `throughPauses`). A dropped
   * connection is reopened with `Last-Event-ID` of the last event seen, so no event is lost
   * or repeated. */
  events(executionId: string, options: FollowOptions = {}): AsyncGenerator<HensuEvent> {
    const url = `${this.#baseUrl}/api/v1/executions/${encodeURIComponent(executionId)}/events`;
    return follow({ url, headers: this.#headers, fetch: this.#fetch, oneExecution: true }, options);
  }

  /** Every execution's events of the tenant, from now on; never ends by itself (use `signal`). */
  tenantEvents(options: Omit<FollowOptions, "throughPauses"> = {}): AsyncGenerator<HensuEvent> {
    const url = `${this.#baseUrl}/api/v1/executions/events`;
    return follow({ url, headers: this.#headers, fetch: this.#fetch, oneExecution: false }, options);
  }
}
