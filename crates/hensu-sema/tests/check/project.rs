//! Project checks E0501–E0505 on hand-built IR (the fixture directories are in `fixtures.rs`).

use hensu_diagnostics::FileId;
use hensu_ir::*;
use hensu_sema::check::{ProjectUnit, check_project};
use hensu_sema::origins::Origins;
use indexmap::IndexMap;

use super::support::*;

fn sub(id: &str, target: &str, imports: &[&str], writes: &[&str]) -> Node {
    let ident = |names: &[&str]| -> IndexMap<String, String> {
        names
            .iter()
            .map(|n| (n.to_string(), n.to_string()))
            .collect()
    };
    Node::SubWorkflow(SubWorkflowNode {
        id: id.into(),
        workflow_id: target.into(),
        input_mapping: ident(imports),
        output_mapping: ident(writes),
        transition_rules: vec![success("done")],
        ..Default::default()
    })
}

fn parent_of(id: &str, target: &str) -> Workflow {
    workflow(id, "call", vec![sub("call", target, &[], &[]), end("done")])
}

fn run(wfs: &[Workflow]) -> Vec<String> {
    let origins: Vec<Origins> = (0..wfs.len())
        .map(|i| Origins {
            file: FileId(i as u32),
            ..Origins::default()
        })
        .collect();
    let units: Vec<ProjectUnit<'_>> = wfs
        .iter()
        .zip(&origins)
        .enumerate()
        .map(|(i, (workflow, origins))| ProjectUnit {
            file: FileId(i as u32),
            workflow,
            origins,
        })
        .collect();
    check_project(&units)
        .iter()
        .map(|d| format!("{}:{} {}", d.primary.file.0, d.code, d.message))
        .collect()
}

#[test]
fn unknown_target_with_suggestion() {
    let wfs = [
        parent_of("main", "sumarizer"),
        workflow("summarizer", "done", vec![end("done")]),
    ];
    assert_eq!(run(&wfs), vec!["0:E0501 unknown sub-workflow `sumarizer`"]);
}

#[test]
fn cycles_are_reported_once() {
    let wfs = [
        parent_of("a", "b"),
        parent_of("b", "a"),
        parent_of("c", "c"),
        parent_of("d", "a"),
    ];
    assert_eq!(
        run(&wfs),
        vec![
            "0:E0502 sub-workflow reference cycle `a → b → a`",
            "2:E0502 sub-workflow reference cycle `c → c`",
        ]
    );
}

#[test]
fn version_pin() {
    let mut parent = parent_of("main", "child");
    if let Some(Node::SubWorkflow(s)) = parent.nodes.get_mut("call") {
        s.target_version = Some("2.0.0".into());
    }
    let child = workflow("child", "done", vec![end("done")]);
    assert_eq!(
        run(&[parent, child]),
        vec!["0:E0504 sub-workflow `child` is pinned to version \"2.0.0\" but declares \"1.0.0\""]
    );
}

#[test]
fn child_schema() {
    let parent = workflow(
        "main",
        "call",
        vec![
            sub("call", "child", &["topic", "tone"], &["summary", "title"]),
            end("done"),
        ],
    );
    let child = with_state(
        workflow(
            "child",
            "w",
            vec![
                std_writes("w", &["summary"], vec![success("done")]),
                end("done"),
            ],
        ),
        &[
            ("topic", VarType::String, true),
            ("summary", VarType::String, false),
            ("title", VarType::String, false),
        ],
    );
    assert_eq!(
        run(&[parent, child]),
        vec![
            "0:E0503 no node of sub-workflow `child` writes `title`",
            "0:E0503 sub-workflow `child` does not declare imported variable `tone`",
        ]
    );
}

/// A child's `awaitSignal` writes its payload: the parent may take it (docs/language.md,
/// *Timers and signals*), no E0503.
#[test]
fn a_child_signal_wait_writes_what_the_parent_takes() {
    let parent = workflow(
        "main",
        "call",
        vec![sub("call", "child", &[], &["decision"]), end("done")],
    );
    let child = with_state(
        workflow(
            "child",
            "gate",
            vec![
                Node::Wait(WaitNode {
                    id: "gate".into(),
                    wait: WaitFor::Signal {
                        name: "approved".into(),
                        timeout_ms: None,
                    },
                    writes: vec!["decision".into()],
                    transition_rules: vec![success("done")],
                }),
                end("done"),
            ],
        ),
        &[("decision", VarType::String, false)],
    );
    assert_eq!(run(&[parent, child]), Vec::<String>::new());
}

#[test]
fn duplicate_workflow_ids() {
    let wfs = [
        workflow("same", "done", vec![end("done")]),
        workflow("other", "done", vec![end("done")]),
        workflow("same", "done", vec![end("done")]),
    ];
    let origins = [Origins::default(), Origins::default(), Origins::default()];
    let units: Vec<ProjectUnit<'_>> = wfs
        .iter()
        .zip(&origins)
        .enumerate()
        .map(|(i, (workflow, origins))| ProjectUnit {
            file: FileId(i as u32),
            workflow,
            origins,
        })
        .collect();
    let d = check_project(&units);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "E0505");
    assert_eq!(d[0].primary.file, FileId(2));
    assert_eq!(d[0].secondary[0].file, FileId(0));
    assert_eq!(d[0].secondary[0].message, "first declared here");
}
