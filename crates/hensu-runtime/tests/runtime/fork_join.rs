//! Fork/join: the four merge strategies, exports, the join timeout, concurrency, branch reviews.

use super::*;

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
            "b": "FailureMarker[message=Sub-flow execution failed: No valid transition from b; rules tried: onSuccess: the node's status is FAILURE]",
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

// Paused time: two 200 ms branches take 200 ms of virtual time together, 400 ms one by one.
#[tokio::test(start_paused = true)]
async fn branches_run_concurrently_and_end_nodes_count_as_success() {
    let mut wf = fork_wf(&["a", "c"], MergeStrategy::CollectAll, &["all"], &[], true);
    // `c` ends its sub-flow at an end node instead of reaching the join: still SUCCESS.
    if let Some(Node::Standard(s)) = wf.nodes.get_mut("c") {
        s.transition_rules = vec![success("failed")];
    }
    let mut s = Script::new().on("a", &["A"]).on("c", &["C"]);
    s.delay = Some(Duration::from_millis(200));
    let started = tokio::time::Instant::now();
    let r = harness(&s).run(&wf, json!({"topic": "T"})).await;
    assert!(started.elapsed() < Duration::from_millis(400), "concurrent");
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
async fn a_review_pending_in_a_branch_pauses_the_run_at_the_fork_and_resumes_there() {
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
    /// A reviewer that always defers (a person answers later): the branch's review pauses.
    struct Deferred;
    #[async_trait]
    impl ReviewHandler for Deferred {
        async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
            ReviewOutcome::Pending {
                correlation_id: "review-1".into(),
            }
        }
    }
    let script = Script::new().on("a", &["alpha"]).on("c", &["gamma"]);
    let count = Arc::new(Count(Mutex::new(0)));
    let h = harness_with(&script, |b| b.review_handler(Arc::new(Deferred)));
    let r = h.run_with(&wf, json!({"topic": "T"}), count.as_ref()).await;
    // The run waits at the fork for the branch's review; nothing failed, nothing merged.
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    assert_eq!(r.state.current_node, "f");
    assert_eq!(r.state.steps, 0);
    assert_eq!(pending_review(&r.state), Some(("a", "review-1")));
    assert!(!r.state.context.contains_key("failed_branches"));
    let Some(Nested::Fork { node_id, branches }) = r.state.nested.as_deref() else {
        panic!("no saved branches: {:?}", r.state.nested);
    };
    assert_eq!(node_id, "f");
    let ended: Vec<_> = branches
        .iter()
        .map(|b| (b.target.as_str(), b.ended.clone()))
        .collect();
    assert_eq!(ended, [("a", None), ("c", Some(BranchEnd::Completed))]);
    // The fork's boundary only: the branch nodes take none.
    assert_eq!(*count.0.lock().unwrap(), 1);

    // The saved state survives serialization (a durable store) and resumes at the fork:
    // the approved branch continues after its review, the ended one is not run again.
    let saved: RunState = serde_json::from_value(serde_json::to_value(&r.state).unwrap()).unwrap();
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let approve = ReviewDecision::Approve { edits: None };
    let r = h
        .engine
        .resume(&p, saved, Some(approve), RunCtx::new(&CancelToken::new()))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["all"],
        json!({"a": {"a": "alpha"}, "c": {"c": "gamma"}})
    );
    assert_eq!(path(&r), ["a", "c", "f", "j", "done"]);
    assert_eq!(r.state.steps, 4);
    assert!(r.state.nested.is_none());
    assert_eq!(script.prompts_of("a").len(), 1);
    assert_eq!(script.prompts_of("c").len(), 1);
}

/// A fork after a first node `s`, whose branch `a` asks a reviewer that records the history it
/// is shown and defers.
fn fork_after_a_step() -> Workflow {
    let forked = fork_wf(&["a", "c"], MergeStrategy::CollectAll, &["all"], &[], true);
    let mut nodes = vec![node("s", "Start {topic}", &[], vec![success("f")])];
    nodes.extend(forked.nodes.into_values());
    let mut wf = workflow("s", nodes);
    if let Some(Node::Standard(a)) = wf.nodes.get_mut("a") {
        a.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        });
    }
    wf
}

/// Defers every review, keeping the node ids of the history each request showed.
#[derive(Default)]
struct ShownHistory(Mutex<Vec<Vec<String>>>);

#[async_trait]
impl ReviewHandler for ShownHistory {
    async fn request_review(&self, r: ReviewRequest<'_>) -> ReviewOutcome {
        let ids = r.history.iter().map(|h| h.node_id.clone()).collect();
        self.0.lock().unwrap().push(ids);
        ReviewOutcome::Pending {
            correlation_id: "review-1".into(),
        }
    }
}

#[tokio::test]
async fn branches_share_the_history_before_the_fork_and_save_only_their_own_steps() {
    let wf = fork_after_a_step();
    let script = Script::new()
        .on("s", &["start"])
        .on("a", &["alpha"])
        .on("c", &["gamma"]);
    let shown = Arc::new(ShownHistory::default());
    let h = harness_with(&script, |b| b.review_handler(shown.clone()));
    let r = h.run(&wf, json!({"topic": "T"})).await;
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    // The branch's reviewer sees the run's history up to the fork, though the branch holds
    // none of it.
    assert_eq!(*shown.0.lock().unwrap(), [vec!["s".to_string()]]);
    let Some(Nested::Fork { branches, .. }) = r.state.nested.as_deref() else {
        panic!("no saved branches: {:?}", r.state.nested);
    };
    let own: Vec<Vec<&str>> = branches
        .iter()
        .map(|b| b.state.history.iter().map(|h| h.node_id.as_str()).collect())
        .collect();
    assert_eq!(own, [vec![], vec!["c"]]);
    assert!(branches.iter().all(|b| b.own_history));

    // Branches saved by versions that copied the run's history into each branch (no
    // `own_history`) resume to the same result as branches saved now.
    let mut legacy = r.state.clone();
    if let Some(Nested::Fork { branches, .. }) = legacy.nested.as_deref_mut() {
        for b in branches {
            let mut full = r.state.history.clone();
            full.append(&mut b.state.history);
            b.state.history = full;
            b.own_history = false;
        }
    }
    let legacy_json = serde_json::to_value(&legacy).unwrap();
    assert!(!legacy_json.to_string().contains("own_history"));
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let mut resumed = Vec::new();
    for saved in [
        r.state.clone(),
        serde_json::from_value(legacy_json).unwrap(),
    ] {
        let approve = ReviewDecision::Approve { edits: None };
        let r = h
            .engine
            .resume(&p, saved, Some(approve), RunCtx::new(&CancelToken::new()))
            .await;
        assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
        assert_eq!(path(&r), ["s", "a", "c", "f", "j", "done"]);
        let steps: Vec<u64> = r.state.history.iter().map(|s| s.step).collect();
        assert_eq!(steps, [1, 2, 3, 4, 5]);
        // `at_ms` is wall time since the run started: a loaded machine makes it differ.
        let mut history = r.state.history;
        history.iter_mut().for_each(|s| s.at_ms = 0);
        resumed.push((history, r.state.context));
    }
    assert_eq!(resumed[0], resumed[1]);
}

/// A reviewer that always defers, with one correlation id per node (`review-<node>`), and
/// counts how often it was asked.
#[derive(Default)]
struct DeferPerNode(Mutex<Vec<String>>);

#[async_trait]
impl ReviewHandler for DeferPerNode {
    async fn request_review(&self, r: ReviewRequest<'_>) -> ReviewOutcome {
        self.0.lock().unwrap().push(r.node_id.to_string());
        ReviewOutcome::Pending {
            correlation_id: format!("review-{}", r.node_id),
        }
    }
}

#[tokio::test]
async fn three_branch_reviews_are_decided_independently_in_reverse_order() {
    let mut wf = fork_wf(
        &["a", "b", "c"],
        MergeStrategy::CollectAll,
        &["all"],
        &[],
        true,
    );
    for id in ["a", "b", "c"] {
        if let Some(Node::Standard(s)) = wf.nodes.get_mut(id) {
            s.review_config = Some(ReviewConfig {
                mode: ReviewMode::Required,
                allow_backtrack: false,
                allow_edit: false,
            });
        }
    }
    let script = Script::new()
        .on("a", &["alpha"])
        .on("b", &["beta"])
        .on("c", &["gamma"]);
    let asked = Arc::new(DeferPerNode::default());
    let h = harness_with(&script, |b| b.review_handler(asked.clone()));
    let r = h.run(&wf, json!({"topic": "T"})).await;
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    let ids = |s: &RunState| -> Vec<(String, Option<String>)> {
        waiting_reviews(s)
            .into_iter()
            .map(|w| (w.correlation_id, w.branch))
            .collect()
    };
    let all = |ids: &[&str]| -> Vec<(String, Option<String>)> {
        ids.iter()
            .map(|b| (format!("review-{b}"), Some(b.to_string())))
            .collect()
    };
    assert_eq!(ids(&r.state), all(&["a", "b", "c"]));
    assert!(waiting_reviews(&r.state).iter().all(|w| w.within == ["f"]));
    let p = h.engine.prepare(Arc::new(wf.clone())).unwrap();
    let mut state = r.state;
    // Decided last first: each decision reaches its own branch; the others wait on with the
    // same correlation ids, and no reviewer is asked again.
    for (decided, left) in [("c", vec!["a", "b"]), ("b", vec!["a"])] {
        let mut saved: RunState =
            serde_json::from_value(serde_json::to_value(&state).unwrap()).unwrap();
        assert!(route_review(&mut saved, &format!("review-{decided}")));
        assert_eq!(
            pending_review(&saved).map(|(_, c)| c.to_string()),
            Some(format!("review-{decided}"))
        );
        let approve = ReviewDecision::Approve { edits: None };
        let r = h
            .engine
            .resume(&p, saved, Some(approve), RunCtx::new(&CancelToken::new()))
            .await;
        assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
        assert_eq!(ids(&r.state), all(&left));
        state = r.state;
    }
    assert!(
        !route_review(&mut state.clone(), "review-c"),
        "c was decided"
    );
    assert!(route_review(&mut state, "review-a"));
    let approve = ReviewDecision::Approve { edits: None };
    let r = h
        .engine
        .resume(&p, state, Some(approve), RunCtx::new(&CancelToken::new()))
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        r.state.context["all"],
        json!({"a": {"a": "alpha"}, "b": {"b": "beta"}, "c": {"c": "gamma"}})
    );
    assert_eq!(*asked.0.lock().unwrap(), ["a", "b", "c"]);
}

/// A flow of `node` waiting for review `corr` (requested at `at`).
fn waiting_at(node: &str, corr: &str, at: u64) -> RunState {
    let mut s = RunState::new("r".into(), "w".into(), node.into(), Context::default());
    s.phase = ExecutionPhase::Awaiting {
        node_id: node.into(),
        processor_id: PostProcessor::Review.id().into(),
        cached_result: Box::new(NodeResult::success(format!("out of {node}"))),
        correlation_id: corr.into(),
        requested_at_ms: at,
        deadline_at_ms: None,
        tool_call: None,
    };
    s
}

/// Reviews nested in a sub-workflow child's fork: each listed with its branch and the nodes
/// around it; routing a decision to the second branch moves it first inside the child and
/// every flow's phase shows it; an unknown id changes nothing.
#[test]
fn reviews_nested_in_a_child_fork_are_listed_and_routed() {
    let branch = |target: &str, state: RunState, ended: Option<BranchEnd>| ForkBranchState {
        target: target.into(),
        state,
        own_history: true,
        ended,
    };
    let mut child = RunState::new("c".into(), "child".into(), "f".into(), Context::default());
    child.nested = Some(Box::new(Nested::Fork {
        node_id: "f".into(),
        branches: vec![
            branch("x", waiting_at("x", "rx", 1), None),
            branch("y", waiting_at("y", "ry", 2), Some(BranchEnd::Completed)),
            branch("z", waiting_at("z", "rz", 3), None),
        ],
    }));
    child.phase = waiting_at("x", "rx", 1).phase;
    let mut state = RunState::new("r".into(), "w".into(), "sub".into(), Context::default());
    state.phase = child.phase.clone();
    state.nested = Some(Box::new(Nested::Child {
        node_id: "sub".into(),
        state: Box::new(child),
    }));
    let listed = waiting_reviews(&state);
    let within = vec!["sub".to_string(), "f".to_string()];
    let expect = |corr: &str, b: &str, at: u64| WaitingReview {
        correlation_id: corr.into(),
        node_id: b.into(),
        branch: Some(b.into()),
        within: within.clone(),
        requested_at_ms: at,
        deadline_at_ms: None,
        output: Some(format!("out of {b}")),
        tool_call: None,
    };
    assert_eq!(
        listed,
        [expect("rx", "x", 1), expect("rz", "z", 3)],
        "an ended branch waits for nothing"
    );
    let before = state.clone();
    assert!(!route_review(&mut state, "ry"), "y ended");
    assert!(!route_review(&mut state, "nope"));
    assert_eq!(state, before);
    assert!(route_review(&mut state, "rz"));
    assert_eq!(pending_review(&state), Some(("z", "rz")));
    let ids: Vec<String> = waiting_reviews(&state)
        .into_iter()
        .map(|w| w.correlation_id)
        .collect();
    assert_eq!(ids, ["rz", "rx"], "the routed one first");
}
