//! The event stream of a run.

use super::*;
use crate::transition_rules::revise_workflow;

#[tokio::test]
async fn events_describe_the_run() {
    let wf = revise_workflow(false, false);
    let s = Script::new()
        .on("write", &["draft"])
        .on("review", &[r#"{"approved": true}"#]);
    let h = harness(&s);
    h.run(&wf, json!({"topic": "x"})).await;
    let kinds: Vec<String> = h
        .events
        .events()
        .iter()
        .map(|e| e["event"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        kinds,
        [
            "run_started",
            "node_started",
            "agent_call",
            "node_completed",
            "transition_taken",
            "node_started",
            "agent_call",
            "node_completed",
            "transition_taken",
            "run_finished"
        ]
    );
    let call = &h.events_of("agent_call")[0];
    assert_eq!(call["prompt_bytes"], call["prompt"].as_str().unwrap().len());
    assert_eq!(call["response_bytes"], 5);
    let fin = &h.events_of("run_finished")[0];
    assert_eq!(
        fin["finish"],
        json!({"outcome": "completed", "exit_status": "SUCCESS"})
    );
    assert_eq!(fin["end_node"], "done");
    let t = TransitionCause::Approval {
        expected: true,
        from_review: false,
    };
    assert_eq!(t.to_string(), "on approval (approved variable)");
}
