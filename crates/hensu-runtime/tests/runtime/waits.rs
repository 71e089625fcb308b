//! `wait` and `awaitSignal` nodes (docs/language.md, *Timers and signals*): on tokio's paused
//! clock with the default waiter, and on a [`VirtualClock`] (what `hensuc test` uses).

use super::*;

fn wait_node(id: &str, wait: WaitFor, writes: &[&str], rules: Vec<TransitionRule>) -> Node {
    Node::Wait(WaitNode {
        id: id.into(),
        wait,
        writes: writes.iter().map(|s| s.to_string()).collect(),
        transition_rules: rules,
    })
}

/// `a` (agent) → `pause` (wait) → `done`.
fn timer(ms: u64) -> Workflow {
    workflow(
        "a",
        vec![
            node("a", "x", &[], vec![success("pause")]),
            wait_node(
                "pause",
                WaitFor::Duration { ms },
                &[],
                vec![success("done")],
            ),
            end("done", ExitStatus::Success),
        ],
    )
}

/// `approval` waits for signal `go` (timeout `timeout_ms`), writing `decision`.
fn signal_wait(timeout_ms: Option<u64>) -> Workflow {
    workflow(
        "approval",
        vec![
            wait_node(
                "approval",
                WaitFor::Signal {
                    name: "go".into(),
                    timeout_ms,
                },
                &["decision"],
                vec![success("ship"), failure(Some("escalate"))],
            ),
            end("ship", ExitStatus::Success),
            end("escalate", ExitStatus::Failure),
        ],
    )
}

#[tokio::test(start_paused = true)]
async fn a_timer_sleeps_on_the_clock_without_a_store() {
    let s = Script::new();
    let h = harness(&s);
    let started = tokio::time::Instant::now();
    let r = h.run(&timer(90_000), json!({})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert!(
        started.elapsed() >= Duration::from_secs(90),
        "slept the wait"
    );
    assert_eq!(path(&r), ["a", "pause", "done"]);
    assert!(r.state.waiting.is_none());
}

#[tokio::test]
async fn a_virtual_clock_moves_to_the_wake_time_without_sleeping() {
    let clock = VirtualClock::new(1_000_000, Vec::new());
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let wf = timer(48 * 3_600_000);
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(clock.elapsed_ms(), 48 * 3_600_000);
}

#[tokio::test]
async fn until_reads_an_instant_from_the_state() {
    let wf = workflow(
        "w",
        vec![
            wait_node(
                "w",
                WaitFor::Until {
                    template: "{deadline}".into(),
                },
                &[],
                vec![success("done"), failure(Some("bad"))],
            ),
            end("done", ExitStatus::Success),
            end("bad", ExitStatus::Failure),
        ],
    );
    // 2026-01-01T00:00:00Z
    let start = 1_767_225_600_000;
    let clock = VirtualClock::new(start, Vec::new());
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let input = json!({"deadline": "2026-01-01T06:00:00Z"});
    let r = h
        .engine
        .run(&wf, ctx(input), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(clock.elapsed_ms(), 6 * 3_600_000);
    let bad = h
        .engine
        .run(
            &wf,
            ctx(json!({"deadline": "next tuesday"})),
            h.ctx(&cancel).waiter(&clock),
        )
        .await;
    assert_eq!(completed(&bad), (ExitStatus::Failure, "bad".into()));
    assert!(
        bad.state.history[0]
            .error
            .as_deref()
            .unwrap_or_default()
            .contains("not an ISO-8601 timestamp")
    );
}

#[tokio::test]
async fn a_signal_before_its_timeout_writes_its_payload_and_takes_the_signal_route() {
    let clock = VirtualClock::new(
        0,
        vec![ScheduledSignal {
            name: "go".into(),
            at_ms: 60_000,
            payload: json!({"approved": true}),
        }],
    );
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(
            &signal_wait(Some(3_600_000)),
            ctx(json!({})),
            h.ctx(&cancel).waiter(&clock),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "ship".into()));
    assert_eq!(r.state.context["decision"], json!({"approved": true}));
    assert_eq!(r.state.signals_taken, [0]);
    assert_eq!(clock.elapsed_ms(), 60_000);
}

#[tokio::test]
async fn a_signal_after_the_timeout_is_not_taken_and_the_timeout_route_is() {
    let clock = VirtualClock::new(
        0,
        vec![ScheduledSignal {
            name: "go".into(),
            at_ms: 7_200_000,
            payload: json!("late"),
        }],
    );
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(
            &signal_wait(Some(3_600_000)),
            ctx(json!({})),
            h.ctx(&cancel).waiter(&clock),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "escalate".into()));
    assert!(r.state.context.get("decision").is_none());
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("signal `go` did not come within 3600s")
    );
}

#[tokio::test]
async fn a_signal_wait_without_a_signal_or_timeout_suspends_and_resumes_waiting_again() {
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let wf = signal_wait(None);
    let r = h.engine.run(&wf, ctx(json!({})), h.ctx(&cancel)).await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(r.state.current_node, "approval");
    assert_eq!(r.state.steps, 0, "the wait is not a step until it ends");
    let waiting = r.state.waiting.clone().expect("waiting");
    assert_eq!(waiting.signal.as_deref(), Some("go"));
    // The signal arrives: the resumed run takes it.
    let clock = VirtualClock::new(
        0,
        vec![ScheduledSignal {
            name: "go".into(),
            at_ms: 0,
            payload: json!("yes"),
        }],
    );
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    let r = h
        .engine
        .resume(&p, r.state, None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "ship".into()));
    assert_eq!(r.state.context["decision"], json!("yes"));
    assert_eq!(path(&r), ["approval", "ship"]);
}

/// A resumed wait keeps the wake time of its first arrival.
#[tokio::test]
async fn a_resumed_timer_keeps_its_wake_time() {
    struct SuspendOnce(std::sync::atomic::AtomicBool, Mutex<Vec<Option<u64>>>);
    #[async_trait]
    impl Waiter for SuspendOnce {
        fn now_ms(&self) -> u64 {
            // Later at every call: a recomputed wake time would differ.
            static T: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1_000);
            T.fetch_add(500, std::sync::atomic::Ordering::SeqCst)
        }
        async fn wait(&self, r: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError> {
            self.1.lock().unwrap().push(r.wake_at_ms);
            if self.0.swap(false, std::sync::atomic::Ordering::SeqCst) {
                Ok(WaitAnswer::Suspend)
            } else {
                Ok(WaitAnswer::Elapsed)
            }
        }
    }
    let waiter = SuspendOnce(true.into(), Mutex::new(Vec::new()));
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let wf = timer(10_000);
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&waiter))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(r.state.current_node, "pause");
    let state = serde_json::to_value(&r.state).unwrap();
    let state: RunState = serde_json::from_value(state).unwrap();
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    let r = h
        .engine
        .resume(&p, state, None, h.ctx(&cancel).waiter(&waiter))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    let seen = waiter.1.lock().unwrap().clone();
    assert_eq!(seen.len(), 2);
    assert_eq!(seen[0], seen[1], "the same wake time after the resume");
    assert_eq!(path(&r), ["a", "pause", "done"]);
}

/// Answers every review later (as a deferred review does).
struct Later;

#[async_trait]
impl ReviewHandler for Later {
    async fn request_review(&self, _request: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Pending {
            correlation_id: "c-1".into(),
        }
    }
}

/// `draft` (REQUIRED review, deadline 48 h) → `publish`, rejected → `escalate`.
fn reviewed_with_deadline() -> Workflow {
    let mut draft = node(
        "draft",
        "x",
        &[],
        vec![
            TransitionRule::Approval {
                expected: true,
                target_node: "publish".into(),
                with_feedback: false,
            },
            TransitionRule::Approval {
                expected: false,
                target_node: "escalate".into(),
                with_feedback: false,
            },
        ],
    );
    if let Node::Standard(n) = &mut draft {
        n.review_config = Some(ReviewConfig::default());
    }
    let mut wf = workflow(
        "draft",
        vec![
            draft,
            end("publish", ExitStatus::Success),
            end("escalate", ExitStatus::Failure),
        ],
    );
    wf.timing.nodes.insert(
        "draft".into(),
        NodeTiming {
            review_deadline_ms: Some(48 * 3_600_000),
            ..NodeTiming::default()
        },
    );
    wf
}

/// A review not decided by its deadline is rejected, so `onRejection` escalates; before the
/// deadline a resume without a decision asks again.
#[tokio::test]
async fn a_review_past_its_deadline_is_rejected_and_escalates() {
    let s = Script::new();
    let h = harness_with(&s, |b| b.review_handler(Arc::new(Later)));
    let cancel = CancelToken::new();
    let wf = reviewed_with_deadline();
    let start = 1_000_000;
    let clock = VirtualClock::new(start, Vec::new());
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    let ExecutionPhase::Awaiting { deadline_at_ms, .. } = &r.state.phase else {
        panic!("waits for its review: {:?}", r.state.phase);
    };
    assert_eq!(*deadline_at_ms, Some(start + 48 * 3_600_000));
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    // An hour later: still waiting for the reviewer.
    let early = VirtualClock::new(start + 3_600_000, Vec::new());
    let again = h
        .engine
        .resume(&p, r.state.clone(), None, h.ctx(&cancel).waiter(&early))
        .await;
    assert_eq!(again.outcome, RunOutcome::Paused);
    // Past the deadline: rejected, escalated.
    let late = VirtualClock::new(start + 48 * 3_600_000, Vec::new());
    let done = h
        .engine
        .resume(&p, r.state, None, h.ctx(&cancel).waiter(&late))
        .await;
    assert_eq!(completed(&done), (ExitStatus::Failure, "escalate".into()));
    // The review verdict routed it (a rejection), not a failure of the node.
    let taken = h.events_of("transition_taken");
    let last = taken.last().expect("a transition");
    assert_eq!(last["to"], "escalate", "{taken:?}");
    assert_eq!(last["cause"]["from_review"], true, "{last}");
}

/// The review's own `onTimeout` arm routes a review past its deadline (no rejection); a
/// rejection given in time still takes `onRejection`.
#[tokio::test]
async fn a_review_past_its_deadline_takes_its_timeout_arm() {
    let mut wf = reviewed_with_deadline();
    wf.nodes
        .insert("late".into(), end("late", ExitStatus::Failure));
    if let Some(Node::Standard(n)) = wf.nodes.get_mut("draft") {
        n.transition_rules.push(TransitionRule::ReviewTimeout {
            target_node: "late".into(),
        });
    }
    let s = Script::new();
    let h = harness_with(&s, |b| b.review_handler(Arc::new(Later)));
    let cancel = CancelToken::new();
    let start = 1_000_000;
    let clock = VirtualClock::new(start, Vec::new());
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    let late = VirtualClock::new(start + 48 * 3_600_000, Vec::new());
    let done = h
        .engine
        .resume(&p, r.state.clone(), None, h.ctx(&cancel).waiter(&late))
        .await;
    assert_eq!(completed(&done), (ExitStatus::Failure, "late".into()));
    let taken = h.events_of("transition_taken");
    let last = taken.last().expect("a transition");
    assert_eq!(last["to"], "late", "{taken:?}");
    assert_eq!(last["cause"]["rule"], "review_timeout", "{last}");
    // Decided (rejected) before the deadline: the rejection arm, not the timeout arm.
    let early = VirtualClock::new(start + 3_600_000, Vec::new());
    let rejected = h
        .engine
        .resume(
            &p,
            r.state,
            Some(ReviewDecision::Reject {
                reason: "no".into(),
            }),
            h.ctx(&cancel).waiter(&early),
        )
        .await;
    assert_eq!(
        completed(&rejected),
        (ExitStatus::Failure, "escalate".into())
    );
}
