//! The agent tool loop end to end: a mock OpenAI-compatible model asks for an MCP tool, the
//! example server answers over stdio, the model gets the result and finishes.

use std::collections::HashMap;
use std::sync::Arc;

use hensu_mcp::{LocalMcp, McpToolExecutor, ToolSource};
use hensu_providers::{BuildOptions, build_providers_with};
use hensu_runtime::{AgentRequest, Context};
use serde_json::{Value, json};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

use crate::support::*;

fn openai_tool_call(id: &str, name: &str, args: Value) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": id, "type": "function",
                "function": {"name": name, "arguments": args.to_string()}}]},
            "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2}
    }))
}

fn openai_text(text: &str) -> ResponseTemplate {
    ResponseTemplate::new(200).set_body_json(json!({
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
            "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 20, "completion_tokens": 4}
    }))
}

/// Runs one agent call of `tools` against a model answering `first` then a final text;
/// returns the agent's text and the model's second request body.
async fn run_agent(
    source: Arc<dyn ToolSource>,
    tools: &[&str],
    first: ResponseTemplate,
) -> (String, Value) {
    let model = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(first)
        .up_to_n_times(1)
        .mount(&model)
        .await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(openai_text("Done: an MCP term."))
        .mount(&model)
        .await;
    let file = hensu_project::ProjectFile::parse(&format!(
        "[providers.openai]\nbase_url = \"{}/v1\"\n",
        model.uri()
    ));
    assert!(file.refusal().is_none(), "{:?}", file.diagnostics);
    let config = file.config.providers_config();
    let env = |name: &str| (name == "OPENAI_API_KEY").then(|| LEAKED_KEY.to_string());
    let built = build_providers_with(
        &config,
        &env,
        BuildOptions {
            tools: Some(McpToolExecutor::new(source, None).into_arc()),
            ..BuildOptions::default()
        },
    );
    let mut agent_config = hensu_ir::AgentConfig::new("writer", "You define terms.", "gpt-4o");
    agent_config.tools = tools.iter().map(|t| t.to_string()).collect();
    let provider =
        hensu_runtime::select_provider(&built.providers, "gpt-4o").expect("openai provider");
    let agent = provider
        .create_agent(&agent_config, &HashMap::new())
        .expect("agent");
    let system = hensu_runtime::system_prompt(agent.config());
    let response = agent
        .execute(AgentRequest {
            node_id: "define",
            prompt: "What is MCP?",
            system_prompt: &system,
            context: &Context::default(),
        })
        .await
        .expect("answer");
    let requests = model.received_requests().await.expect("requests");
    assert_eq!(requests.len(), 2);
    let first: Value = serde_json::from_slice(&requests[0].body).expect("json");
    assert_eq!(first["tools"][0]["function"]["name"], tools[0]);
    let second = serde_json::from_slice(&requests[1].body).expect("json");
    (response.text, second)
}

#[test]
fn a_model_calls_an_mcp_tool_over_stdio() {
    // LocalMcp owns its runtime: build it outside the test's runtime, as `hensuc run` does.
    let dir = tempfile::tempdir().expect("dir");
    let mcp = LocalMcp::start(&glossary_config(""), dir.path()).expect("connect");
    let source: Arc<dyn ToolSource> = Arc::new(mcp);
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let (text, second) = rt.block_on(run_agent(
        source.clone(),
        &["lookup_glossary"],
        openai_tool_call("call_1", "lookup_glossary", json!({"term": "mcp"})),
    ));
    assert_eq!(text, "Done: an MCP term.");
    let messages = second["messages"].as_array().expect("messages");
    let tool_message = messages
        .iter()
        .find(|m| m["role"] == "tool")
        .expect("tool turn");
    assert_eq!(tool_message["tool_call_id"], "call_1");
    assert!(
        tool_message["content"]
            .as_str()
            .is_some_and(|c| c.starts_with("mcp: The Model Context Protocol")),
        "{tool_message}"
    );
    // The tool's schema from tools/list reached the model.
    assert_eq!(
        second["tools"][0]["function"]["parameters"]["required"],
        json!(["term"])
    );
    drop(rt);
    drop(source);
}

#[tokio::test]
async fn a_secret_in_a_tool_result_never_reaches_the_model() {
    let url = http_server().await;
    let dir = tempfile::tempdir().expect("dir");
    let clients = hensu_mcp::McpClients::connect(
        &config(&format!("[mcp.servers.test]\nurl = \"{url}\"\n")),
        dir.path(),
    )
    .await
    .expect("connect");
    let (_, second) = run_agent(
        Arc::new(clients),
        &["leak"],
        openai_tool_call("call_9", "leak", json!({})),
    )
    .await;
    let body = second.to_string();
    assert!(
        !body.contains(LEAKED_KEY),
        "the key reached the model: {body}"
    );
    assert!(body.contains("the key is"), "{body}");
}
