//! Durable runs inside nested flows and around waits for a human: a sub-workflow child is
//! recorded at its own boundaries and a crash inside it resumes the child; a review pending
//! in a fork branch pauses the run with the branches saved; time paused in place (run
//! control, a reviewer at the terminal) does not count against `maxExecutionTime`.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use hensu_host::{DeferredReview, DurableRun, restore};
use hensu_ir::*;
use hensu_runtime::*;
use hensu_store::{MemoryStore, OwnerId, RunStatus, StateStore};
use serde_json::json;

use super::durable_runs::Echo;
use super::{ctx, end, node, parent_of, success, workflow};

/// `p0 → sub (child: c0 → c1 → c2) → done`; the child's `c2` output comes back as `result`.
fn parent_and_child() -> (Workflow, Workflow) {
    let mut child = workflow(
        "c0",
        vec![
            node("c0", "first {topic}", &[], vec![success("c1")]),
            node("c1", "then {c0}", &[], vec![success("c2")]),
            node("c2", "last {c1}", &[], vec![success("end")]),
            end("end", ExitStatus::Success),
        ],
    );
    child.id = "child".into();
    let parent = parent_of("child", &[("result", "c2")]);
    (parent, child)
}

async fn new_run(
    store: &Arc<dyn StateStore>,
    id: &str,
    wf: &Workflow,
    owner: &OwnerId,
) -> Arc<DurableRun> {
    super::new_durable_run(store, id, wf, ctx(json!({"topic": "T"})), owner).await
}

#[tokio::test]
async fn a_crash_inside_a_sub_workflow_resumes_the_child_not_the_parent_node() {
    let (parent, child) = parent_and_child();
    let repo: Arc<dyn WorkflowRepository> = Arc::new(MapRepository::from_iter([child]));
    let engine_with = |echo: &Echo| {
        Engine::builder()
            .provider(Arc::new(echo.clone()))
            .workflows(repo.clone())
            .build()
    };
    // The reference: the same run, uninterrupted and not stored.
    let clean = engine_with(&Echo::default())
        .run(
            &parent,
            ctx(json!({"topic": "T"})),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert!(clean.outcome.is_success(), "{:?}", clean.outcome);

    // The process dies while the child runs c1.
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    // The resumer is the same owner (as after a restart on the same host, whose dead pid
    // frees the lease).
    let owner = OwnerId::current();
    let durable = new_run(&store, "r1", &parent, &owner).await;
    let echo = Echo {
        hang_at: Some("c1".into()),
        ..Echo::default()
    };
    {
        let engine = engine_with(&echo);
        let cancel = CancelToken::new();
        let stored = RunCtx::new(&cancel).checkpointer(durable.as_ref());
        let run = engine.run(&parent, ctx(json!({"topic": "T"})), stored);
        tokio::select! {
            r = run => panic!("the run should hang in c1: {:?}", r.outcome),
            _ = echo.reached.notified() => {}
        }
    }
    drop(durable);
    // The log names the child's steps with their path.
    let executed: Vec<String> = store
        .history("r1")
        .await
        .unwrap()
        .into_iter()
        .filter_map(|h| h.executed_node)
        .collect();
    assert_eq!(executed, ["p0", "sub/c0"]);

    // Resume: the stored state holds the child at c1.
    let (durable, stored) = DurableRun::reopen(store.clone(), "r1", &owner, None)
        .await
        .expect("the lease of a dead run is ours again");
    let state = restore("r1", &stored.snapshot).unwrap();
    assert_eq!(state.current_node, "sub");
    match state.nested.as_deref() {
        Some(Nested::Child { node_id, state }) => {
            assert_eq!(node_id, "sub");
            assert_eq!(state.current_node, "c1");
            assert_eq!(state.path(), ["c0"]);
        }
        other => panic!("no saved child: {other:?}"),
    }
    let durable = Arc::new(durable);
    let echo = Echo::default();
    let engine = engine_with(&echo);
    let p = engine.prepare(Arc::new(parent.clone())).unwrap();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.resume(&p, state, None, run).await;
    assert!(r.outcome.is_success(), "{:?}", r.outcome);
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );
    // Only the node in flight (c1) and what follows it ran again: not p0, not c0.
    let calls = echo.calls();
    assert_eq!(calls.get("c1"), Some(&1), "{calls:?}");
    assert_eq!(calls.get("c2"), Some(&1), "{calls:?}");
    assert!(
        !calls.contains_key("c0") && !calls.contains_key("p0"),
        "{calls:?}"
    );
    assert_eq!(r.state.context, clean.state.context);
    assert_eq!(r.state.path(), clean.state.path());
    // The finished run's stored state has no child left.
    let stored = restore("r1", &store.load("r1").await.unwrap().snapshot).unwrap();
    assert!(stored.nested.is_none());
    assert_eq!(stored.context, clean.state.context);
}

#[tokio::test]
async fn a_review_pending_in_a_fork_branch_is_stored_and_resumes_the_branch() {
    let mut a = node("a", "do a", &[], vec![success("j")]);
    if let Node::Standard(s) = &mut a {
        s.review_config = Some(ReviewConfig {
            mode: ReviewMode::Required,
            allow_backtrack: false,
            allow_edit: false,
        });
    }
    let wf = workflow(
        "f",
        vec![
            Node::Fork(ForkNode {
                id: "f".into(),
                targets: vec!["a".into(), "c".into()],
                transition_rules: vec![success("j")],
                ..ForkNode::default()
            }),
            a,
            node("c", "do c", &[], vec![success("j")]),
            Node::Join(JoinNode {
                id: "j".into(),
                await_targets: vec!["f".into()],
                merge_strategy: MergeStrategy::CollectAll,
                writes: vec!["all".into()],
                fail_on_any_error: true,
                transition_rules: vec![success("done")],
                ..JoinNode::default()
            }),
            end("done", ExitStatus::Success),
        ],
    );
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let owner = OwnerId::current();
    let durable = new_run(&store, "r2", &wf, &owner).await;
    let echo = Echo::default();
    let engine = Engine::builder()
        .provider(Arc::new(echo.clone()))
        .review_handler(Arc::new(DeferredReview::new()))
        .build();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.run(&wf, ctx(json!({"topic": "T"})), run).await;
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    assert_eq!(durable.finish(&r).await.unwrap(), Some(RunStatus::Paused));
    let record = store.record("r2").await.unwrap();
    let (node_id, correlation) = pending_review(&r.state).unwrap();
    assert_eq!(node_id, "a");
    assert_eq!(record.correlation_id.as_deref(), Some(correlation));
    assert_eq!(
        store
            .find_by_correlation(correlation)
            .await
            .unwrap()
            .map(|r| r.run_id),
        Some("r2".to_string())
    );
    drop((engine, durable));

    let (durable, stored) = DurableRun::reopen(store.clone(), "r2", &owner, None)
        .await
        .unwrap();
    let state = restore("r2", &stored.snapshot).unwrap();
    assert_eq!(state, r.state);
    let durable = Arc::new(durable);
    let engine = Engine::builder()
        .provider(Arc::new(echo.clone()))
        .review_handler(Arc::new(DeferredReview::new()))
        .build();
    let p = engine.prepare(Arc::new(wf.clone())).unwrap();
    let approve = ReviewDecision::Approve { edits: None };
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.resume(&p, state, Some(approve), run).await;
    assert!(r.outcome.is_success(), "{:?}", r.outcome);
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );
    let all = &r.state.context["all"];
    assert!(
        all["a"]["a"].as_str().unwrap().starts_with("out(a)"),
        "{all}"
    );
    assert!(
        all["c"]["c"].as_str().unwrap().starts_with("out(c)"),
        "{all}"
    );
    // Each branch's agent ran once over both calls.
    let calls = echo.calls();
    assert_eq!((calls["a"], calls["c"]), (1, 1), "{calls:?}");
}

/// A reviewer at the terminal: answers after a person took `think` to decide.
struct SlowHuman {
    think: Duration,
}

#[async_trait]
impl ReviewHandler for SlowHuman {
    async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
        tokio::time::sleep(self.think).await;
        ReviewOutcome::Decided(ReviewDecision::Approve { edits: None })
    }
}

// Virtual time: each node takes 10 ms of a 100 ms limit; the human takes 500 ms.
#[tokio::test(start_paused = true)]
async fn waiting_for_a_human_in_place_does_not_count_against_max_execution_time() {
    let chain = |review: bool| {
        let mut nodes: Vec<Node> = (0..4)
            .map(|i| {
                let next = if i == 3 {
                    "done".into()
                } else {
                    format!("n{}", i + 1)
                };
                node(&format!("n{i}"), "go", &[], vec![success(&next)])
            })
            .collect();
        if review && let Node::Standard(s) = &mut nodes[1] {
            s.review_config = Some(ReviewConfig {
                mode: ReviewMode::Required,
                allow_backtrack: false,
                allow_edit: false,
            });
        }
        nodes.push(end("done", ExitStatus::Success));
        workflow("n0", nodes)
    };
    let limit = RunOptions {
        max_execution_time: Some(Duration::from_millis(100)),
        ..RunOptions::default()
    };
    let slow = Arc::new(Echo {
        delay: Duration::from_millis(10),
        ..Echo::default()
    });

    // Paused in place by run control for 500 ms after n0.
    let control = RunControl::new();
    let engine = Arc::new(
        Engine::builder()
            .provider(slow.clone())
            .options(limit.clone())
            .build(),
    );
    let p = engine.prepare(Arc::new(chain(false))).unwrap();
    let (c, e) = (control.clone(), engine.clone());
    let run = tokio::spawn(async move {
        c.run(&e, &p, Context::default(), RunCtx::new(c.cancel_token()))
            .await
    });
    tokio::time::sleep(Duration::from_millis(5)).await;
    control.pause();
    while control.status() != ControlStatus::Paused {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    control.resume();
    let r = run.await.unwrap();
    assert!(r.outcome.is_success(), "{:?}", r.outcome);
    // History times are run time: the pause is not in them.
    assert!(
        r.state.history.last().unwrap().at_ms < 100,
        "{:?}",
        r.state.history
    );

    // A reviewer who takes 500 ms to answer at n1.
    let engine = Engine::builder()
        .provider(slow.clone())
        .options(limit.clone())
        .review_handler(Arc::new(SlowHuman {
            think: Duration::from_millis(500),
        }))
        .build();
    let r = engine
        .run(
            &chain(true),
            Context::default(),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert!(r.outcome.is_success(), "{:?}", r.outcome);

    // Without the human, the limit still holds: 4 nodes of 40 ms are over 100 ms.
    let engine = Engine::builder()
        .provider(Arc::new(Echo {
            delay: Duration::from_millis(40),
            ..Echo::default()
        }))
        .options(limit)
        .build();
    let r = engine
        .run(
            &chain(false),
            Context::default(),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert!(
        matches!(
            r.outcome,
            RunOutcome::Failed(RuntimeError::TimeLimitExceeded { .. })
        ),
        "{:?}",
        r.outcome
    );
}
