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

/// Compensations are drawn beside the flow, with a dashed edge back to the node they undo, and
/// listed in the text and JSON graphs (docs/language.md, *Saga compensation*).
#[test]
fn graph_draws_compensations() {
    let wf = "examples/workflows/trip-booking.hwf";
    let out = |format: &str| {
        let o = run_hensuc(&["graph", wf, "-d", "examples", "--format", format]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        String::from_utf8_lossy(&o.stdout).into_owned()
    };
    let mermaid = out("mermaid");
    assert!(
        mermaid.contains("cancel_flight -.->|undoes| book_flight"),
        "{mermaid}"
    );
    let dot = out("dot");
    assert!(
        dot.contains(
            "\"book-hotel\" -> \"cancel-hotel\" [label=\"undoes\", style=dashed, dir=back];"
        ),
        "{dot}"
    );
    let json: serde_json::Value = serde_json::from_str(&out("json")).unwrap();
    assert_eq!(
        json["compensations"],
        serde_json::json!([
            {"id": "cancel-hotel", "kind": "agent", "agent": "travel-agent", "undoes": ["book-hotel"]},
            {"id": "cancel-flight", "kind": "actions", "actions": 1, "undoes": ["book-flight"]},
        ])
    );
    insta::assert_snapshot!(out("text"));
}

/// `hensuc graph` shows a node's timeout and its retry's backoff (docs/language.md, *Timeouts
/// and backoff*).
#[test]
fn graph_shows_timeout_and_backoff() {
    let tmp = tempfile::tempdir().unwrap();
    let wf = tmp.path().join("timed.hwf");
    std::fs::write(
        &wf,
        r#"fun workflow() = workflow("timed") {
    agents {
        agent("caller") { role = "API caller"; model = "stub" }
    }
    graph {
        start at "call"
        node("call") {
            agent = "caller"
            prompt = "Fetch the report."
            timeout = 30.seconds
            onSuccess goto "done"
            onFailure retry 3 backoff 1500.milliseconds otherwise "done"
        }
        end("done")
    }
}
"#,
    )
    .unwrap();
    let o = hensuc().arg("graph").arg(&wf).output().unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("│  timeout   30s"), "{out}");
    assert!(out.contains("retry ≤3 · backoff 1500ms"), "{out}");
}

/// `hensuc graph` draws a dependency DAG's order (docs/language.md, *Dependency DAGs*): the
/// text lists each branch's `after` and `runIf`, mermaid enters a branch from the branches it
/// waits for and joins only the last ones, and the JSON's `requires` leaves out what the DAG
/// produces for itself.
#[test]
fn graph_shows_a_dependency_dag() {
    let out = |format: &str| {
        let o = run_hensuc(&[
            "graph",
            "examples/workflows/market-report.hwf",
            "-d",
            "examples",
            "--format",
            format,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let text = out("text");
    assert!(
        text.contains("• write (report-writer) after web, papers"),
        "{text}"
    );
    assert!(
        text.contains("• translate (translator) after write if translate"),
        "{text}"
    );
    let mermaid = out("mermaid");
    for edge in [
        "gather -->|branch| gather_web",
        "gather -->|branch| gather_papers",
        "gather_web -->|after| gather_write",
        "gather_papers -->|after| gather_write",
        "gather_write -->|if translate| gather_translate",
        "gather_translate --> gather___join",
    ] {
        assert!(mermaid.contains(edge), "{edge} missing: {mermaid}");
    }
    assert!(
        !mermaid.contains("gather_web --> gather___join"),
        "{mermaid}"
    );
    let json: serde_json::Value = serde_json::from_str(&out("json")).unwrap();
    assert_eq!(
        json["nodes"][0]["requires"],
        serde_json::json!(["topic", "translate"]),
        "web, papers and report are the DAG's own"
    );
}

/// A map node (docs/language.md, *Map over a list*): its list, agent and limits in the text
/// details, a map shape in mermaid naming the bound, and in JSON the list as a read and the
/// gathered list as a write, `{item}`/`{index}` no reads.
#[test]
fn graph_shows_a_map_node() {
    let out = |format: &str| {
        let o = run_hensuc(&[
            "graph",
            "examples/workflows/paper-digest.hwf",
            "-d",
            "examples",
            "--format",
            format,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let text = out("text");
    for line in [
        "summarize-papers (MAP)",
        "over      papers",
        "parallel  3",
        "max items 20",
        "if failed SKIP",
    ] {
        assert!(text.contains(line), "{line} missing: {text}");
    }
    let mermaid = out("mermaid");
    assert!(
        mermaid.contains("(map over papers: ≤ 20 items)"),
        "{mermaid}"
    );
    let json: serde_json::Value = serde_json::from_str(&out("json")).unwrap();
    let map = &json["nodes"][0];
    assert_eq!(map["requires"], serde_json::json!(["papers"]));
    assert_eq!(map["provides"], serde_json::json!(["summaries"]));
}
