//! A tool loop's trace over OTLP (docs/observability.md): `hensuc run` against a mock
//! OpenAI-compatible model on 127.0.0.1 that asks for a tool, and the repository's example MCP
//! server that serves it. The receiver (built on `opentelemetry-proto`) gets the visit, one
//! `chat` span per model turn with the GenAI attributes, and the tool's `execute_tool` span
//! under the visit — the same tree `runs trace` rebuilds from the run log and its journal.

use serde_json::Value;
use wiremock::MockServer;

use super::journal::{mount_tool_loop, newest_run, tool_project};
use super::telemetry::{Receiver, rebuilt_in, tree};
use super::{hensuc, stderr};

#[test]
fn a_tool_loop_exports_chat_and_execute_tool_spans() {
    let receiver = Receiver::start();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let model = runtime.block_on(async {
        let server = MockServer::start().await;
        mount_tool_loop(&server, std::time::Duration::ZERO).await;
        server
    });
    let tmp = tool_project(&model.uri());
    let dir = tmp.path();
    let out = hensuc()
        .args(["run", "define", "-d", ".", "-q", "-c", r#"{"term": "mcp"}"#])
        .current_dir(dir)
        .env("LOCAL_API_KEY", "sk-local")
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", receiver.endpoint())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let id = newest_run(dir);
    let (trace_id, rebuilt) = rebuilt_in(dir, &id);
    let live = receiver.trace(&trace_id);
    assert_eq!(tree(&live), rebuilt, "live and rebuilt agree");
    let named = |name: &str| live.iter().filter(|s| s.name == name).collect::<Vec<_>>();
    let [visit] = named("invoke_agent explainer")[..] else {
        panic!("one visit span: {:#?}", tree(&live))
    };
    let chats = named("chat mock-model");
    assert!(!chats.is_empty(), "{:#?}", tree(&live));
    for chat in &chats {
        assert_eq!(chat.parent.as_ref(), Some(&visit.span_id));
        assert_eq!(chat.attributes["gen_ai.request.model"], "mock-model");
        assert_eq!(chat.attributes["gen_ai.operation.name"], "chat");
        assert!(
            chat.attributes.contains_key("gen_ai.usage.input_tokens"),
            "{chat:#?}"
        );
    }
    let [tool] = named("execute_tool lookup_glossary")[..] else {
        panic!("one tool span: {:#?}", tree(&live))
    };
    assert_eq!(tool.parent.as_ref(), Some(&visit.span_id));
    assert_eq!(tool.attributes["gen_ai.operation.name"], "execute_tool");
    // The journal's rows (docs/security.md, *Call journal*) are what the rebuild reads.
    let shown = hensuc()
        .args(["runs", "-d", ".", "show", &id, "--json"])
        .current_dir(dir)
        .output()
        .unwrap();
    let shown: Value = serde_json::from_slice(&shown.stdout).unwrap();
    assert_eq!(shown["record"]["status"], "completed", "{shown}");
    let journaled = shown["history"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["kind"] == "journal")
        .count();
    assert!(journaled >= 2, "{shown}");
}
