//! `hensuc graph` in every format.

use crate::*;

#[test]
fn graph_formats() {
    let wf = "examples/workflows/content-pipeline.hwf";
    let mermaid = run_hensuc(&["graph", wf, "--format", "mermaid"]);
    assert_eq!(mermaid.status.code(), Some(0), "{}", stderr(&mermaid));
    insta::assert_snapshot!("content_pipeline_mermaid", stdout(&mermaid));
    let text = run_hensuc(&["graph", wf]);
    assert_eq!(text.status.code(), Some(0));
    assert!(
        !stdout(&text).contains('\x1b'),
        "no ANSI codes when not on a terminal"
    );
    insta::assert_snapshot!("content_pipeline_text", stdout(&text));
    let dot = run_hensuc(&["graph", wf, "--format", "dot"]);
    assert!(stdout(&dot).starts_with("digraph"));
    let json = run_hensuc(&["graph", wf, "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    assert_eq!(v["schemaVersion"], 1);
}
