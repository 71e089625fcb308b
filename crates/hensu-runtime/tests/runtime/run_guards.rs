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
async fn cancellation_abandons_the_running_node_and_stops_there() {
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
        .build();
    let cancel_after = CancelAfter(token.clone(), 3);
    let r = engine
        .run(
            &wf,
            Context::default(),
            RunCtx::new(&token).listener(&cancel_after),
        )
        .await;
    assert_eq!(
        failed(&r).to_string(),
        "run cancelled; last nodes: a → b → a"
    );
    assert_eq!(
        r.state.history.len(),
        2,
        "the node running at the cancel is abandoned; nothing after it ran"
    );
    assert_eq!(r.state.current_node, "a", "no transition was taken");
    let snapshot = serde_json::to_value(&r.state).unwrap();
    let back: RunState = serde_json::from_value(snapshot).unwrap();
    assert_eq!(back, r.state, "state is serde round-trippable");
}

/// Ctrl-C during a model call: the provider answers "request cancelled", which used to be
/// recorded as the node's FAILURE and routed through `onFailure`. Now the run stops at the
/// node without a history step or a transition.
#[tokio::test]
async fn cancel_during_a_model_call_takes_no_transition() {
    let cancel = CancelToken::new();
    let c = cancel.clone();
    let script = Script {
        custom: Some(Arc::new(move |_req: &AgentRequest<'_>| {
            c.cancel();
            Err(AgentError::new("cancelled", "request cancelled"))
        })),
        ..Script::new()
    };
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("done"), failure(Some("oops"))]),
            end("done", ExitStatus::Success),
            end("oops", ExitStatus::Failure),
        ],
    );
    let h = harness(&script);
    let r = h.engine.run(&wf, ctx(json!({})), h.ctx(&cancel)).await;
    assert!(
        matches!(
            r.outcome,
            RunOutcome::Failed(RuntimeError::Cancelled { .. })
        ),
        "{:?}",
        r.outcome
    );
    assert!(r.state.history.is_empty(), "{:?}", r.state.history);
    assert!(h.events_of("transition_taken").is_empty());
    assert_eq!(r.state.current_node, "a");
}

/// In-flight work is abandoned at once: an agent that never answers does not hold the run.
#[tokio::test(start_paused = true)]
async fn cancel_abandons_in_flight_work_at_once() {
    let cancel = CancelToken::new();
    let wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    let script = Script {
        delay: Some(Duration::from_secs(3600)),
        ..Script::new()
    };
    let h = harness(&script);
    let c = cancel.clone();
    let run = h.engine.run(&wf, ctx(json!({})), h.ctx(&cancel));
    let trigger = async move {
        tokio::task::yield_now().await;
        c.cancel();
    };
    let (r, ()) = tokio::join!(run, trigger);
    assert!(
        matches!(
            r.outcome,
            RunOutcome::Failed(RuntimeError::Cancelled { .. })
        ),
        "{:?}",
        r.outcome
    );
    assert!(
        r.duration < Duration::from_secs(3600),
        "the hour-long call was not awaited"
    );
}
