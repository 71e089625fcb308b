//! hensu-mcp tests: MCP servers written with rmcp (stdio: the example server; streamable HTTP:
//! [`support::TestServer`], also behind TLS), the agent tool loop against a mock
//! OpenAI-compatible model, stub scripts, and the server-mode gateway with a test client.

mod client;
mod gateway;
mod https;
mod scripted;
mod support;
mod tenant_bridge;
mod tool_loop;
