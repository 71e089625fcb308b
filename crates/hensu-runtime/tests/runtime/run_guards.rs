//! Run guards: maxSteps, maxExecutionTime, cancellation.

use super::*;

#[tokio::test]
async fn max_steps_stops_a_runaway_loop_naming_the_last_nodes() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node("b", "y", &[], vec![success("a")]),
        ],
    );
    wf.config = Some(WorkflowConfig {
        max_steps: 7,
        ..WorkflowConfig::default()
    });
    let r = harness(&Script::new()).run(&wf, json!({})).await;
    assert_eq!(
        failed(&r).to_string(),
        "run exceeded maxSteps = 7; last nodes: b → a → b → a → b"
    );
    assert_eq!(r.state.steps, 7);
    assert_eq!(r.state.history.len(), 7);
}

// Paused time: the 60 s agent and the 50 ms limit run on tokio's virtual clock.
#[tokio::test(start_paused = true)]
async fn max_execution_time_interrupts_a_slow_node() {
    let mut wf = workflow("a", vec![node("a", "x", &[], vec![success("a")])]);
    wf.config = Some(WorkflowConfig {
        max_execution_time: 50,
        ..WorkflowConfig::default()
    });
    let mut s = Script::new();
    s.delay = Some(Duration::from_secs(60));
    let started = tokio::time::Instant::now();
    let r = harness(&s).run(&wf, json!({})).await;
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "the slow node was interrupted, not awaited"
    );
    assert_eq!(
        failed(&r).to_string(),
        "run exceeded maxExecutionTime = 50 ms; last nodes: a"
    );
}

#[tokio::test]
async fn cancellation_stops_at_the_next_node_boundary() {
    struct CancelAfter(CancelToken, u64);
    impl ExecutionListener for CancelAfter {
        fn on_event(&self, e: &Event<'_>) {
            if let Event::NodeStarted { step, .. } = e
                && *step == self.1
            {
                self.0.cancel();
            }
        }
    }
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node("b", "y", &[], vec![success("a")]),
        ],
    );
    let token = CancelToken::new();
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(Script::new())))
        .listener(Arc::new(CancelAfter(token.clone(), 3)))
        .build();
    let r = engine.run(&wf, Context::default(), &token).await;
    assert_eq!(
        failed(&r).to_string(),
        "run cancelled; last nodes: a → b → a → b"
    );
    assert_eq!(
        r.state.history.len(),
        3,
        "the running node finished; nothing after it ran"
    );
    let snapshot = serde_json::to_value(&r.state).unwrap();
    let back: RunState = serde_json::from_value(snapshot).unwrap();
    assert_eq!(back, r.state, "state is serde round-trippable");
}
