/**
 * A client for the hensu server's API (`hensuc serve`; docs/clients.md): the openapi-fetch
 * client typed from the server's OpenAPI document, plus event streams that reconnect with
 * `Last-Event-ID`, review decisions, idempotent starts, paging and one error class per error.
 */
export * from "./client.js";
export * from "./errors.js";
export * from "./sse.js";
export type { components, operations, paths } from "./schema.js";
