//! A gated tool call reviewed in the web console, in a real browser (docs/console.md, docs/mcp.md
//! *Tool approval*): Debian's headless Chromium over WebDriver against a real `hensuc serve`
//! with JWT authentication, a mock OpenAI-compatible model on 127.0.0.1 that asks for
//! `lookup_glossary {"term": "mcp"}`, `[mcp] require_approval` gating it, and the tenant's
//! example MCP server offered by `hensuc mcp connect`. The execution pauses at the call; the
//! review page shows the tool and the model's arguments; the reviewer edits them, looks at the
//! diff (*Show changes*), approves; the call runs once, with the edit, and the execution
//! completes with the model's answer to that result.
//!
//! Run by `.ci/run` with the other browser test: `cargo test -p hensuc --test cli -- --ignored
//! console_browser`.

use std::time::Duration;

use serde_json::json;
use wiremock::MockServer;

use super::console_browser::{Browser, sign_in};
use super::mcp_connect::{
    connect, line_with, output_of, serve_define, start_define, status_beyond, tenant_project,
};
use super::tool_approval::{EDITED_RESULT, mount};

#[tokio::test]
#[ignore = "needs chromium + chromedriver; run by .ci/run"]
async fn a_gated_tool_call_is_reviewed_edited_and_approved_in_the_console() {
    let model = MockServer::start().await;
    mount(&model, Duration::ZERO).await;
    let (server, _server_dir) =
        serve_define(&model.uri(), "\n[mcp]\nrequire_approval = [\"lookup_*\"]\n");
    let tenant_dir = tenant_project();
    let url = server.url.clone();
    let (mut bridge, rx) = connect(tenant_dir.path(), &url, &crate::tenant_token("acme"), &[]);
    let mut seen = Vec::new();
    line_with(&rx, "connected to", &mut seen);

    let id = start_define(&url, "mcp").await;
    let now = status_beyond(&url, &id, &["queued", "running"]).await;
    assert_eq!(now["status"], "paused", "{now}");
    let calls = tenant_dir.path().join("calls.log");
    assert!(!calls.exists(), "not called before the approval");

    let b = Browser::start().await;
    sign_in(&b, &url, "acme").await;
    b.goto(&format!("{url}/console/reviews/{id}")).await;
    b.wait_for("#tool-arguments").await;
    let page = b
        .script("return document.querySelector('main').innerText", json!([]))
        .await;
    let page = page.as_str().unwrap_or("");
    assert!(page.contains("lookup_glossary"), "{page}");
    assert!(page.contains("\"term\": \"mcp\""), "{page}");

    // Edit the arguments, look at the diff, approve.
    b.script(
        "document.querySelector('#tool-edit').value = JSON.stringify({term: 'rubric'}, null, 2); return null",
        json!([]),
    )
    .await;
    b.click("form.decision button[value=preview]").await;
    b.wait_for("#tool-diff").await;
    let diff = b
        .script(
            "return document.querySelector('#tool-diff').innerText",
            json!([]),
        )
        .await;
    let diff = diff.as_str().unwrap_or("");
    assert!(
        diff.contains("\"mcp\"") && diff.contains("\"rubric\""),
        "{diff}"
    );
    b.screenshot("review-tool").await;
    b.click("form.decision button[value=approve]").await;
    b.wait_for("#run-summary .status-completed").await;
    b.close().await;

    // The call ran once, with the reviewer's arguments: the model read the glossary's entry
    // for `rubric` and answered it.
    assert_eq!(
        std::fs::read_to_string(&calls)
            .unwrap_or_default()
            .lines()
            .collect::<Vec<_>>(),
        ["lookup_glossary"]
    );
    let turns = model.received_requests().await.unwrap();
    assert!(
        turns
            .iter()
            .any(|r| String::from_utf8_lossy(&r.body).contains(EDITED_RESULT)),
        "the edited call's result reached the model"
    );
    let output = output_of(&url, &id).await;
    assert_eq!(output["definition"], "Rubrics weigh criteria.", "{output}");
    let _ = bridge.kill();
    let _ = bridge.wait();
    drop(server);
}
