//! Workflow extension end to end (docs/language.md, *Workflow extension*): an extending
//! workflow is built, drawn, run and checked as its merged workflow; its base is found by id in
//! the project's `workflows/` without `-d`.

use super::*;

const EXAMPLE: &str = "examples/workflows/greeting-validated.hwf";

#[test]
fn build_emits_the_merged_workflow_and_records_its_base() {
    let out = run_hensuc(&["build", EXAMPLE, "-o", "-"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    // Plain upstream shape: the base's nodes and agents are copied in, no hensu-only keys.
    let nodes = json["nodes"].as_object().unwrap();
    let ids: Vec<&str> = nodes.keys().map(String::as_str).collect();
    assert_eq!(ids, ["greet", "done", "check-name", "audit", "failure"]);
    assert_eq!(json["startNode"], "check-name");
    assert_eq!(
        json["nodes"]["greet"]["transitionRules"][0]["targetNode"],
        "audit"
    );
    assert_eq!(json["metadata"]["tags"][0], "extends:greeting@1.0.0");
    // Upstream's reader accepts it back unchanged.
    let wf = hensu_ir::from_json(&stdout(&out)).unwrap();
    assert_eq!(wf.id, "greeting-validated");
    assert!(wf.agents.contains_key("greeter") && wf.agents.contains_key("checker"));
}

#[test]
fn graph_json_marks_inherited_nodes_and_describes_each_node() {
    let out = run_hensuc(&["graph", EXAMPLE, "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(json["schemaVersion"], 1);
    assert_eq!(json["extends"][0]["id"], "greeting");
    let node = |id: &str| {
        json["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(node("greet")["inheritedFrom"], "greeting");
    assert!(node("check-name").get("inheritedFrom").is_none());
    assert_eq!(node("greet")["requires"], serde_json::json!(["name"]));
    assert_eq!(node("greet")["provides"], serde_json::json!(["greeting"]));
    assert_eq!(
        node("check-name")["requires"],
        serde_json::json!(["name", "verdict"])
    );
    let edge = |from: &str, kind: &str| {
        json["edges"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["from"] == from && e["kind"] == kind)
            .unwrap()
            .clone()
    };
    assert_eq!(edge("check-name", "condition")["conditional"], true);
    assert_eq!(edge("check-name", "condition")["terminal"], false);
    assert_eq!(edge("audit", "success")["conditional"], false);
    assert_eq!(edge("audit", "success")["terminal"], true);
}

/// The text, mermaid and dot graphs mark inherited nodes too (JSON has `inheritedFrom`).
#[test]
fn text_mermaid_and_dot_graphs_mark_inherited_nodes() {
    let text = run_hensuc(&["graph", EXAMPLE, "--color", "never"]);
    assert_eq!(text.status.code(), Some(0), "{}", stderr(&text));
    let text = stdout(&text);
    assert!(
        text.contains("greet (STANDARD, inherited from greeting)"),
        "{text}"
    );
    assert!(text.contains("check-name (STANDARD)\n"), "{text}");

    let mermaid = stdout(&run_hensuc(&["graph", EXAMPLE, "--format", "mermaid"]));
    assert!(
        mermaid.contains("  style greet stroke-dasharray:4 3\n"),
        "{mermaid}"
    );
    assert!(
        !mermaid.contains("style check_name stroke-dasharray"),
        "{mermaid}"
    );

    let dot = stdout(&run_hensuc(&["graph", EXAMPLE, "--format", "dot"]));
    let line = |id: &str| {
        dot.lines()
            .find(|l| l.starts_with(&format!("  \"{id}\" [")))
            .unwrap_or_default()
            .to_string()
    };
    assert!(line("greet").ends_with(", style=dashed];"), "{dot}");
    assert!(!line("check-name").contains("dashed"), "{dot}");
}

#[test]
fn an_error_found_in_the_merged_workflow_points_into_the_base() {
    let tmp = tempfile::tempdir().unwrap();
    let wf = tmp.path().join("workflows");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(
        wf.join("base.hwf"),
        "workflow(\"base\") {\n    agents { agent(\"a\") { role = \"r\"; model = \"gpt-4o\" } }\n    graph {\n        start at \"one\"\n        node(\"one\") { agent = \"a\"; prompt = \"x\"; onSuccess goto \"two\" }\n        node(\"two\") { agent = \"a\"; prompt = \"y\"; onSuccess goto \"done\" }\n        end(\"done\")\n    }\n}\n",
    )
    .unwrap();
    std::fs::write(
        wf.join("quick.hwf"),
        "workflow(\"quick\") {\n    extends(\"base\")\n    graph {\n        routes(\"one\") { onSuccess goto \"done\" }\n    }\n}\n",
    )
    .unwrap();
    let path = wf.join("quick.hwf");
    let out = hensuc()
        .args(["check", "--deny-warnings", path.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(
        text.contains("warning[W0301]: node `two` is unreachable"),
        "{text}"
    );
    assert!(text.contains("base.hwf:6:"), "{text}");
    assert!(
        text.contains("found while checking `quick`, which inherits this declaration"),
        "{text}"
    );
    // The base on its own is fine: its own check reports nothing.
    let out = hensuc()
        .args([
            "check",
            "--deny-warnings",
            wf.join("base.hwf").to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn an_unknown_base_given_as_a_path_names_its_id() {
    let tmp = tempfile::tempdir().unwrap();
    let wf = tmp.path().join("workflows");
    std::fs::create_dir_all(&wf).unwrap();
    std::fs::write(
        wf.join("greeting.hwf"),
        "workflow(\"greeting\") { graph { start at \"done\"; end(\"done\") } }\n",
    )
    .unwrap();
    std::fs::write(
        wf.join("derived.hwf"),
        "workflow(\"derived\") { extends(\"workflows/greeting.hwf\") }\n",
    )
    .unwrap();
    let out = hensuc()
        .args(["check", wf.join("derived.hwf").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let text = stderr(&out);
    assert!(text.contains("error[E0506]"), "{text}");
    assert!(
        text.contains("write the workflow id: `extends(\"greeting\")`"),
        "{text}"
    );
}

#[test]
fn run_executes_the_merged_workflow() {
    let out = hensuc()
        .args([
            "run",
            "workflows/greeting-validated.hwf",
            "--stub",
            "--no-store",
            "-c",
            r#"{"name": "Ada"}"#,
        ])
        .current_dir(repo().join("examples"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(text.contains("audit"), "{text}");
}

/// An inherited node keeps its timeout; a `routes` block's `onFailure retry … backoff` replaces
/// the base's backoff with the rules (docs/language.md, *Timeouts and backoff*).
#[test]
fn routes_replace_the_backoff_and_keep_the_inherited_timeout() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(dir.join("hensu.toml"), "").unwrap();
    std::fs::write(
        dir.join("workflows/base.hwf"),
        r#"fun workflow() = workflow("base") {
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
            onFailure retry 3 backoff 1.seconds otherwise "failed"
        }
        end("done")
        end("failed", ExitStatus.FAILURE)
    }
}
"#,
    )
    .unwrap();
    std::fs::write(
        dir.join("workflows/derived.hwf"),
        r#"fun workflow() = workflow("derived") {
    extends("base")
    graph {
        routes("call") {
            onSuccess goto "done"
            onFailure retry 2 backoff 5.seconds otherwise "failed"
        }
    }
}
"#,
    )
    .unwrap();
    let o = hensuc()
        .current_dir(dir)
        .args(["graph", "workflows/derived.hwf", "-d", "."])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(0), "{out}{}", stderr(&o));
    assert!(out.contains("│  timeout   30s"), "{out}");
    assert!(out.contains("retry ≤2 · backoff 5s"), "{out}");
}
