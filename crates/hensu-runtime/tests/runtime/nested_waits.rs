//! Waits inside sub-workflow children and fork branches (docs/language.md, *Timers and
//! signals*): they suspend the whole run (the saved state says every wait and its wake time),
//! and each resume moves on only the flows whose time came or whose signal arrived; a fork
//! joins once, when every branch is done; a signal is taken once per run, whichever flow
//! waits for it.

use super::*;

/// A store's waiter without a store: signals are a list the test appends to, time is what the
/// test sets, and a wait not due suspends (as `hensu-host`'s durable waiter does).
struct Durable {
    now: std::sync::atomic::AtomicU64,
    signals: Mutex<Vec<(String, Value)>>,
}

impl Durable {
    fn at(now: u64) -> Self {
        Durable {
            now: now.into(),
            signals: Mutex::new(Vec::new()),
        }
    }
    fn set(&self, now: u64) {
        self.now.store(now, std::sync::atomic::Ordering::SeqCst);
    }
    fn send(&self, name: &str, payload: Value) {
        self.signals.lock().unwrap().push((name.into(), payload));
    }
}

#[async_trait]
impl Waiter for Durable {
    fn now_ms(&self) -> u64 {
        self.now.load(std::sync::atomic::Ordering::SeqCst)
    }
    async fn wait(&self, r: WaitRequest<'_>) -> Result<WaitAnswer, RuntimeError> {
        assert!(r.may_suspend, "{} may suspend", r.node_id);
        if let Some(name) = r.signal {
            let signals = self.signals.lock().unwrap().clone();
            let next = signals
                .into_iter()
                .enumerate()
                .find(|(i, (n, _))| n == name && !r.taken.contains(&(*i as u64)));
            if let Some((seq, (_, payload))) = next {
                return Ok(WaitAnswer::Signal {
                    seq: seq as u64,
                    payload,
                });
            }
        }
        match r.wake_at_ms {
            Some(w) if w <= self.now_ms() => Ok(WaitAnswer::Elapsed),
            _ => Ok(WaitAnswer::Suspend),
        }
    }
}

fn timer(id: &str, ms: u64, next: &str) -> Node {
    Node::Wait(WaitNode {
        id: id.into(),
        wait: WaitFor::Duration { ms },
        writes: Vec::new(),
        transition_rules: vec![success(next)],
    })
}

fn signal(id: &str, name: &str, writes: &str, next: &str) -> Node {
    Node::Wait(WaitNode {
        id: id.into(),
        wait: WaitFor::Signal {
            name: name.into(),
            timeout_ms: None,
        },
        writes: vec![writes.into()],
        transition_rules: vec![success(next)],
    })
}

/// Fork `f` over `branches` (each a chain of nodes ending at join `j`, its first node the
/// target); the join collects every branch's outputs into `all` and exports `exports`.
fn forked(branches: Vec<Vec<Node>>, exports: &[&str]) -> Workflow {
    let targets = branches
        .iter()
        .map(|b| b[0].id().to_string())
        .collect::<Vec<_>>();
    let mut nodes = vec![Node::Fork(ForkNode {
        id: "f".into(),
        targets,
        transition_rules: vec![success("j")],
        ..ForkNode::default()
    })];
    nodes.extend(branches.into_iter().flatten());
    nodes.push(Node::Join(JoinNode {
        id: "j".into(),
        await_targets: vec!["f".into()],
        merge_strategy: MergeStrategy::CollectAll,
        writes: vec!["all".into()],
        exports: exports.iter().map(|s| s.to_string()).collect(),
        fail_on_any_error: true,
        transition_rules: vec![success("done"), failure(Some("failed"))],
        ..JoinNode::default()
    }));
    nodes.push(end("done", ExitStatus::Success));
    nodes.push(end("failed", ExitStatus::Failure));
    workflow("f", nodes)
}

/// The state as a store would give it back.
fn stored(state: &RunState) -> RunState {
    serde_json::from_value(serde_json::to_value(state).unwrap()).unwrap()
}

fn waits(state: &RunState) -> Vec<(String, Option<u64>, Option<String>)> {
    waiting_waits(state)
        .into_iter()
        .map(|w| (w.node_id, w.wake_at_ms, w.signal))
        .collect()
}

const HOUR: u64 = 3_600_000;
const T0: u64 = 1_000_000;

#[tokio::test]
async fn a_timer_in_a_child_suspends_the_run_and_resumes_at_its_time() {
    let child = workflow(
        "work",
        vec![
            node("work", "child {topic}", &[], vec![success("pause")]),
            timer("pause", HOUR, "after"),
            node("after", "after", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    let mut child = child;
    child.id = "child".into();
    let parent = parent_of("child", &[]);
    let repo: MapRepository = [child].into_iter().collect();
    let s = Script::new()
        .on("p0", &["P"])
        .on("work", &["W"])
        .on("after", &["A"]);
    let h = harness_with(&s, |b| b.workflows(Arc::new(repo)));
    let clock = Durable::at(T0);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(
            &parent,
            ctx(json!({"topic": "T"})),
            h.ctx(&cancel).waiter(&clock),
        )
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(
        r.state.current_node, "sub",
        "paused at the sub-workflow node"
    );
    let all = waiting_waits(&r.state);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].node_id, "pause");
    assert_eq!(all[0].within, ["sub"]);
    assert_eq!(all[0].branch, None);
    assert_eq!(all[0].wake_at_ms, Some(T0 + HOUR));

    // Woken early (say by another wait's time): still waiting, for the same time.
    let p = h.engine.prepare(Arc::new(parent)).unwrap();
    clock.set(T0 + HOUR / 2);
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(waits(&r.state), [("pause".into(), Some(T0 + HOUR), None)]);

    // At its time: the child continues after the wait, the parent after the child.
    clock.set(T0 + HOUR);
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert!(waiting_waits(&r.state).is_empty());
    assert_eq!(
        s.prompts_of("work").len(),
        1,
        "the child's first node ran once"
    );
    assert_eq!(s.prompts_of("after").len(), 1);
    assert_eq!(path(&r), ["p0", "sub", "done"]);
}

#[tokio::test]
async fn branches_on_different_timers_each_go_on_at_their_time_and_join_once() {
    let wf = forked(
        vec![
            vec![
                timer("ta", HOUR, "a"),
                node("a", "a", &[], vec![success("j")]),
            ],
            vec![
                timer("tb", 2 * HOUR, "b"),
                node("b", "b", &[], vec![success("j")]),
            ],
            vec![node("c", "c", &[], vec![success("j")])],
        ],
        &[],
    );
    let s = Script::new()
        .on("a", &["alpha"])
        .on("b", &["beta"])
        .on("c", &["gamma"]);
    let h = harness(&s);
    let clock = Durable::at(T0);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(r.state.current_node, "f");
    assert_eq!(
        waits(&r.state),
        [
            ("ta".into(), Some(T0 + HOUR), None),
            ("tb".into(), Some(T0 + 2 * HOUR), None)
        ]
    );
    let p = h.engine.prepare(Arc::new(wf)).unwrap();

    // The first timer: its branch ends, the other keeps waiting, nothing joins yet.
    clock.set(T0 + HOUR);
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(waits(&r.state), [("tb".into(), Some(T0 + 2 * HOUR), None)]);
    assert_eq!(s.prompts_of("a").len(), 1);
    assert!(s.prompts_of("b").is_empty());
    assert!(!r.state.context.contains_key("all"), "not joined yet");

    // The second: the fork joins, once, with every branch's result.
    clock.set(T0 + 2 * HOUR);
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["all"],
        json!({"ta": {"a": "alpha"}, "tb": {"b": "beta"}, "c": {"c": "gamma"}})
    );
    assert_eq!(
        h.events_of("node_completed")
            .iter()
            .filter(|e| e["node_id"] == "j")
            .count(),
        1
    );
    for n in ["a", "b", "c"] {
        assert_eq!(s.prompts_of(n).len(), 1, "{n} ran once");
    }
    let joined: Vec<String> = path(&r)
        .into_iter()
        .filter(|n| n == "j" || n == "f")
        .collect();
    assert_eq!(joined, ["f", "j"], "one fork step, one join");
}

#[tokio::test]
async fn a_signal_sent_before_its_branch_waits_is_kept_and_each_branch_takes_its_own() {
    let wf = forked(
        vec![
            vec![
                node("a", "a", &[], vec![success("sa")]),
                signal("sa", "left", "left_said", "j"),
            ],
            vec![signal("sb", "right", "right_said", "j")],
        ],
        &["left_said", "right_said"],
    );
    let s = Script::new().on("a", &["alpha"]);
    let h = harness(&s);
    let clock = Durable::at(T0);
    // Sent before the run started: branch `sb` takes it on arrival.
    clock.send("right", json!("R"));
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(waits(&r.state), [("sa".into(), None, Some("left".into()))]);
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    // Another name changes nothing; its own name moves the branch on.
    clock.send("unrelated", json!(0));
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    clock.send("left", json!("L"));
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["all"],
        json!({"a": {"left_said": "L"}, "sb": {"right_said": "R"}})
    );
    // The run took both, once: a later wait of the run never takes them again.
    let mut taken = r.state.signals_taken.clone();
    taken.sort_unstable();
    assert_eq!(taken, [0, 2]);
    assert_eq!(s.prompts_of("a").len(), 1);
}

#[tokio::test]
async fn two_branches_waiting_for_one_name_never_take_the_same_signal() {
    let wf = forked(
        vec![
            vec![signal("x", "go", "x_said", "j")],
            vec![signal("y", "go", "y_said", "j")],
        ],
        &["x_said", "y_said"],
    );
    let s = Script::new();
    let h = harness(&s);
    let clock = Durable::at(T0);
    clock.send("go", json!("first"));
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    // One branch took the signal; the other waits for the next one.
    assert_eq!(r.outcome, RunOutcome::Paused);
    let left = waits(&r.state);
    assert_eq!(left.len(), 1, "{left:?}");
    assert_eq!(left[0].2.as_deref(), Some("go"));
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    // A resume before the next signal: the one already taken is not taken again.
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    clock.send("go", json!("second"));
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    let all = &r.state.context["all"];
    let mut said = [all["x"]["x_said"].clone(), all["y"]["y_said"].clone()];
    said.sort_by_key(|v| v.to_string());
    assert_eq!(said, [json!("first"), json!("second")]);
}

/// A branch with a pending review and a branch on a timer: the run shows the review and wakes
/// at the timer; the timer's branch ends then, the review keeps waiting with its correlation
/// id, and its answer finishes the fork.
#[tokio::test]
async fn a_timer_branch_and_a_review_branch_wait_side_by_side() {
    struct Deferred;
    #[async_trait]
    impl ReviewHandler for Deferred {
        async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
            ReviewOutcome::Pending {
                correlation_id: "review-1".into(),
            }
        }
    }
    let mut wf = forked(
        vec![
            vec![node("a", "a", &[], vec![success("j")])],
            vec![
                timer("t", HOUR, "b"),
                node("b", "b", &[], vec![success("j")]),
            ],
        ],
        &[],
    );
    if let Some(Node::Standard(n)) = wf.nodes.get_mut("a") {
        n.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        });
    }
    let s = Script::new().on("a", &["alpha"]).on("b", &["beta"]);
    let h = harness_with(&s, |b| b.review_handler(Arc::new(Deferred)));
    let clock = Durable::at(T0);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(pending_review(&r.state), Some(("a", "review-1")));
    assert_eq!(waits(&r.state), [("t".into(), Some(T0 + HOUR), None)]);
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    clock.set(T0 + HOUR);
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(pending_review(&r.state), Some(("a", "review-1")));
    assert!(
        waiting_waits(&r.state).is_empty(),
        "the timer's branch ended"
    );
    assert_eq!(s.prompts_of("b").len(), 1);
    let mut state = stored(&r.state);
    assert!(route_review(&mut state, "review-1"));
    let r = h
        .engine
        .resume(
            &p,
            state,
            Some(ReviewDecision::Approve { edits: None }),
            h.ctx(&cancel).waiter(&clock),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["all"],
        json!({"a": {"a": "alpha"}, "t": {"b": "beta"}})
    );
    assert_eq!(s.prompts_of("a").len(), 1);
    assert_eq!(s.prompts_of("b").len(), 1);
}

/// `hensuc test`'s virtual clock: waits in branches and children move it, nothing suspends.
#[tokio::test]
async fn a_virtual_clock_runs_waits_in_branches_without_suspending() {
    let wf = forked(
        vec![
            vec![timer("ta", HOUR, "j")],
            vec![signal("sb", "go", "said", "j")],
        ],
        &["said"],
    );
    let clock = VirtualClock::new(
        T0,
        vec![ScheduledSignal {
            name: "go".into(),
            at_ms: 3 * HOUR,
            payload: json!("yes"),
        }],
    );
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(r.state.context["all"]["sb"], json!({"said": "yes"}));
    assert_eq!(clock.elapsed_ms(), 3 * HOUR);
}

/// On the virtual clock a branch's waits count from when the branch reaches them: a second
/// timer after a first one ends at their sum, and the other branch's timeout counts from the
/// fork, however the branches interleave.
#[tokio::test]
async fn a_virtual_clock_keeps_each_branch_on_its_own_time() {
    let wf = forked(
        vec![
            vec![Node::Wait(WaitNode {
                id: "sb".into(),
                wait: WaitFor::Signal {
                    name: "go".into(),
                    timeout_ms: Some(4 * HOUR),
                },
                writes: vec!["said".into()],
                transition_rules: vec![success("j"), failure(Some("j"))],
            })],
            vec![timer("t1", 2 * HOUR, "t2"), timer("t2", HOUR, "j")],
        ],
        &["said"],
    );
    // 2026-01-01T00:00:00Z
    let start = 1_767_225_600_000;
    let clock = VirtualClock::new(start, Vec::new());
    let s = Script::new();
    let h = harness(&s);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert!(
        matches!(r.outcome, RunOutcome::Completed { .. }),
        "{:?}",
        r.outcome
    );
    let output = |id: &str| {
        r.state
            .history
            .iter()
            .find(|h| h.node_id == id)
            .map(|h| (h.output.clone(), h.error.clone()))
            .unwrap()
    };
    assert_eq!(output("t1").0, Some(json!("2026-01-01T02:00:00.000Z")));
    assert_eq!(output("t2").0, Some(json!("2026-01-01T03:00:00.000Z")));
    assert_eq!(
        output("sb").1.as_deref(),
        Some("signal `go` did not come within 14400s")
    );
    assert_eq!(clock.elapsed_ms(), 4 * HOUR);
}

/// A child inside a fork branch that waits: the branch stops with the child saved in it, the
/// run pauses at the fork, and the child continues at its time.
#[tokio::test]
async fn a_child_waiting_inside_a_fork_branch_suspends_the_run() {
    let mut child = workflow(
        "nap",
        vec![
            timer("nap", HOUR, "woke"),
            node("woke", "woke", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    child.id = "napper".into();
    let wf = forked(
        vec![
            vec![Node::SubWorkflow(SubWorkflowNode {
                id: "call".into(),
                workflow_id: "napper".into(),
                transition_rules: vec![success("j")],
                ..SubWorkflowNode::default()
            })],
            vec![node("c", "c", &[], vec![success("j")])],
        ],
        &[],
    );
    let repo: MapRepository = [child].into_iter().collect();
    let s = Script::new().on("woke", &["W"]).on("c", &["C"]);
    let h = harness_with(&s, |b| b.workflows(Arc::new(repo)));
    let clock = Durable::at(T0);
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&wf, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    let all = waiting_waits(&r.state);
    assert_eq!(all.len(), 1, "{all:?}");
    assert_eq!(all[0].node_id, "nap");
    assert_eq!(all[0].within, ["f", "call"]);
    assert_eq!(all[0].branch.as_deref(), Some("call"));
    assert_eq!(all[0].wake_at_ms, Some(T0 + HOUR));
    let p = h.engine.prepare(Arc::new(wf)).unwrap();
    clock.set(T0 + HOUR);
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(s.prompts_of("woke").len(), 1);
    assert_eq!(
        s.prompts_of("c").len(),
        1,
        "the ended branch is not run again"
    );
}

/// The signal a child took is the run's: after the child ended and the run was stored and
/// resumed, the parent's wait for the same name does not take it again.
#[tokio::test]
async fn a_signal_a_child_took_is_never_taken_again_by_its_parent() {
    let mut child = workflow(
        "gate",
        vec![
            signal("gate", "go", "said", "end"),
            end("end", ExitStatus::Success),
        ],
    );
    child.id = "approver".into();
    let parent = workflow(
        "call",
        vec![
            Node::SubWorkflow(SubWorkflowNode {
                id: "call".into(),
                workflow_id: "approver".into(),
                transition_rules: vec![success("again")],
                ..SubWorkflowNode::default()
            }),
            signal("again", "go", "again_said", "done"),
            end("done", ExitStatus::Success),
        ],
    );
    let repo: MapRepository = [child].into_iter().collect();
    let s = Script::new();
    let h = harness_with(&s, |b| b.workflows(Arc::new(repo)));
    let clock = Durable::at(T0);
    clock.send("go", json!("once"));
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run(&parent, ctx(json!({})), h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(r.state.current_node, "again");
    assert_eq!(
        r.state.signals_taken,
        [0],
        "the child's signal, handed back"
    );
    let p = h.engine.prepare(Arc::new(parent)).unwrap();
    // A new process: nothing but the stored state knows the signal was taken.
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(
        r.outcome,
        RunOutcome::Paused,
        "still waiting for a second `go`"
    );
    clock.send("go", json!("twice"));
    let r = h
        .engine
        .resume(&p, stored(&r.state), None, h.ctx(&cancel).waiter(&clock))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(r.state.context["again_said"], json!("twice"));
}
