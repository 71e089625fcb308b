//! Bad input the host's wiring names: an unknown command from commands.yaml, an unknown action handler.

use super::*;

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
                writes: Vec::new(),
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
    // The first failed action's own words follow upstream's.
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some(
            "One or more actions failed: execute:deploy-prod: Command not found in registry: \
             'deploy-prod'. Available commands: [echo]"
        )
    );
}
