//! Issue 5: fork/join merges, sub-workflows, review decisions and handlers, rubric and
//! consensus boundaries.

use super::*;
use hensu_runtime::review_handlers::{PendingReview, pending_review};

// ---------------------------------------------------------------------------------------------
// Fork / join

fn fork_wf(
    targets: &[&str],
    strategy: MergeStrategy,
    writes: &[&str],
    exports: &[&str],
    fail_on_error: bool,
) -> Workflow {
    let mut nodes = vec![Node::Fork(ForkNode {
        id: "f".into(),
        targets: targets.iter().map(|t| t.to_string()).collect(),
        transition_rules: vec![success("j")],
        ..ForkNode::default()
    })];
    for t in targets {
        nodes.push(node(
            t,
            &format!("Do {t} for {{topic}}"),
            &[],
            vec![success("j")],
        ));
    }
    nodes.push(Node::Join(JoinNode {
        id: "j".into(),
        await_targets: vec!["f".into()],
        merge_strategy: strategy,
        writes: writes.iter().map(|s| s.to_string()).collect(),
        exports: exports.iter().map(|s| s.to_string()).collect(),
        fail_on_any_error: fail_on_error,
        transition_rules: vec![success("done"), failure(Some("failed"))],
        ..JoinNode::default()
    }));
    nodes.push(end("done", ExitStatus::Success));
    nodes.push(end("failed", ExitStatus::Failure));
    workflow("f", nodes)
}

/// Branch `t` writes its output under `t` (legacy "output under node id").
fn branch_answers() -> Script {
    Script::new()
        .on("a", &["alpha"])
        .fail("b", "b is down")
        .on("c", &["gamma"])
}

#[tokio::test]
async fn collect_all_keeps_failure_markers_and_fails_the_join_on_error() {
    let wf = fork_wf(
        &["a", "b", "c"],
        MergeStrategy::CollectAll,
        &["all"],
        &[],
        true,
    );
    let h = harness(&branch_answers());
    let r = h.run(&wf, json!({"topic": "T"})).await;
    assert_eq!(completed(&r), (ExitStatus::Failure, "failed".into()));
    assert_eq!(r.state.context["failed_branches"], json!(["b"]));
    assert_eq!(
        r.state.context["all"],
        json!({
            "a": {"a": "alpha"},
            "b": "FailureMarker[message=Sub-flow execution failed: No valid transition from b]",
            "c": {"c": "gamma"},
        })
    );
    // Branch steps in target order, then the fork's own step, then the join.
    assert_eq!(path(&r), ["a", "b", "c", "f", "j", "failed"]);
    let steps: Vec<u64> = r.state.history.iter().map(|s| s.step).collect();
    assert_eq!(steps, [1, 2, 3, 4, 5]);
    assert_eq!(r.state.steps, 5);
    assert_eq!(
        r.state.history[4].error.as_deref(),
        Some("Fork branches failed: [\"b\"]")
    );
    // Branch-local context never reaches the parent except through the merge.
    assert!(!r.state.context.contains_key("a"));

    let wf = fork_wf(
        &["a", "b", "c"],
        MergeStrategy::CollectAll,
        &["all"],
        &[],
        false,
    );
    let r = harness(&branch_answers())
        .run(&wf, json!({"topic": "T"}))
        .await;
    assert_eq!(completed(&r).1, "done", "failOnError = false");
}

#[tokio::test]
async fn first_successful_takes_the_first_target_in_declaration_order() {
    let wf = fork_wf(
        &["b", "c", "a"],
        MergeStrategy::FirstSuccessful,
        &["best"],
        &[],
        false,
    );
    let r = harness(&branch_answers())
        .run(&wf, json!({"topic": "T"}))
        .await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(r.state.context["best"], json!({"c": "gamma"}));

    // No successful branch: `best` is null and the join fails.
    let wf = fork_wf(
        &["b"],
        MergeStrategy::FirstSuccessful,
        &["best"],
        &[],
        false,
    );
    let r = harness(&branch_answers())
        .run(&wf, json!({"topic": "T"}))
        .await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(r.state.context["best"], Value::Null);
    assert_eq!(
        r.state.history.last().unwrap().error.as_deref(),
        Some("Join output missing: best")
    );
}

#[tokio::test]
async fn concatenate_joins_compact_json_of_successful_branches() {
    let wf = fork_wf(
        &["a", "b", "c"],
        MergeStrategy::Concatenate,
        &["all"],
        &[],
        false,
    );
    let r = harness(&branch_answers())
        .run(&wf, json!({"topic": "T"}))
        .await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(
        r.state.context["all"],
        json!("{\"a\":\"alpha\"}\n\n---\n\n{\"c\":\"gamma\"}")
    );
}

#[tokio::test]
async fn merge_maps_copies_each_write_and_later_targets_win() {
    let mut wf = fork_wf(
        &["a", "c"],
        MergeStrategy::MergeMaps,
        &["v", "t", "shared"],
        &[],
        true,
    );
    for id in ["a", "c"] {
        if let Some(Node::Standard(s)) = wf.nodes.get_mut(id) {
            s.writes = vec!["shared".into(), if id == "a" { "v" } else { "t" }.into()];
        }
    }
    let s = Script::new()
        .on("a", &[r#"{"v": 1, "shared": "from a"}"#])
        .on("c", &[r#"{"t": 2, "shared": "from c"}"#]);
    let h = harness(&s);
    let r = h.run(&wf, json!({"topic": "T"})).await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(r.state.context["v"], json!(1.0));
    assert_eq!(r.state.context["t"], json!(2.0));
    assert_eq!(r.state.context["shared"], json!("from c"));
    let warnings = h.events_of("transition_warning");
    assert_eq!(warnings.len(), 1);
    assert!(
        warnings[0]["message"]
            .as_str()
            .unwrap()
            .contains("'shared' from branch 'c' overwrites the value from branch 'a'")
    );

    // A write no branch produced: the join fails.
    let mut wf = fork_wf(&["a"], MergeStrategy::MergeMaps, &["v", "t"], &[], true);
    if let Some(Node::Standard(s)) = wf.nodes.get_mut("a") {
        s.writes = vec!["v".into()];
    }
    let s = Script::new().on("a", &["1"]);
    let r = harness(&s).run(&wf, json!({"topic": "T"})).await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(
        r.state.history.last().unwrap().error.as_deref(),
        Some("Join output missing: t")
    );
}

#[tokio::test]
async fn exports_filter_yields_and_underscore_keys_never_yield() {
    let mut wf = fork_wf(
        &["a"],
        MergeStrategy::CollectAll,
        &["all"],
        &["keep", "_secret"],
        true,
    );
    if let Some(Node::Standard(s)) = wf.nodes.get_mut("a") {
        s.writes = vec!["keep".into(), "drop".into(), "_secret".into()];
    }
    let s = Script::new().on(
        "a",
        &[r#"{"keep": "k", "drop": "d", "_secret": "s", "same": 1}"#],
    );
    let r = harness(&s)
        .run(&wf, json!({"topic": "T", "keep": "old"}))
        .await;
    assert_eq!(r.state.context["all"], json!({"a": {"keep": "k"}}));
    assert_eq!(
        r.state.context["keep"],
        json!("old"),
        "only the merge writes"
    );
    assert!(!r.state.context.contains_key("drop"));

    // Without exports: every new or changed key except `_…` and current_node.
    let wf2 = {
        let mut w = wf.clone();
        if let Some(Node::Join(j)) = w.nodes.get_mut("j") {
            j.exports.clear();
        }
        w
    };
    let r = harness(&s)
        .run(&wf2, json!({"topic": "T", "drop": "d"}))
        .await;
    assert_eq!(
        r.state.context["all"],
        json!({"a": {"keep": "k"}}),
        "drop is unchanged"
    );
}

#[tokio::test]
async fn join_timeout_bounds_the_whole_fork() {
    let mut wf = fork_wf(&["a", "c"], MergeStrategy::CollectAll, &["all"], &[], true);
    if let Some(Node::Join(j)) = wf.nodes.get_mut("j") {
        j.timeout_ms = 50;
    }
    let mut s = Script::new();
    s.delay = Some(Duration::from_secs(5));
    let r = harness(&s).run(&wf, json!({"topic": "T"})).await;
    assert_eq!(
        failed(&r).to_string(),
        "fork 'f': the branches did not reach join 'j' within its timeout of 50 ms"
    );
}

#[tokio::test]
async fn branches_run_concurrently_and_end_nodes_count_as_success() {
    let mut wf = fork_wf(&["a", "c"], MergeStrategy::CollectAll, &["all"], &[], true);
    // `c` ends its sub-flow at an end node instead of reaching the join: still SUCCESS.
    if let Some(Node::Standard(s)) = wf.nodes.get_mut("c") {
        s.transition_rules = vec![success("failed")];
    }
    let mut s = Script::new().on("a", &["A"]).on("c", &["C"]);
    s.delay = Some(Duration::from_millis(200));
    let started = std::time::Instant::now();
    let r = harness(&s).run(&wf, json!({"topic": "T"})).await;
    assert!(started.elapsed() < Duration::from_millis(390), "concurrent");
    assert_eq!(completed(&r).1, "done");
    assert_eq!(
        r.state.context["all"],
        json!({"a": {"a": "A"}, "c": {"c": "C"}})
    );
}

#[tokio::test]
async fn a_fork_without_a_join_is_a_clear_error() {
    let wf = workflow(
        "f",
        vec![
            Node::Fork(ForkNode {
                id: "f".into(),
                targets: vec!["e".into()],
                transition_rules: vec![success("e")],
                ..ForkNode::default()
            }),
            end("e", ExitStatus::Success),
        ],
    );
    let r = harness(&Script::new()).run(&wf, json!({})).await;
    assert_eq!(
        failed(&r).to_string(),
        "fork 'f': 'e' (the target of its success transition) is not a join node"
    );
}

#[tokio::test]
async fn branch_review_pause_fails_the_branch_and_takes_no_checkpoints() {
    struct Count(Mutex<usize>);
    impl ExecutionListener for Count {
        fn on_checkpoint(&self, _s: &RunState) {
            *self.0.lock().unwrap() += 1;
        }
    }
    let mut wf = fork_wf(&["a", "c"], MergeStrategy::CollectAll, &["all"], &[], true);
    if let Some(Node::Standard(s)) = wf.nodes.get_mut("a") {
        s.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        });
    }
    let count = Arc::new(Count(Mutex::new(0)));
    let h = harness_with(&Script::new(), |b| {
        b.review_handler(Arc::new(DeferredReview::new()))
            .listener(count.clone())
    });
    let r = h.run(&wf, json!({"topic": "T"})).await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(r.state.context["failed_branches"], json!(["a"]));
    // f and j only: the branch nodes take none.
    assert_eq!(*count.0.lock().unwrap(), 2);
}

// ---------------------------------------------------------------------------------------------
// Sub-workflows

fn sub_node(id: &str, child: &str, inputs: &[(&str, &str)], outputs: &[(&str, &str)]) -> Node {
    Node::SubWorkflow(SubWorkflowNode {
        id: id.into(),
        workflow_id: child.into(),
        input_mapping: inputs
            .iter()
            .map(|(c, p)| (c.to_string(), p.to_string()))
            .collect(),
        output_mapping: outputs
            .iter()
            .map(|(p, c)| (p.to_string(), c.to_string()))
            .collect(),
        transition_rules: vec![success("done"), failure(Some("failed"))],
        ..SubWorkflowNode::default()
    })
}

/// w0 → w1 → … → wN, each passing `x` down and back up; wN doubles nothing and just ends.
fn chain(n: usize) -> (Workflow, MapRepository) {
    let mut repo = MapRepository::new();
    let mut first = None;
    for i in 0..=n {
        let mut wf = if i < n {
            workflow(
                "call",
                vec![
                    sub_node("call", &format!("w{}", i + 1), &[("x", "x")], &[("x", "x")]),
                    end("done", ExitStatus::Success),
                    end("failed", ExitStatus::Failure),
                ],
            )
        } else {
            workflow("done", vec![end("done", ExitStatus::Success)])
        };
        wf.id = format!("w{i}");
        if i == 0 {
            first = Some(wf.clone());
        }
        repo.insert(wf);
    }
    (first.unwrap(), repo)
}

#[tokio::test]
async fn sub_workflow_depth_16_passes_and_17_fails() {
    let (w0, repo) = chain(16);
    let h = harness_with(&Script::new(), |b| b.workflows(Arc::new(repo)));
    let r = h.run(&w0, json!({"x": 7})).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(r.state.context["x"], json!(7));

    let (w0, repo) = chain(17);
    let h = harness_with(&Script::new(), |b| b.workflows(Arc::new(repo)));
    let r = h.run(&w0, json!({"x": 7})).await;
    assert_eq!(
        failed(&r).to_string(),
        "sub-workflow node 'call': maximum sub-workflow depth 16 exceeded: this workflow already runs at depth 16, so it cannot start 'w17'"
    );
}

#[tokio::test]
async fn sub_workflow_maps_inputs_and_outputs_and_propagates_tenant_and_depth() {
    let mut child = workflow(
        "work",
        vec![
            node(
                "work",
                "Child sees {draft}/{secret}/{_tenant_id}/{_sub_workflow_depth}",
                &["summary"],
                vec![success("end")],
            ),
            end("end", ExitStatus::Failure),
        ],
    );
    child.id = "child".into();
    let parent = workflow(
        "call",
        vec![
            sub_node(
                "call",
                "child",
                &[("draft", "notes")],
                &[("tl_dr", "summary"), ("nothing", "absent")],
            ),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let repo: MapRepository = [child].into_iter().collect();
    let s = Script::new().on("work", &["short"]);
    let h = harness_with(&s, |b| b.workflows(Arc::new(repo)));
    let r = h
        .run(
            &parent,
            json!({"notes": "N", "secret": "S", "_tenant_id": "acme"}),
        )
        .await;
    // A child ending at a FAILURE end node still makes the parent node SUCCESS.
    assert_eq!(completed(&r).1, "done");
    assert!(s.prompts_of("work")[0].starts_with("Child sees N//acme/1\n"));
    assert_eq!(r.state.context["tl_dr"], json!("short"));
    assert_eq!(r.state.context["nothing"], Value::Null);
    assert!(!r.state.context.contains_key("summary"), "no leakage");
    assert!(!r.state.context.contains_key("_sub_workflow_depth"));

    // A missing input is an error naming the parent key.
    let r = h.run(&parent, json!({"secret": "S"})).await;
    assert_eq!(
        failed(&r).to_string(),
        "sub-workflow node 'call': Missing input: notes"
    );
}

#[tokio::test]
async fn rejected_child_fails_the_node_and_unknown_children_are_named() {
    let mut child = workflow(
        "work",
        vec![
            node("work", "x", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    if let Some(Node::Standard(s)) = child.nodes.get_mut("work") {
        s.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        });
    }
    child.id = "child".into();
    let parent = workflow(
        "call",
        vec![
            sub_node("call", "child", &[], &[]),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let repo: MapRepository = [child].into_iter().collect();
    let h = harness_with(&Script::new(), |b| {
        b.workflows(Arc::new(repo))
            .review_handler(Arc::new(Fixed(ReviewDecision::Reject {
                reason: "nope".into(),
            })))
    });
    let r = h.run(&parent, json!({})).await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some("Sub-workflow failed: 'child' was rejected: nope")
    );

    let h = harness_with(&Script::new(), |b| {
        b.workflows(Arc::new(MapRepository::new()))
    });
    let r = h.run(&parent, json!({})).await;
    assert_eq!(
        failed(&r).to_string(),
        "sub-workflow node 'call': Sub-workflow not found: child"
    );
}

#[tokio::test]
async fn engine_futures_are_send() {
    fn assert_send<T: Send>(_: &T) {}
    let h = harness(&Script::new());
    let wf = workflow("done", vec![end("done", ExitStatus::Success)]);
    let cancel = CancelToken::new();
    let fut = h.engine.run(&wf, Context::default(), &cancel);
    assert_send(&fut);
    fut.await;
}

// ---------------------------------------------------------------------------------------------
// Review decisions

struct Fixed(ReviewDecision);

#[async_trait]
impl ReviewHandler for Fixed {
    async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Decided(self.0.clone())
    }
}

fn reviewed(rules: Vec<TransitionRule>, mode: ReviewMode) -> Workflow {
    let mut plan = node("plan", "Plan {goal}", &["plan"], rules);
    if let Node::Standard(s) = &mut plan {
        s.review_config = Some(ReviewConfig {
            mode,
            allow_backtrack: true,
            allow_edit: true,
        });
    }
    workflow(
        "intro",
        vec![
            node("intro", "Intro", &[], vec![success("plan")]),
            plan,
            node("exec", "Run {plan} {note}", &[], vec![success("done")]),
            end("done", ExitStatus::Success),
            end("cancelled", ExitStatus::Cancel),
        ],
    )
}

fn approval_arms() -> Vec<TransitionRule> {
    vec![
        approval(true, "exec"),
        TransitionRule::Approval {
            expected: false,
            target_node: "cancelled".into(),
            with_feedback: true,
        },
    ]
}

#[tokio::test]
async fn reviewer_verdict_outranks_the_agents_approved() {
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let s = Script::new().on("plan", &[r#"{"plan": "P", "approved": false}"#]);
    let h = harness_with(&s, |b| {
        b.review_handler(Arc::new(Fixed(ReviewDecision::Approve {
            edits: Some(ctx(json!({"note": "edited"}))),
        })))
    });
    let r = h.run(&wf, json!({"goal": "G"})).await;
    assert_eq!(path(&r), ["intro", "plan", "exec", "done"]);
    assert_eq!(s.prompts_of("exec"), ["Run P edited"]);
    let t = &h.events_of("transition_taken")[1];
    assert_eq!(t["cause"]["from_review"], json!(true));
}

#[tokio::test]
async fn reject_routes_through_an_arm_or_ends_the_run() {
    let reject = || {
        Arc::new(Fixed(ReviewDecision::Reject {
            reason: "too vague".into(),
        }))
    };
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let s = Script::new().on("plan", &[r#"{"plan": "P", "approved": true}"#]);
    let r = harness_with(&s, |b| b.review_handler(reject()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Cancel, "cancelled".into()));
    assert_eq!(r.state.context["recommendation"], json!("too vague"));

    // Without an onRejection arm the rejection is terminal.
    let wf = reviewed(vec![success("exec")], ReviewMode::Required);
    let r = harness_with(&s, |b| b.review_handler(reject()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(
        r.outcome,
        RunOutcome::Rejected {
            reason: "too vague".into()
        }
    );
    assert_eq!(r.state.phase, ExecutionPhase::Terminal);

    // Approve on a node without approval arms: its success rule fires.
    let r = harness(&s).run(&wf, json!({"goal": "G"})).await;
    assert_eq!(path(&r), ["intro", "plan", "exec", "done"]);
}

#[tokio::test]
async fn backtrack_goes_to_the_target_with_the_reason_as_feedback() {
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let s = Script::new().on("plan", &[r#"{"plan": "P"}"#]);
    let calls = Arc::new(Mutex::new(0));
    struct Once(Arc<Mutex<i32>>);
    #[async_trait]
    impl ReviewHandler for Once {
        async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
            let mut n = self.0.lock().unwrap();
            *n += 1;
            ReviewOutcome::Decided(if *n == 1 {
                ReviewDecision::Backtrack {
                    target: "intro".into(),
                    edits: Some(ctx(json!({"goal": "G2"}))),
                    reason: "start over".into(),
                }
            } else {
                ReviewDecision::Approve { edits: None }
            })
        }
    }
    let h = harness_with(&s, |b| b.review_handler(Arc::new(Once(calls.clone()))));
    let r = h.run(&wf, json!({"goal": "G"})).await;
    assert_eq!(path(&r), ["intro", "plan", "intro", "plan", "exec", "done"]);
    assert_eq!(r.state.backtracks[0].kind, BacktrackKind::Manual);
    assert_eq!(r.state.backtracks[0].reason, "start over");
    assert!(s.prompts_of("intro")[1].contains("### Previous Feedback\nstart over"));
    assert_eq!(s.prompts_of("plan")[1].lines().next(), Some("Plan G2"));
}

#[tokio::test]
async fn optional_review_only_asks_on_failure() {
    let wf = reviewed(
        vec![success("exec"), failure(Some("cancelled"))],
        ReviewMode::Optional,
    );
    let asked = Arc::new(Mutex::new(Vec::<PendingReview>::new()));
    let sink = asked.clone();
    let handler = Arc::new(DeferredReview::with_sink(move |p| {
        sink.lock().unwrap().push(p.clone())
    }));
    let s = Script::new().on("plan", &["P"]);
    let r = harness_with(&s, |b| b.review_handler(handler.clone()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(completed(&r).1, "done");
    assert!(asked.lock().unwrap().is_empty());

    let s = Script::new().fail("plan", "boom");
    let r = harness_with(&s, |b| b.review_handler(handler.clone()))
        .run(&wf, json!({"goal": "G"}))
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    assert_eq!(asked.lock().unwrap()[0].node_id, "plan");
}

#[tokio::test]
async fn pending_review_pauses_and_resumes_from_a_serialized_state() {
    let wf = Arc::new(reviewed(approval_arms(), ReviewMode::Required));
    let s = Script::new().on("plan", &[r#"{"plan": "P"}"#]);
    let h = harness_with(&s, |b| b.review_handler(Arc::new(DeferredReview::new())));
    let prepared = h.engine.prepare(wf.clone()).unwrap();
    let cancel = CancelToken::new();
    let r = h
        .engine
        .run_prepared(&prepared, ctx(json!({"goal": "G"})), &cancel)
        .await;
    assert_eq!(r.outcome, RunOutcome::Paused);
    let (node, corr) = pending_review(&r.state).unwrap();
    assert_eq!(node, "plan");
    assert!(corr.starts_with("review-"));
    assert_eq!(r.state.history.len(), 1, "plan is not in the history yet");
    // The durable store round-trips the state through JSON.
    let saved = serde_json::to_string(&r.state).unwrap();
    let state: RunState = serde_json::from_str(&saved).unwrap();

    // Resume without a decision: the handler is asked again and the run pauses again.
    let again = h
        .engine
        .resume(&prepared, state.clone(), None, &cancel)
        .await;
    assert_eq!(again.outcome, RunOutcome::Paused);
    assert_ne!(pending_review(&again.state).unwrap().1, corr);

    let ok = h
        .engine
        .resume(
            &prepared,
            state.clone(),
            Some(ReviewDecision::Approve { edits: None }),
            &cancel,
        )
        .await;
    assert_eq!(path(&ok), ["intro", "plan", "exec", "done"]);
    assert_eq!(
        s.prompts_of("plan").len(),
        1,
        "the agent is not called again"
    );
    assert_eq!(s.prompts_of("exec"), ["Run P "]);

    let rejected = h
        .engine
        .resume(
            &prepared,
            state.clone(),
            Some(ReviewDecision::Reject {
                reason: "no".into(),
            }),
            &cancel,
        )
        .await;
    assert_eq!(completed(&rejected).1, "cancelled");

    let back = h
        .engine
        .resume(
            &prepared,
            state,
            Some(ReviewDecision::Backtrack {
                target: "intro".into(),
                edits: None,
                reason: "again".into(),
            }),
            &cancel,
        )
        .await;
    // Back to intro, then plan pauses again.
    assert_eq!(back.outcome, RunOutcome::Paused);
    assert_eq!(back.state.path(), ["intro", "plan", "intro"]);

    // A finished state cannot be resumed.
    let done = h.engine.resume(&prepared, ok.state, None, &cancel).await;
    assert_eq!(failed(&done), RuntimeError::AlreadyTerminal);
}

// ---------------------------------------------------------------------------------------------
// Interactive terminal reviewer (piped input)

#[derive(Clone, Default)]
struct Out(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Out {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Out {
    fn text(&self) -> String {
        String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
    }
}

async fn interactive(input: &str, editor: Option<&str>) -> (RunResult, String, Script) {
    let wf = reviewed(approval_arms(), ReviewMode::Required);
    let out = Out::default();
    let mut reviewer = InteractiveReview::new(std::io::Cursor::new(input.to_string()), out.clone());
    if let Some(e) = editor {
        reviewer = reviewer.with_editor(e);
    }
    let s = Script::new().on("plan", &[r#"{"plan": "old plan"}"#]);
    let r = harness_with(&s, |b| b.review_handler(Arc::new(reviewer)))
        .run(&wf, json!({"goal": "G"}))
        .await;
    (r, out.text(), s)
}

#[tokio::test]
async fn interactive_review_approve_reject_backtrack_and_eof() {
    let (r, out, _) = interactive("a\n", None).await;
    assert_eq!(completed(&r).1, "done");
    assert!(
        out.contains("── review of node 'plan' (REQUIRED) ──"),
        "{out}"
    );
    assert!(out.contains("  {\"plan\": \"old plan\"}"));
    assert!(out.contains("[a] approve  [r] reject  [b] backtrack  [e] edit context > "));

    let (r, _, _) = interactive("what\nr\nnot this\n", None).await;
    assert_eq!(completed(&r).1, "cancelled");
    assert_eq!(r.state.context["recommendation"], json!("not this"));

    // Backtrack by number (1 = intro), then approve the second review.
    let (r, out, _) = interactive("b\n1\nredo it\na\n", None).await;
    assert!(out.contains("  1. intro\n  2. plan (this node)\n"), "{out}");
    assert_eq!(path(&r), ["intro", "plan", "intro", "plan", "exec", "done"]);

    // End of input rejects; without an arm that would end the run.
    let (r, _, _) = interactive("", None).await;
    assert_eq!(completed(&r).1, "cancelled");
    assert_eq!(
        r.state.context["recommendation"],
        json!("review aborted: no reviewer input")
    );
}

#[tokio::test]
async fn interactive_review_edits_the_context_in_the_editor() {
    let (r, out, s) = interactive(
        "e\na\n",
        Some("sed -i 's/old plan/new plan/; s/\"G\"/\"G!\"/'"),
    )
    .await;
    assert!(out.contains("2 values changed: goal, plan"), "{out}");
    assert_eq!(completed(&r).1, "done");
    assert_eq!(s.prompts_of("exec"), ["Run new plan "]);
    assert_eq!(r.state.context["goal"], json!("G!"));

    // A broken edit is discarded and the reviewer is asked again.
    let (r, out, s) = interactive("e\na\n", Some("sh -c 'echo nope > \"$1\"' x")).await;
    assert!(out.contains("edit discarded: invalid JSON"), "{out}");
    assert_eq!(completed(&r).1, "done");
    assert_eq!(s.prompts_of("exec"), ["Run old plan "]);
}

// ---------------------------------------------------------------------------------------------
// Rubric boundaries (§5.9)

fn rubric_node(id: &str, rubric_id: &str, rules: Vec<TransitionRule>) -> Node {
    let rubric = parse_rubric(
        rubric_id,
        &format!("# Rubric: {rubric_id}\n\n## Metadata\n- pass_threshold: 70\n\n## Criteria\n\n### Clarity (weight: 100)\n\n#### Clear\n- points: 10\n- evaluation: Is clear.\n"),
    )
    .unwrap();
    let mut n = node(id, id, &["text"], rules);
    if let Node::Standard(s) = &mut n {
        s.rubric = Some(rubric);
    }
    n
}

#[tokio::test]
async fn rubric_critical_moderate_and_scaled_scores() {
    let wf = workflow(
        "start",
        vec![
            node("start", "s", &[], vec![success("r1")]),
            rubric_node("r1", "one", vec![success("r2")]),
            rubric_node("r2", "two", vec![success("done")]),
            end("done", ExitStatus::Success),
        ],
    );
    // Critical (< 30) at r2: back to the first history node with a rubric (r1).
    let s = Script::new()
        .on("r1", &[r#"{"text": "a", "score": 90}"#])
        .on(
            "r2",
            &[
                r#"{"text": "b", "score": 29.9}"#,
                r#"{"text": "b", "score": 95}"#,
            ],
        );
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["start", "r1", "r2", "r1", "r2", "done"]);
    assert_eq!(r.state.backtracks[0].to, "r1");
    assert_eq!(
        r.state.context["backtrack_reason"],
        json!("Critical rubric failure: 29.9")
    );

    // Moderate (< 60): the latest history node with a different rubric.
    let s = Script::new()
        .on("r1", &[r#"{"text": "a", "score": 90}"#])
        .on(
            "r2",
            &[
                r#"{"text": "b", "score": 59}"#,
                r#"{"text": "b", "score": 80}"#,
            ],
        );
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["start", "r1", "r2", "r1", "r2", "done"]);
    assert_eq!(
        r.state.context["backtrack_reason"],
        json!("Moderate rubric failure: 59.0")
    );

    // 0..1 scores are scaled: 0.75 → 75 passes; 0.5 → 50 with no earlier rubric → retry.
    let s = Script::new()
        .on("r1", &[r#"{"text": "a", "score": 0.75}"#])
        .on("r2", &[r#"{"text": "b", "score": 1}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(r.state.history[1].rubric.as_ref().unwrap().score, 75.0);
    assert!(r.state.backtracks.is_empty());
    let s = Script::new()
        .on(
            "r1",
            &[
                r#"{"text": "a", "score": 0.5}"#,
                r#"{"text": "a", "score": 70}"#,
            ],
        )
        .on("r2", &[r#"{"text": "b", "score": 100}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(r.state.backtracks[0].to, "r1");
    assert_eq!(r.state.backtracks[0].reason, "Rubric score: 50.0");

    // An explicit score rule that matches wins over auto-backtrack.
    let wf = workflow(
        "r1",
        vec![
            rubric_node(
                "r1",
                "one",
                vec![score_rule(
                    vec![(ComparisonOperator::Lt, 70.0, "done")],
                    false,
                )],
            ),
            end("done", ExitStatus::Failure),
        ],
    );
    let s = Script::new().on("r1", &[r#"{"text": "a", "score": 10}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(path(&r), ["r1", "done"]);
}

// ---------------------------------------------------------------------------------------------
// Consensus boundaries (§5.6)

#[tokio::test]
async fn consensus_boundaries() {
    // 3 branches @0.5 need 2 approvals (2 > floor(1.5) = 1).
    let wf = parallel(
        ConsensusStrategy::MajorityVote,
        None,
        &[1.0, 1.0, 1.0],
        None,
    );
    let s = branch_script(&[
        r#"{"approved": true}"#,
        r#"{"approved": true}"#,
        r#"{"approved": false}"#,
    ]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "yes");

    // Weighted: 0-score approvals weigh nothing → ratio 0 → not reached.
    let wf = parallel(ConsensusStrategy::WeightedVote, None, &[1.0, 1.0], None);
    let s = branch_script(&[r#"{"approved": true}"#, r#"{"approved": true}"#]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(
        r.state.history[0].error.as_deref(),
        Some(
            "Weighted vote: approve=0.00, reject=0.00, ratio=0.00 (threshold=0.50). Consensus not reached."
        )
    );
    // ratio exactly at the threshold is reached (>=).
    let s = branch_script(&[
        r#"{"approved": true, "score": 50}"#,
        r#"{"approved": false, "score": 50}"#,
    ]);
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "yes");

    // A failed branch votes REJECT with empty yields and is listed in failed_branches.
    let wf = parallel(ConsensusStrategy::Unanimous, None, &[1.0, 1.0], None);
    let mut s = Script::new();
    s.custom = Some(Arc::new(|req: &AgentRequest<'_>| {
        if req.prompt.contains(" as 1") {
            Err(AgentError::new("scripted", "down"))
        } else {
            Ok(AgentResponse::text(r#"{"approved": true}"#))
        }
    }));
    let r = harness(&s).run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(r.state.context["failed_branches"], json!(["b1"]));
    assert!(
        r.state.context["consensus_feedback:vote"]
            .as_str()
            .unwrap()
            .contains("b1 (REJECT): Branch execution failed: down")
    );

    // Per-branch timeout: a slow branch fails, the others still vote.
    let wf = parallel(ConsensusStrategy::MajorityVote, None, &[1.0], None);
    let mut s = branch_script(&[r#"{"approved": true}"#]);
    s.delay = Some(Duration::from_secs(5));
    let h = harness_with(&s, |b| {
        b.options(RunOptions {
            branch_timeout: Duration::from_millis(30),
            ..RunOptions::default()
        })
    });
    let r = h.run(&wf, json!({})).await;
    assert_eq!(completed(&r).1, "no");
    assert_eq!(r.state.context["failed_branches"], json!(["b0"]));
}
