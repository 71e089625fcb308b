//! Bad input: invalid agent output, agents that never answer, missing inputs, unknown handlers and commands.

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
            "No valid transition from b".into(),
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

#[tokio::test]
async fn unknown_generic_handler_and_command_are_named() {
    let wf = workflow(
        "g",
        vec![
            Node::Generic(GenericNode {
                id: "g".into(),
                executor_type: "quantum-sorter".into(),
                transition_rules: vec![success("e")],
                ..GenericNode::default()
            }),
            end("e", ExitStatus::Success),
        ],
    );
    let r = harness(&Script::new()).run(&wf, json!({})).await;
    assert!(
        failed(&r)
            .to_string()
            .starts_with("No handler registered for generic executor type: quantum-sorter.")
    );

    let wf = workflow(
        "act",
        vec![
            Node::Action(ActionNode {
                id: "act".into(),
                actions: vec![
                    Action::Execute {
                        command_id: "deploy-prod".into(),
                    },
                    Action::Send {
                        handler_id: "slack".into(),
                        payload: IndexMap::new(),
                        raw_payload: false,
                    },
                ],
                transition_rules: vec![success("ok"), failure(Some("ko"))],
            }),
            end("ok", ExitStatus::Success),
            end("ko", ExitStatus::Failure),
        ],
    );
    let mut commands = CommandRegistry::new();
    commands.insert(
        "echo",
        CommandSpec {
            timeout_ms: 1000,
            ..CommandSpec::new("echo")
        },
    );
    let h = harness_with(&Script::new(), |b| b.commands(commands));
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "ko");
    let actions = h.events_of("action_executed");
    assert_eq!(
        actions[0]["output"],
        "Command not found in registry: 'deploy-prod'. Available commands: [echo]"
    );
    assert_eq!(
        actions[1]["output"],
        "Action handler not found: 'slack'. Registered handlers: [log, webhook]"
    );
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("One or more actions failed")
    );
}
