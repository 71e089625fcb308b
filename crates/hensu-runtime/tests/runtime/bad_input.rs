//! Bad input: invalid agent output, agents that never answer, missing inputs.

use super::*;

#[tokio::test]
async fn bad_agent_output_fails_cleanly_with_state_intact() {
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node(
                "b",
                "y",
                &["p", "q"],
                vec![condition("p", ConditionPredicate::Eq("x".into()), "e")],
            ),
            end("e", ExitStatus::Success),
        ],
    );
    let cases: Vec<(String, String)> = vec![
        (
            "ctl\u{1b}[31m".into(),
            "Node [b] output contains illegal control characters".into(),
        ),
        (
            "hidden\u{202E}txt".into(),
            "Node [b] output contains Unicode manipulation characters".into(),
        ),
        (
            "x".repeat(10 * 1024 * 1024),
            "Node [b] output exceeds maximum allowed size".into(),
        ),
        (
            "garbage ]]} {{{".into(),
            "No valid transition from b; rules tried: when `p` == \"x\": `p` is missing from the output".into(),
        ),
    ];
    for (answer, message) in cases {
        let s = Script::new().on("a", &["first"]).on("b", &[&answer]);
        let r = harness(&s).run(&wf, json!({"p": "before"})).await;
        assert_eq!(failed(&r).to_string(), message);
        assert_eq!(r.state.context["a"], json!("first"), "earlier outputs kept");
        assert_eq!(
            r.state.history.len(),
            if message.starts_with("No valid") {
                2
            } else {
                1
            }
        );
        assert_eq!(r.state.current_node, "b");
        assert_eq!(r.state.phase, ExecutionPhase::Terminal);
    }
}

#[tokio::test]
async fn an_agent_that_never_answers_times_out_into_the_failure_path() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("ok"), failure(Some("timeout"))]),
            end("ok", ExitStatus::Success),
            end("timeout", ExitStatus::Failure),
        ],
    );
    wf.agents.get_mut("a-agent").unwrap().timeout = Some(1);
    let mut s = Script::new();
    s.delay = Some(Duration::from_secs(3600));
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "timeout");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Agent 'a-agent' did not answer within 1000 ms")
    );
}

#[tokio::test]
async fn missing_inputs_are_listed_before_anything_runs() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "{topic}", &[], vec![success("e")]),
            end("e", ExitStatus::Success),
        ],
    );
    wf.state_schema = Some(StateSchema {
        variables: ["topic", "audience", "tone"]
            .iter()
            .enumerate()
            .map(|(i, n)| StateVariable {
                name: n.to_string(),
                var_type: VarType::String,
                is_input: i < 2,
                description: None,
            })
            .collect(),
    });
    let s = Script::new();
    let r = harness(&s).run(&wf, json!({"audience": null})).await;
    assert_eq!(
        failed(&r).to_string(),
        "missing required inputs: topic, audience"
    );
    assert!(s.prompts().is_empty());
    let r = harness(&s).run(&wf, json!({"audience": "devs"})).await;
    assert_eq!(failed(&r).to_string(), "missing required input: topic");
}

fn typed_schema(wf: &mut Workflow) {
    let var = |name: &str, var_type: VarType, is_input: bool| StateVariable {
        name: name.into(),
        var_type,
        is_input,
        description: None,
    };
    wf.state_schema = Some(StateSchema {
        variables: vec![
            var("topic", VarType::String, true),
            var("audience", VarType::String, true),
            var("count", VarType::Number, false),
        ],
    });
}

/// Inputs are checked against the schema's types before the first node, every mismatch in one
/// error; an undeclared key is a warning with the nearest declared name.
#[tokio::test]
async fn inputs_are_typed_and_unknown_keys_are_named() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    typed_schema(&mut wf);
    let h = harness(&Script::new());
    let r = h
        .run(
            &wf,
            json!({"topic": 42, "audience": ["devs"], "topik": "x"}),
        )
        .await;
    assert_eq!(
        failed(&r).to_string(),
        r#"invalid inputs: `topic` is a number (42), expected STRING; `audience` is a list (["devs"]), expected STRING"#
    );
    assert!(r.state.history.is_empty(), "no node ran");
    let unknown = h.events_of("unknown_input");
    assert_eq!(unknown.len(), 1);
    assert_eq!(unknown[0]["key"], "topik");
    assert_eq!(unknown[0]["did_you_mean"], "topic");
}

/// A NUMBER variable written as "abc" fails the node and names the variable; the failure
/// routes like any other.
#[tokio::test]
async fn a_written_variable_must_fit_its_declared_type() {
    let mut wf = workflow(
        "a",
        vec![
            node(
                "a",
                "x",
                &["count"],
                vec![success("done"), failure(Some("bad"))],
            ),
            end("done", ExitStatus::Success),
            end("bad", ExitStatus::Failure),
        ],
    );
    typed_schema(&mut wf);
    let s = Script::new().on("a", &[r#"{"count": "abc"}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({"topic": "t", "audience": "devs"})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "bad".into()));
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some(r#"variable `count` (NUMBER) was written as a string ("abc")"#)
    );
    assert!(!r.state.context.contains_key("count"));
    let s = Script::new().on("a", &[r#"{"count": "42"}"#]);
    let r = harness(&s)
        .run(&wf, json!({"topic": "t", "audience": "devs"}))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
}
