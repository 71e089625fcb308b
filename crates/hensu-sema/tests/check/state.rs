//! State, schema and type checks E04xx, W0307, W0308, W0310 on hand-built IR.

use hensu_ir::ConditionPredicate as P;
use hensu_ir::*;
use indexmap::IndexMap;
use serde_json::json;

use super::support::*;

fn prompted(id: &str, prompt: &str, writes: &[&str], rules: Vec<TransitionRule>) -> Node {
    Node::Standard(StandardNode {
        id: id.into(),
        prompt: Some(prompt.into()),
        writes: writes.iter().map(|s| s.to_string()).collect(),
        transition_rules: rules,
        ..Default::default()
    })
}

#[test]
fn engine_variables() {
    let wf = workflow(
        "f",
        "a",
        vec![
            std_writes(
                "a",
                &["score", "v"],
                vec![cond("approved", P::Eq("true".into()), "p"), success("p")],
            ),
            Node::Parallel(ParallelNode {
                id: "p".into(),
                branches: vec![Branch {
                    yields: vec!["recommendation".into()],
                    ..Branch::new("b", "x")
                }],
                consensus_config: None,
                transition_rules: vec![success("s")],
            }),
            Node::SubWorkflow(SubWorkflowNode {
                id: "s".into(),
                workflow_id: "child".into(),
                input_mapping: [("score".to_string(), "score".to_string())]
                    .into_iter()
                    .collect(),
                transition_rules: vec![success("done")],
                ..Default::default()
            }),
            end("done"),
        ],
    );
    let wf = with_agents(wf, &["x"]);
    let l = lines(&check(&wf));
    assert_eq!(
        l,
        vec![
            "E0401 engine variable `approved` in onCondition",
            "E0401 engine variable `recommendation` in branch yields",
            "E0401 engine variable `score` in sub-workflow imports",
            "E0401 engine variable `score` in writes",
        ]
    );
    // JSON input: an engine variable in a standard node's writes is only redundant.
    let l = lines(&check_json(&wf));
    assert!(
        l.contains(&"W0310 engine variable `score` in the writes of `a` is redundant".to_string())
    );
    assert!(!l.contains(&"E0401 engine variable `score` in writes".to_string()));
}

#[test]
fn schema_checks() {
    let wf = workflow(
        "f",
        "a",
        vec![
            prompted(
                "a",
                "Answer {question} with {notes} and {score}; not {a-b} or {\"k\": 1} or { x }",
                &["answr", "status"],
                vec![
                    cond("status", P::Gt(3.0), "done"),
                    cond("count", P::Eq("many".into()), "done"),
                    cond("flag", P::Eq("3".into()), "done"),
                    success("done"),
                ],
            ),
            end("done"),
        ],
    );
    let wf = with_state(
        wf,
        &[
            ("question", VarType::String, true),
            ("answer", VarType::String, false),
            ("status", VarType::String, false),
            ("count", VarType::Number, false),
            ("flag", VarType::Boolean, false),
        ],
    );
    let d = check(&wf);
    let l = lines(&d);
    let expected = [
        "E0402 `answr` is written but not declared in the state schema",
        "E0403 placeholder `{notes}` in a prompt names no declared variable",
        "E0404 node `a` routes on `count` but does not write it",
        "E0404 node `a` routes on `flag` but does not write it",
        "E0405 numeric comparison on STRING variable `status`",
        "E0405 NUMBER variable `count` compared with \"many\"",
        "E0405 BOOLEAN variable `flag` compared with \"3\"",
        "W0308 variable `answer` is never written",
        "W0308 variable `count` is never written",
        "W0308 variable `flag` is never written",
    ];
    for e in expected {
        assert!(l.contains(&e.to_string()), "{e} not in {l:?}");
    }
    assert_eq!(l.len(), expected.len(), "{l:?}");
    let answr = d.iter().find(|d| d.code == "E0402");
    assert_eq!(
        answr.map(|d| d.help.clone()),
        Some(vec!["did you mean `answer`?".to_string()])
    );
}

#[test]
fn no_schema_no_schema_checks() {
    let wf = workflow(
        "f",
        "a",
        vec![
            prompted("a", "Use {anything}", &["whatever"], vec![success("done")]),
            end("done"),
        ],
    );
    assert_eq!(lines(&check(&wf)), Vec::<String>::new());
}

#[test]
fn payloads_and_branch_prompts_are_scanned() {
    let mut payload = IndexMap::new();
    payload.insert("message".to_string(), json!("Task {task} needs {hlep}"));
    payload.insert(
        "nested".to_string(),
        json!({"list": ["{deep}", 3, {"k": "{task}"}]}),
    );
    let wf = workflow(
        "f",
        "p",
        vec![
            Node::Parallel(ParallelNode {
                id: "p".into(),
                branches: vec![
                    Branch {
                        prompt: Some("Review {draft} and {missing}".into()),
                        yields: vec!["draft".into()],
                        ..Branch::new("b1", "x")
                    },
                    Branch::new("b2", "x"),
                ],
                consensus_config: Some(ConsensusConfig::default()),
                transition_rules: vec![success("act")],
            }),
            Node::Action(ActionNode {
                id: "act".into(),
                actions: vec![Action::Send {
                    handler_id: "log".into(),
                    payload,
                    raw_payload: false,
                }],
                transition_rules: vec![success("done")],
                writes: Vec::new(),
            }),
            end("done"),
        ],
    );
    let wf = with_state(
        with_agents(wf, &["x"]),
        &[
            ("task", VarType::String, true),
            ("help", VarType::String, false),
            ("draft", VarType::String, false),
        ],
    );
    let l = lines(&check(&wf));
    assert_eq!(
        l,
        vec![
            "E0403 placeholder `{deep}` in a payload names no declared variable",
            "E0403 placeholder `{hlep}` in a payload names no declared variable",
            "E0403 placeholder `{missing}` in a branch prompt names no declared variable",
            "W0307 consensus branch `b2` declares no yields",
            "W0308 variable `help` is never written",
        ]
    );
}

#[test]
fn unread_input() {
    let wf = with_state(
        workflow(
            "f",
            "a",
            vec![
                prompted("a", "Hello", &[], vec![success("done")]),
                end("done"),
            ],
        ),
        &[("topic", VarType::String, true)],
    );
    assert_eq!(
        lines(&check(&wf)),
        vec!["W0308 input `topic` is never read"]
    );
}

#[test]
fn sub_workflow_mappings() {
    let map = |pairs: &[(&str, &str)]| -> IndexMap<String, String> {
        pairs
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    };
    let wf = workflow(
        "f",
        "s",
        vec![
            Node::SubWorkflow(SubWorkflowNode {
                id: "s".into(),
                workflow_id: "child".into(),
                // child key → parent key; JSON can map two child keys from one parent key.
                input_mapping: map(&[
                    ("topic", "topic"),
                    ("t2", "topic"),
                    ("undeclared", "undeclared"),
                ]),
                // parent key → child key
                output_mapping: map(&[
                    ("topic", "topic"),
                    ("summary", "summary"),
                    ("s2", "summary"),
                ]),
                transition_rules: vec![success("done")],
                ..Default::default()
            }),
            end("done"),
        ],
    );
    let wf = with_state(
        wf,
        &[
            ("topic", VarType::String, true),
            ("summary", VarType::String, false),
        ],
    );
    let l = lines(&check(&wf));
    assert_eq!(
        l,
        vec![
            "E0406 `summary` is written back twice",
            "E0406 `topic` is both imported and written by sub-workflow `s`",
            "E0406 `topic` is imported twice",
            "E0406 sub-workflow imports `undeclared`, which the state schema does not declare",
        ]
    );
}
