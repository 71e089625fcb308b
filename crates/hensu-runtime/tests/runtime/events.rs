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

/// Records event kinds and declines the per-step events.
#[derive(Default)]
struct RunEventsOnly(Mutex<Vec<String>>);

impl ExecutionListener for RunEventsOnly {
    fn on_event(&self, event: &Event<'_>) {
        let kind = event.to_json()["event"].as_str().unwrap_or("").to_string();
        self.0.lock().unwrap().push(kind);
    }
    fn wants_step_events(&self) -> bool {
        false
    }
}

/// A listener that declines the per-step events gets the others, and the run itself (path,
/// history, context) is the same as with one that reads them all.
#[tokio::test]
async fn a_listener_without_step_events_sees_the_run_events_and_the_same_run() {
    let wf = revise_workflow(false, false);
    let s = Script::new()
        .on("write", &["draft"])
        .on("review", &[r#"{"approved": true}"#]);
    let full = harness(&s).run(&wf, json!({"topic": "x"})).await;
    let quiet = Arc::new(RunEventsOnly::default());
    let h = harness(&s);
    let r = h.run_with(&wf, json!({"topic": "x"}), quiet.as_ref()).await;
    assert_eq!(*quiet.0.lock().unwrap(), ["run_started", "run_finished"]);
    assert_eq!(path(&r), path(&full));
    assert_eq!(r.state.context, full.state.context);
    let strip = |r: &RunResult| -> Vec<(String, Option<Value>, NodeStatus)> {
        r.state
            .history
            .iter()
            .map(|h| (h.node_id.clone(), h.output.clone(), h.status))
            .collect()
    };
    assert_eq!(strip(&r), strip(&full));
    assert!(!NoopListener.wants_step_events());
    assert!(!MultiListener::new(vec![Arc::new(NoopListener), quiet.clone()]).wants_step_events());
    assert!(
        MultiListener::new(vec![
            Arc::new(NoopListener),
            Arc::new(CollectingListener::new())
        ])
        .wants_step_events()
    );
}
