//! A tiny MCP server over stdio, for examples/workflows/glossary-tools.hwf and the tests
//! (docs/mcp.md, *The example server*). Two tools:
//!
//! * `lookup_glossary {term}` — the definition of a term from a small built-in glossary;
//! * `word_count {text}` — `{"words": n, "characters": m}` as structured content.
//!
//! Run it by hand with `cargo run -q -p hensu-mcp --example glossary-server` and type JSON-RPC
//! lines, or let `hensuc run` start it from `hensu.toml`.

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer, ServiceExt};
use rmcp::{ServerHandler, transport::stdio};
use serde_json::{Value, json};

const GLOSSARY: &[(&str, &str)] = &[
    (
        "agent",
        "A model-backed worker a workflow node hands a prompt to.",
    ),
    (
        "mcp",
        "The Model Context Protocol: how agents reach tools served by other programs.",
    ),
    (
        "rubric",
        "Weighted criteria a score node grades an output against.",
    ),
    (
        "workflow",
        "A graph of nodes and transitions, written in .hwf.",
    ),
];

#[derive(Clone, Debug, Default)]
struct Glossary;

fn object_schema(property: &str, description: &str) -> Arc<serde_json::Map<String, Value>> {
    let schema = json!({
        "type": "object",
        "properties": {property: {"type": "string", "description": description}},
        "required": [property],
    });
    match schema {
        Value::Object(map) => Arc::new(map),
        _ => Arc::default(),
    }
}

fn text_argument(request: &CallToolRequestParams, name: &str) -> Option<String> {
    request
        .arguments
        .as_ref()?
        .get(name)?
        .as_str()
        .map(str::to_string)
}

impl ServerHandler for Glossary {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(vec![
            Tool::new(
                "lookup_glossary",
                "Looks up the definition of a workflow term (agent, mcp, rubric, workflow).",
                object_schema("term", "The term to define"),
            ),
            Tool::new(
                "word_count",
                "Counts the words and characters of a text.",
                object_schema("text", "The text to count"),
            ),
        ]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        log_call(&request.name);
        match request.name.as_ref() {
            "lookup_glossary" => {
                let term = text_argument(&request, "term").unwrap_or_default();
                let key = term.trim().to_lowercase();
                let result = match GLOSSARY.iter().find(|(t, _)| *t == key) {
                    Some((t, definition)) => CallToolResult::success(vec![ContentBlock::text(
                        format!("{t}: {definition}"),
                    )]),
                    None => CallToolResult::error(vec![ContentBlock::text(format!(
                        "no glossary entry for '{term}'"
                    ))]),
                };
                Ok(result.into())
            }
            "word_count" => {
                let text = text_argument(&request, "text").unwrap_or_default();
                let counts = json!({
                    "words": text.split_whitespace().count(),
                    "characters": text.chars().count(),
                });
                let mut result =
                    CallToolResult::success(vec![ContentBlock::text(counts.to_string())]);
                result.structured_content = Some(counts);
                Ok(result.into())
            }
            other => Err(ErrorData::invalid_params(
                format!("unknown tool '{other}'"),
                None,
            )),
        }
    }
}

/// With `GLOSSARY_CALL_LOG=FILE` in the environment (pass it with `env = ["GLOSSARY_CALL_LOG"]`
/// in `[mcp.servers.NAME]`), every call appends the tool's name as a line to FILE: the tests
/// count how often a tool really ran (docs/security.md, *Call journal*).
fn log_call(tool: &str) {
    use std::io::Write;
    let Some(path) = std::env::var_os("GLOSSARY_CALL_LOG") else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = writeln!(f, "{tool}");
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let service = Glossary.serve(stdio()).await?;
    service.waiting().await?;
    Ok(())
}
