//! hensu-providers against mock servers speaking each provider's protocol (wiremock, plus one
//! raw listener for connection-level behaviour). No test needs the internet or a real key; the
//! live tests are ignored unless run with `HENSU_LIVE_TESTS=1` and the provider's key.

mod support;

mod custom_backends;
mod fault_tolerance;
mod live;
mod maintain_context;
mod protocols;
mod redirects;
mod routing;
mod secrets;
mod streaming;
mod structured;
mod tool_loop;
