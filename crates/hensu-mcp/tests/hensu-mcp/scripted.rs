//! Stub scripts (`stubs/<scenario>/tools/`) and the `mcp` action handler.

use std::sync::Arc;

use hensu_mcp::{McpActionHandler, ScriptedTools, ToolFailure, ToolSource};
use hensu_runtime::{ActionHandler, Context};
use indexmap::IndexMap;
use serde_json::{Value, json};

fn write(path: &std::path::Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

#[tokio::test]
async fn scenario_scripts_then_default_scripts() {
    let dir = tempfile::tempdir().expect("dir");
    let stubs = dir.path().join("stubs");
    write(
        &stubs.join("default/tools/lookup_glossary.txt"),
        "default entry\n",
    );
    write(
        &stubs.join("strict/tools/lookup_glossary.txt"),
        "strict entry",
    );
    write(
        &stubs.join("strict/tools/word_count.json"),
        r#"{"words": 2}"#,
    );
    write(
        &stubs.join("strict/tools/fails.json"),
        r#"{"isError": true, "content": [{"type": "text", "text": "scripted failure"}]}"#,
    );

    let strict = ScriptedTools::new(&stubs, Some("strict"), None, 1024);
    let names: Vec<String> = strict.tools().into_iter().map(|t| t.name).collect();
    assert_eq!(names, ["fails", "lookup_glossary", "word_count"]);
    assert_eq!(
        strict.call("lookup_glossary", Value::Null).await,
        Ok("strict entry".into())
    );
    assert_eq!(
        strict.call("word_count", json!({})).await,
        Ok(r#"{"words":2}"#.into())
    );
    assert_eq!(
        strict.call("fails", json!({})).await,
        Err(ToolFailure::Tool("scripted failure".into()))
    );
    let other = ScriptedTools::new(&stubs, Some("other"), None, 1024);
    assert_eq!(
        other.call("lookup_glossary", Value::Null).await,
        Ok("default entry".into())
    );
    // Names that are not one path segment never reach the file system.
    assert!(matches!(
        other
            .call("../strict/tools/lookup_glossary", Value::Null)
            .await,
        Err(ToolFailure::UnknownTool { .. })
    ));
}

fn payload(v: Value) -> IndexMap<String, Value> {
    match v {
        Value::Object(m) => m.into_iter().collect(),
        _ => IndexMap::new(),
    }
}

#[tokio::test]
async fn the_mcp_action_handler() {
    let dir = tempfile::tempdir().expect("dir");
    let stubs = dir.path().join("stubs");
    write(&stubs.join("default/tools/echo.txt"), "scripted echo");
    let source: Arc<dyn ToolSource> = Arc::new(ScriptedTools::new(&stubs, None, None, 1024));
    let handler = McpActionHandler::new(Some(source));
    assert_eq!(handler.handler_id(), "mcp");
    let ctx = Context::default();
    let ok = handler
        .execute(
            &payload(json!({"tool": "echo", "arguments": {"text": "x"}})),
            &ctx,
        )
        .await;
    assert!(ok.success);
    assert_eq!(ok.output, "scripted echo");
    let missing = handler.execute(&payload(json!({"tool": " "})), &ctx).await;
    assert!(!missing.success);
    assert_eq!(missing.output, "Missing or empty 'tool' in payload.");
    let unknown = handler
        .execute(&payload(json!({"tool": "nope"})), &ctx)
        .await;
    assert!(!unknown.success);
    assert_eq!(
        unknown.output,
        "MCP tool call failed: unknown tool 'nope'; the MCP servers offer: echo"
    );
    let unconfigured = McpActionHandler::new(None)
        .execute(&payload(json!({"tool": "echo"})), &ctx)
        .await;
    assert!(!unconfigured.success);
    assert!(
        unconfigured.output.contains("no MCP server is configured"),
        "{}",
        unconfigured.output
    );
}
