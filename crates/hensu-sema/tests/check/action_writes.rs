//! `writes` on action nodes (docs/language.md, *Action node*): the result of the actions is
//! stored under the node id and into the listed variables, so both count as written (no W0308,
//! no W0316); an undeclared one is E0402, writes no action can produce are E0407, and the
//! field reaches the JSON artifact only when used.

use hensu_diagnostics::FileId;
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::files::MemoryFiles;
use hensu_sema::lower_source;

/// The codes of lowering then checks, and the JSON artifact.
fn compile(src: &str) -> (Vec<&'static str>, Option<String>) {
    let lowered = lower_source(src, FileId(0), &MemoryFiles::default());
    let mut diags = lowered.diagnostics.clone();
    if let Some(wf) = &lowered.workflow {
        diags.extend(check_workflow(wf, &lowered.origins, InputKind::Source));
    }
    let json = lowered.workflow.as_ref().map(hensu_ir::to_json);
    (diags.iter().map(|d| d.code).collect(), json)
}

/// A search action feeding an agent; `body` is the action node's statements.
fn search(variables: &str, body: &str, prompt: &str) -> String {
    format!(
        r#"workflow("tool-then-agent") {{
    state {{
        input("q", VarType.STRING)
        {variables}
    }}
    agents {{ agent("a") {{ role = "Researcher"; model = "stub" }} }}
    graph {{
        start at "search"
        action("search") {{
            {body}
            onSuccess goto "read"
            onFailure goto "read"
        }}
        node("read") {{
            agent = "a"
            prompt = "{prompt}"
            onSuccess goto "done"
        }}
        end("done")
    }}
}}"#
    )
}

#[test]
fn writes_of_an_action_are_written_and_serialized() {
    let src = search(
        r#"variable("hits", VarType.NUMBER)"#,
        r#"execute("search"); writes("hits")"#,
        "Found {hits} for {q}",
    );
    let (codes, json) = compile(&src);
    assert!(codes.is_empty(), "{codes:?}");
    let json = json.expect("a workflow");
    assert!(json.contains(r#""writes": ["#), "{json}");
}

/// The repro of an action's lost output: no `writes`, `{search}` is the node's output.
#[test]
fn the_node_id_is_the_output_of_an_action() {
    let src = search(
        r#"variable("search", VarType.STRING, "result of the search action")"#,
        r#"send("log", mapOf("message" to "searching {q}")); execute("search")"#,
        "Results: {search}",
    );
    let (codes, json) = compile(&src);
    assert!(codes.is_empty(), "{codes:?}");
    // No `writes`: the artifact is upstream's shape.
    assert!(!json.expect("a workflow").contains("\"writes\""));
}

#[test]
fn an_undeclared_write_is_e0402() {
    let src = search(
        r#"variable("hits", VarType.STRING)"#,
        r#"execute("search"); writes("hist")"#,
        "Found {hits}",
    );
    let (codes, _) = compile(&src);
    assert!(codes.contains(&"E0402"), "{codes:?}");
}

#[test]
fn writes_of_log_only_actions_are_e0407() {
    let src = search(
        r#"variable("hits", VarType.STRING)"#,
        r#"send("log", mapOf("message" to "x")); writes("hits")"#,
        "Found {hits}",
    );
    let (codes, _) = compile(&src);
    assert!(codes.contains(&"E0407"), "{codes:?}");
}

#[test]
fn mcp_and_webhook_results_can_be_written() {
    for send in [
        r#"send("mcp", mapOf("tool" to "search", "query" to "{q}"))"#,
        r#"send("webhook", mapOf("url" to "http://127.0.0.1:1/", "q" to "{q}"))"#,
    ] {
        let src = search(
            r#"variable("hits", VarType.STRING)"#,
            &format!(r#"{send}; writes("hits")"#),
            "Found {hits}",
        );
        let (codes, _) = compile(&src);
        assert!(codes.is_empty(), "{send}: {codes:?}");
    }
}
