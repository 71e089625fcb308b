//! The client: configuration, stdio and HTTP servers, calls, limits, errors.

use hensu_mcp::{McpClients, ToolFailure};
use serde_json::json;

use crate::support::*;

#[test]
fn config_needs_exactly_one_endpoint() {
    let e = parse("[mcp.servers.a]\nargs = [\"x\"]\n").expect_err("no endpoint");
    assert!(e.contains("mcp.servers.a: needs `command`"), "{e}");
    let e = parse("[mcp.servers.a]\ncommand = \"x\"\nurl = \"http://h\"\n").expect_err("both");
    assert!(e.contains("not both"), "{e}");
    let e = parse("[mcp.servers.a]\nurl = \"ftp://h\"\n").expect_err("scheme");
    assert!(e.contains("must start with http:// or https://"), "{e}");
    let e = parse("[mcp.servers.a]\ncommand = \"x\"\nbogus = 1\n").expect_err("key");
    assert!(e.contains("unknown key") && e.contains("E0907"), "{e}");
    // Other sections belong to the provider layer and are ignored here.
    let c = parse("[providers.openai]\nbase_url = \"http://x\"\n").expect("ok");
    assert!(c.servers.is_empty());
}

#[tokio::test]
async fn stdio_server_lists_and_calls_tools() {
    let dir = tempfile::tempdir().expect("dir");
    let clients = McpClients::connect(&glossary_config(""), dir.path())
        .await
        .expect("connect");
    let names: Vec<&String> = clients.tools().keys().collect();
    assert_eq!(names, ["lookup_glossary", "word_count"]);
    let tool = &clients.tools()["lookup_glossary"];
    assert_eq!(tool.server, "glossary");
    assert_eq!(tool.input_schema["required"], json!(["term"]));

    let out = clients
        .call("lookup_glossary", json!({"term": "MCP"}))
        .await
        .expect("result");
    assert!(out.starts_with("mcp: The Model Context Protocol"), "{out}");
    // Structured content wins over the text blocks.
    let out = clients
        .call("word_count", json!({"text": "three small words"}))
        .await
        .expect("result");
    assert_eq!(out, r#"{"words":3,"characters":17}"#);
    // The tool's own error.
    let e = clients
        .call("lookup_glossary", json!({"term": "nothing"}))
        .await
        .expect_err("tool error");
    assert_eq!(
        e.to_string(),
        "the tool reported an error: no glossary entry for 'nothing'"
    );
    let e = clients.call("nope", json!({})).await.expect_err("unknown");
    assert_eq!(
        e.to_string(),
        "unknown tool 'nope'; the MCP servers offer: lookup_glossary, word_count"
    );
    assert_eq!(
        clients.call("word_count", json!([1])).await,
        Err(ToolFailure::BadArguments)
    );
    clients.shutdown().await;
}

#[tokio::test]
async fn a_missing_server_command_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("dir");
    let e = McpClients::connect(
        &config("[mcp.servers.ghost]\ncommand = \"hensu-no-such-mcp-server\"\n"),
        dir.path(),
    )
    .await
    .expect_err("no such command");
    let text = e.to_string();
    assert!(
        text.starts_with("MCP server 'ghost': cannot start `hensu-no-such-mcp-server`"),
        "{text}"
    );
}

#[tokio::test]
async fn http_server_calls_limits_and_timeouts() {
    let url = http_server().await;
    let dir = tempfile::tempdir().expect("dir");
    let clients = McpClients::connect(
        &config(&format!(
            "[mcp]\ncall_timeout_ms = 300\nmax_result_bytes = 4096\n[mcp.servers.test]\nurl = \"{url}\"\n"
        )),
        dir.path(),
    )
    .await
    .expect("connect");
    assert_eq!(clients.tools().len(), 5);
    assert_eq!(
        clients.call("echo", json!({"text": "hi"})).await,
        Ok("hi".to_string())
    );
    assert_eq!(
        clients.call("boom", json!({})).await,
        Err(ToolFailure::Tool("boom".into()))
    );
    assert_eq!(
        clients.call("big", json!({})).await,
        Err(ToolFailure::TooLarge {
            size: 10_000,
            limit: 4096
        })
    );
    // Checked like agent output: control characters are refused.
    assert_eq!(
        clients.call("echo", json!({"text": "a\u{7}b"})).await,
        Err(ToolFailure::Invalid(
            hensu_runtime::OutputViolation::ControlCharacters
        ))
    );
    // `hang` never answers: the call gives up after call_timeout_ms.
    let e = clients.call("hang", json!({})).await.expect_err("timeout");
    assert_eq!(e.to_string(), "no result within 300 ms");
    // The connection still serves later calls.
    assert_eq!(
        clients.call("echo", json!({"text": "again"})).await,
        Ok("again".to_string())
    );
}

/// A tool call made inside a run's traced call carries the run's `traceparent` both ways: as
/// the HTTP header and as `_meta.traceparent` (SEP-414); outside a call, neither.
#[tokio::test]
async fn a_tool_call_carries_the_traceparent_of_the_call_in_flight() {
    use hensu_runtime::trace_context::{self, CallScope, TraceSource};

    const TP: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    struct Fixed;
    impl TraceSource for Fixed {
        fn traceparent(&self, node_id: &str) -> Option<String> {
            (node_id == "ask").then(|| TP.to_string())
        }
    }
    let (url, seen) = traced_http_server().await;
    let dir = tempfile::tempdir().expect("dir");
    let clients = McpClients::connect(
        &config(&format!("[mcp.servers.test]\nurl = \"{url}\"\n")),
        dir.path(),
    )
    .await
    .expect("connect");
    let scope = CallScope::new(std::sync::Arc::new(Fixed), "ask");
    let out = trace_context::in_call(Some(scope), clients.call("echo", json!({"text": "hi"})));
    assert_eq!(out.await, Ok("hi".to_string()));
    assert_eq!(
        clients.call("echo", json!({"text": "plain"})).await,
        Ok("plain".to_string())
    );
    let calls: Vec<_> = seen
        .lock()
        .expect("seen")
        .iter()
        .filter(|s| s.method.as_deref() == Some("tools/call"))
        .cloned()
        .collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert_eq!(calls[0].header.as_deref(), Some(TP));
    assert_eq!(calls[0].meta.as_deref(), Some(TP));
    assert_eq!(
        (calls[1].header.as_deref(), calls[1].meta.as_deref()),
        (None, None)
    );
}

/// The call policies of `[mcp.servers.X]` (docs/security.md, *Call journal*): `tool_policy`
/// over `policy`, `on_interrupted` for the server; a tool nobody declares is `unsafe` and
/// fails its node; a bad value is a coded error.
#[tokio::test]
async fn declared_call_policies_follow_the_server_of_each_tool() {
    use hensu_mcp::{McpToolExecutor, ToolSource};
    use hensu_providers::ToolExecutor;
    use hensu_runtime::journal::{CallPolicy, Declared, OnInterrupted};
    let url = http_server().await;
    let config = config(&format!(
        "[mcp.servers.t]\nurl = \"{url}\"\npolicy = \"idempotent\"\n\
         tool_policy = {{ boom = \"unsafe\" }}\non_interrupted = \"pause\"\n"
    ));
    let dir = tempfile::tempdir().expect("dir");
    let clients = McpClients::connect(&config, dir.path())
        .await
        .expect("connect");
    let source: std::sync::Arc<dyn ToolSource> = std::sync::Arc::new(clients);
    let tools = McpToolExecutor::new(source.clone(), None)
        .with_policies(std::sync::Arc::new(config.clone()));
    let declared = |policy| Declared {
        policy,
        on_interrupted: OnInterrupted::Pause,
    };
    assert_eq!(tools.declared("echo"), declared(CallPolicy::Idempotent));
    assert_eq!(tools.declared("boom"), declared(CallPolicy::Unsafe));
    assert!(tools.is_declared("echo"));
    // Without declarations: unsafe, failing the node.
    let bare = McpToolExecutor::new(source, None);
    assert_eq!(bare.declared("echo"), Declared::default());
    assert!(!bare.is_declared("echo"));
    let e = parse("[mcp.servers.a]\ncommand = \"x\"\npolicy = \"sometimes\"\n").expect_err("value");
    assert!(e.contains("E0906"), "{e}");
}
