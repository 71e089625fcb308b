//! Gated tool calls inside nested flows (docs/mcp.md, *Tool approval*): a call in a
//! sub-workflow child or a fork branch suspends the whole run at it, as a review inside them
//! does; the review names the tool and its arguments, the decision is routed to the flow that
//! holds the call, and that flow's node runs again with it (the call once, with the edit).
//! A parallel branch, which cannot pause, fails its node with E0520.

use hensu_runtime::journal::{CallJournal, CallKind, CallPhase};

use super::tool_approval::{Deferring, Fixture, fixture, fixture_with};
use super::*;

/// `sub → done`: `sub` runs workflow `child` (one gated node `n`).
fn parent() -> Workflow {
    workflow(
        "sub",
        vec![
            Node::SubWorkflow(SubWorkflowNode {
                id: "sub".into(),
                workflow_id: "child".into(),
                transition_rules: vec![success("done")],
                ..SubWorkflowNode::default()
            }),
            end("done", ExitStatus::Success),
        ],
    )
}

/// Fork `f` over two gated nodes `a` and `b`, joined by `j`.
fn forked() -> Workflow {
    workflow(
        "f",
        vec![
            Node::Fork(ForkNode {
                id: "f".into(),
                targets: vec!["a".into(), "b".into()],
                transition_rules: vec![success("j")],
                ..ForkNode::default()
            }),
            node("a", "a", &[], vec![success("j")]),
            node("b", "b", &[], vec![success("j")]),
            Node::Join(JoinNode {
                id: "j".into(),
                await_targets: vec!["f".into()],
                merge_strategy: MergeStrategy::CollectAll,
                writes: vec!["all".into()],
                fail_on_any_error: true,
                transition_rules: vec![success("done"), failure(Some("failed"))],
                ..JoinNode::default()
            }),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    )
}

impl Fixture {
    async fn go(
        &self,
        wf: &Workflow,
        state: Option<RunState>,
        d: Option<ReviewDecision>,
    ) -> RunResult {
        let cancel = CancelToken::new();
        let j: Arc<dyn CallJournal> = self.journal.clone();
        let ctx = self.ctx(&cancel, Some(&j));
        match state {
            None => self.engine.run(wf, Context::default(), ctx).await,
            Some(s) => {
                let p = self.engine.prepare(Arc::new(wf.clone())).unwrap();
                // As a store gives it back.
                let s: RunState =
                    serde_json::from_value(serde_json::to_value(&s).unwrap()).unwrap();
                self.engine.resume(&p, s, d, ctx).await
            }
        }
    }
}

/// The one tool-call review `r` waits for: its correlation id, after checking the tool and
/// the arguments and where it is.
fn the_review(r: &RunResult, node: &str) -> String {
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    let reviews = waiting_reviews(&r.state);
    let review = reviews
        .iter()
        .find(|w| w.node_id == node)
        .unwrap_or_else(|| panic!("no review at {node}: {reviews:?}"));
    let call = review.tool_call.clone().expect("a tool-call review");
    assert_eq!(call.tool, "delete");
    assert_eq!(call.arguments, json!({"path": "/tmp/a"}));
    review.correlation_id.clone()
}

fn approve_with(path: &str) -> Option<ReviewDecision> {
    let edits: Context = [("path".to_string(), json!(path))].into_iter().collect();
    Some(ReviewDecision::Approve { edits: Some(edits) })
}

#[tokio::test]
async fn a_gated_call_in_a_child_suspends_the_run_and_runs_once_approved() {
    let mut child = workflow(
        "n",
        vec![
            node("n", "go", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    child.id = "child".into();
    let repo: MapRepository = [child].into_iter().collect();
    let f = fixture_with(Arc::new(Deferring), |b| b.workflows(Arc::new(repo)));
    let wf = parent();
    let r = f.go(&wf, None, None).await;
    assert_eq!(
        r.state.current_node, "sub",
        "paused at the sub-workflow node"
    );
    let corr = the_review(&r, "n");
    assert!(f.ran().is_empty(), "not called before approval");
    let mut state = r.state;
    assert!(route_review(&mut state, &corr));
    let r = f.go(&wf, Some(state), approve_with("/tmp/b")).await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(f.ran(), [json!({"path": "/tmp/b"})], "once, with the edit");
    assert_eq!(f.turns(), 1, "the child's model turn was replayed");
    let decided = f
        .journal
        .entries()
        .into_iter()
        .filter(|e| e.kind == CallKind::Approval && e.phase == CallPhase::Finished)
        .count();
    assert_eq!(decided, 1, "the decision is journaled");
}

#[tokio::test]
async fn gated_calls_in_fork_branches_are_reviewed_one_by_one_and_join_once() {
    let f = fixture(Arc::new(Deferring));
    let wf = forked();
    let r = f.go(&wf, None, None).await;
    assert_eq!(r.state.current_node, "f");
    assert_eq!(waiting_reviews(&r.state).len(), 2, "both branches wait");
    assert!(f.ran().is_empty());
    // Approve branch b's call first (with an edit): a's still waits, nothing joins.
    let corr_b = the_review(&r, "b");
    let mut state = r.state;
    assert!(route_review(&mut state, &corr_b));
    let r = f.go(&wf, Some(state), approve_with("/tmp/b")).await;
    assert_eq!(f.ran(), [json!({"path": "/tmp/b"})]);
    let corr_a = the_review(&r, "a");
    assert_eq!(waiting_reviews(&r.state).len(), 1);
    let mut state = r.state;
    assert!(route_review(&mut state, &corr_a));
    let r = f
        .go(
            &wf,
            Some(state),
            Some(ReviewDecision::Approve { edits: None }),
        )
        .await;
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        f.ran(),
        [json!({"path": "/tmp/b"}), json!({"path": "/tmp/a"})],
        "each call once, b's with its edit"
    );
    assert_eq!(f.turns(), 2, "one model turn per branch");
}

#[tokio::test]
async fn a_gated_call_in_a_parallel_branch_fails_its_node_with_e0520() {
    let f = fixture(Arc::new(Deferring));
    let wf = workflow(
        "p",
        vec![
            Node::Parallel(ParallelNode {
                id: "p".into(),
                branches: vec![Branch {
                    prompt: Some("go".into()),
                    ..Branch::new("b1", "x")
                }],
                transition_rules: vec![success("done"), failure(Some("failed"))],
                ..ParallelNode::default()
            }),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    );
    let r = f.go(&wf, None, None).await;
    assert!(!matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    assert!(f.ran().is_empty(), "never called without approval");
    let text = serde_json::to_string(&r.state).unwrap();
    assert!(
        text.contains("E0520") && text.contains("in a parallel branch"),
        "{text}"
    );
}
