//! Saga compensation (docs/language.md, *Saga compensation*): which visits are compensated,
//! in which order, with what context, and how a failure, a cancellation and an interrupted
//! compensation behave.

use super::*;

/// `undo-<node>` compensates `<node>` with an agent that sees `{compensating}` and
/// `{compensating_output}`.
fn with_saga(mut wf: Workflow, compensated: &[&str]) -> Workflow {
    for n in compensated {
        let id = format!("undo-{n}");
        wf.saga.compensations.insert(
            id.clone(),
            Compensation {
                id: id.clone(),
                body: CompensationBody::Agent {
                    agent_id: "undoer".into(),
                    prompt: "undo {compensating}: {compensating_output} (topic {topic})".into(),
                },
            },
        );
        wf.saga.node_compensations.insert(n.to_string(), id);
    }
    wf.agents.insert("undoer".into(), agent("undoer"));
    wf
}

fn compensations(r: &RunResult) -> Vec<(String, u64, NodeStatus)> {
    r.state
        .compensations
        .iter()
        .map(|c| (c.compensation_id.clone(), c.visit_step, c.status))
        .collect()
}

/// work → check; check sends the flow back to work twice (score too low), then gives up at a
/// FAILURE end: `work` has three completed visits.
fn looping() -> Workflow {
    with_saga(
        workflow(
            "work",
            vec![
                node("work", "work on {topic}", &[], vec![success("check")]),
                node(
                    "check",
                    "check",
                    &[],
                    vec![bounded(
                        Namespace::Score,
                        2,
                        "gave-up",
                        false,
                        score_rule(vec![(ComparisonOperator::Lt, 70.0, "work")], false),
                    )],
                ),
                end("gave-up", ExitStatus::Failure),
            ],
        ),
        &["work"],
    )
}

#[tokio::test]
async fn a_node_visited_three_times_is_compensated_three_times_newest_first() {
    let script = Script::new()
        .on("work", &["draft 1", "draft 2", "draft 3"])
        .on("check", &[r#"{"score": 10}"#])
        .on("undo-work", &["undone"]);
    let h = harness(&script);
    let r = h.run(&looping(), json!({"topic": "saga"})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "gave-up".into()));
    assert_eq!(
        compensations(&r),
        vec![
            ("undo-work".into(), 5, NodeStatus::Success),
            ("undo-work".into(), 3, NodeStatus::Success),
            ("undo-work".into(), 1, NodeStatus::Success),
        ]
    );
    // Each compensation saw its own visit's output, the compensated node and the final context.
    assert_eq!(
        script.prompts_of("undo-work"),
        vec![
            "undo work: draft 3 (topic saga)",
            "undo work: draft 2 (topic saga)",
            "undo work: draft 1 (topic saga)",
        ]
    );
    // Outputs are recorded in the history, never in the state.
    assert!(!r.state.context.contains_key(COMPENSATING));
    assert!(!r.state.context.contains_key(COMPENSATING_OUTPUT));
    let tail: Vec<(&str, Option<&str>)> = r
        .state
        .history
        .iter()
        .skip(6)
        .map(|h| (h.node_id.as_str(), h.compensates.as_deref()))
        .collect();
    assert_eq!(tail, vec![("undo-work", Some("work")); 3]);
    assert!(r.state.compensating.is_none());
    let started: Vec<u64> = h
        .events_of("compensation_started")
        .iter()
        .map(|e| e["visit_step"].as_u64().unwrap())
        .collect();
    assert_eq!(started, vec![5, 3, 1]);
    assert_eq!(h.events_of("compensation_finished").len(), 3);
    // The run finishes after its compensations.
    let events = h.events.events();
    assert_eq!(events.last().unwrap()["event"], "run_finished");
}

#[tokio::test]
async fn a_successful_run_compensates_nothing() {
    let wf = with_saga(
        workflow(
            "a",
            vec![
                node("a", "x", &[], vec![success("done")]),
                end("done", ExitStatus::Success),
            ],
        ),
        &["a"],
    );
    let script = Script::new();
    let h = harness(&script);
    let r = h.run(&wf, json!({})).await;
    assert!(r.outcome.is_success());
    assert!(r.state.compensations.is_empty());
    assert!(h.events_of("compensation_started").is_empty());
    assert!(script.prompts_of("undo-a").is_empty());
}

/// A failure nothing routes ends the run with an error: the failed visit is not compensated,
/// the earlier ones are, and a failed compensation is recorded while the rest still run.
#[tokio::test]
async fn a_failed_compensation_is_recorded_and_the_rest_still_run() {
    let wf = with_saga(
        workflow(
            "a",
            vec![
                node("a", "x", &[], vec![success("b")]),
                node("b", "y", &[], vec![success("c")]),
                node("c", "z", &[], vec![success("done")]),
                end("done", ExitStatus::Success),
            ],
        ),
        &["a", "b", "c"],
    );
    let script = Script::new()
        .fail("c", "the card was declined")
        .fail("undo-b", "the hotel cannot be reached")
        .on("undo-a", &["flight cancelled"]);
    let h = harness(&script);
    let r = h.run(&wf, json!({})).await;
    assert!(matches!(failed(&r), RuntimeError::NoValidTransition { .. }));
    assert_eq!(
        compensations(&r),
        vec![
            ("undo-b".into(), 2, NodeStatus::Failure),
            ("undo-a".into(), 1, NodeStatus::Success),
        ],
        "c failed: it is not compensated"
    );
    assert_eq!(
        r.state.compensations[0].error.as_deref(),
        Some("the hotel cannot be reached")
    );
    assert_eq!(
        r.state.compensations[1].output,
        Some(json!("flight cancelled"))
    );
    let failed_events = h.events_of("compensation_failed");
    assert_eq!(failed_events.len(), 1);
    assert_eq!(failed_events[0]["compensation_id"], "undo-b");
    assert_eq!(failed_events[0]["node_id"], "b");
}

#[tokio::test]
async fn a_cancelled_run_compensates_what_completed_before_the_cancel() {
    struct CancelAt(CancelToken, u64);
    impl ExecutionListener for CancelAt {
        fn on_event(&self, e: &Event<'_>) {
            if let Event::NodeStarted { step, .. } = e
                && *step == self.1
            {
                self.0.cancel();
            }
        }
    }
    let wf = with_saga(
        workflow(
            "a",
            vec![
                node("a", "x", &[], vec![success("b")]),
                node("b", "y", &[], vec![success("done")]),
                end("done", ExitStatus::Success),
            ],
        ),
        &["a", "b"],
    );
    let token = CancelToken::new();
    let script = Script::new().on("undo-a", &["undone"]);
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build();
    let cancel_at = CancelAt(token.clone(), 2);
    let r = engine
        .run(
            &wf,
            Context::default(),
            RunCtx::new(&token).listener(&cancel_at),
        )
        .await;
    assert!(matches!(failed(&r), RuntimeError::Cancelled { .. }));
    assert_eq!(
        compensations(&r),
        vec![("undo-a".into(), 1, NodeStatus::Success)],
        "b was abandoned in flight; a completed and is compensated despite the cancel"
    );
}

/// A boundary hook that keeps the state of every boundary (a store) and stops the run right
/// after storing the `n`-th (a process killed there).
struct CrashAfter {
    n: u64,
    seen: Mutex<u64>,
    stored: Mutex<Option<RunState>>,
}

#[async_trait]
impl Checkpointer for CrashAfter {
    async fn record_nested(
        &self,
        _frames: &[NestedFrame],
        _state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        Ok(Boundary::Continue)
    }
    async fn record_branch(
        &self,
        _frames: &[NestedFrame],
        _node_id: &str,
        _branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        Ok(())
    }
    async fn record_step(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        *self.stored.lock().unwrap() = Some(state.clone());
        let mut seen = self.seen.lock().unwrap();
        *seen += 1;
        if *seen == self.n {
            return Err(RuntimeError::Store {
                message: "lease lost".into(),
            });
        }
        Ok(Boundary::Continue)
    }
}

/// Progress is checkpointed before each compensation: a run stopped there resumes with the
/// compensations left, each running once, and ends with its original outcome.
#[tokio::test]
async fn an_interrupted_compensation_resumes_with_the_ones_left() {
    let wf = with_saga(
        workflow(
            "a",
            vec![
                node("a", "x", &[], vec![success("b")]),
                node("b", "y", &[], vec![success("c")]),
                node("c", "z", &[], vec![success("failed")]),
                end("failed", ExitStatus::Cancel),
            ],
        ),
        &["a", "b", "c"],
    );
    let script = Script::new();
    // Boundaries: before a, b, c (3), then before each compensation; fail before the second.
    let hook = Arc::new(CrashAfter {
        n: 5,
        seen: Mutex::new(0),
        stored: Mutex::new(None),
    });
    let first = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build();
    let r = first
        .run(
            &wf,
            Context::default(),
            RunCtx::new(&CancelToken::new()).checkpointer(hook.as_ref()),
        )
        .await;
    assert!(matches!(failed(&r), RuntimeError::Store { .. }));
    assert_eq!(
        compensations(&r),
        vec![("undo-c".into(), 3, NodeStatus::Success)]
    );
    let pending: Vec<&str> = r
        .state
        .compensating
        .as_ref()
        .unwrap()
        .pending
        .iter()
        .map(|t| t.compensation_id.as_str())
        .collect();
    assert_eq!(pending, vec!["undo-b", "undo-a"]);

    // The state the store holds (the last boundary's), then a new process resumes it.
    let stored = hook.stored.lock().unwrap().clone().unwrap();
    assert_eq!(
        stored.compensations.len(),
        1,
        "undo-c's result was checkpointed"
    );
    let stored: RunState = serde_json::from_value(serde_json::to_value(&stored).unwrap()).unwrap();
    let h = harness(&script);
    let prepared = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let resumed = h
        .engine
        .resume(&prepared, stored, None, RunCtx::new(&CancelToken::new()))
        .await;
    assert_eq!(completed(&resumed), (ExitStatus::Cancel, "failed".into()));
    assert_eq!(
        compensations(&resumed),
        vec![
            ("undo-c".into(), 3, NodeStatus::Success),
            ("undo-b".into(), 2, NodeStatus::Success),
            ("undo-a".into(), 1, NodeStatus::Success),
        ]
    );
    for undo in ["undo-a", "undo-b", "undo-c"] {
        assert_eq!(script.prompts_of(undo).len(), 1, "{undo} ran once");
    }
    assert!(resumed.state.compensating.is_none());
    assert_eq!(
        script.prompts_of("a").len(),
        1,
        "no node of the flow runs again"
    );
}

#[tokio::test]
async fn action_compensations_run_their_actions_and_record_their_output() {
    let mut wf = workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("b")]),
            node("b", "y", &[], vec![success("done")]),
            end("done", ExitStatus::Failure),
        ],
    );
    wf.saga.compensations.insert(
        "log-undo".into(),
        Compensation {
            id: "log-undo".into(),
            body: CompensationBody::Actions(vec![Action::Send {
                handler_id: "log".into(),
                payload: map(json!({"message": "undoing {compensating}"})),
                raw_payload: false,
            }]),
        },
    );
    wf.saga
        .node_compensations
        .insert("a".into(), "log-undo".into());
    let h = harness(&Script::new());
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "done".into()));
    assert_eq!(
        compensations(&r),
        vec![("log-undo".into(), 1, NodeStatus::Success)]
    );
    let actions = h.events_of("action_executed");
    assert_eq!(actions.len(), 1);
    assert_eq!(actions[0]["node_id"], "log-undo");
    assert_eq!(actions[0]["output"], "[INFO] undoing a");
}
