// The error mapping for answers the live tests cannot provoke (a store outage, a proxy's page).
import assert from "node:assert/strict";
import { test } from "node:test";
import { ClientError, errorFromResponse, NotFoundError, ServerError, StoreUnavailableError } from "../src/index.js";

test("store_unavailable carries Retry-After", () => {
  const body = { error: "store unavailable", status: 503, code: "store_unavailable" };
  const error = errorFromResponse(503, body, new Headers({ "Retry-After": "1" }));
  assert.ok(error instanceof StoreUnavailableError && error instanceof ServerError);
  assert.deepEqual([error.status, error.code, error.retryAfter, error.message], [503, "store_unavailable", 1, "store unavailable"]);
  assert.equal(error.name, "StoreUnavailableError");
});

test("an unknown code falls back to the status, then the family", () => {
  assert.equal(errorFromResponse(404, { error: "x", status: 404, code: "new_code" }, new Headers()).constructor, NotFoundError);
  assert.equal(errorFromResponse(418, { error: "teapot", status: 418 }, new Headers()).constructor, ClientError);
  const text = errorFromResponse(502, "bad gateway", new Headers());
  assert.equal(text.constructor, ServerError);
  assert.equal(text.message, "bad gateway");
  assert.equal(text.code, undefined);
});
