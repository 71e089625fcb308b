//! Durable runs inside parallel and fork nodes and inside a compensating sub-workflow child:
//! a branch that finishes is recorded as it finishes, so a process killed while the other
//! branches run resumes the node and runs only those (the one in flight again); a child's
//! compensations are checkpointed one by one like the main flow's.

use std::time::Duration;

use async_trait::async_trait;
use hensu_host::{DurableRun, restore};
use hensu_store::{MemoryStore, OwnerId, RunStatus, StateStore};
use tokio::sync::Notify;

use super::*;

async fn new_run(store: &Arc<dyn StateStore>, id: &str, wf: &Workflow) -> Arc<DurableRun> {
    new_durable_run(
        store,
        id,
        wf,
        ctx(json!({"topic": "T"})),
        &OwnerId::current(),
    )
    .await
}

/// The durable run, and a wake-up once it recorded `n` finished branches (the moment the
/// test kills the process).
struct KillAfterBranches {
    durable: Arc<DurableRun>,
    n: usize,
    recorded: Mutex<usize>,
    kill: Arc<Notify>,
}

#[async_trait]
impl Checkpointer for KillAfterBranches {
    async fn record_step(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        self.durable.record_step(state).await
    }

    async fn record_nested(
        &self,
        frames: &[NestedFrame],
        state: &RunState,
    ) -> Result<Boundary, RuntimeError> {
        self.durable.record_nested(frames, state).await
    }

    async fn record_branch(
        &self,
        frames: &[NestedFrame],
        node_id: &str,
        branch: FinishedBranch<'_>,
    ) -> Result<(), RuntimeError> {
        self.durable.record_branch(frames, node_id, branch).await?;
        let mut recorded = self.recorded.lock().unwrap();
        *recorded += 1;
        if *recorded == self.n {
            self.kill.notify_one();
        }
        Ok(())
    }
}

/// Runs `wf` stored as run `id` until `n` branches were recorded, then drops the run as a
/// killed process would (its lease is given up so the test's resumer can take it at once).
async fn run_until_killed(
    store: &Arc<dyn StateStore>,
    id: &str,
    wf: &Workflow,
    script: &Script,
    n: usize,
) {
    let durable = new_run(store, id, wf).await;
    let kill = Arc::new(Notify::new());
    let hook = KillAfterBranches {
        durable: durable.clone(),
        n,
        recorded: Mutex::new(0),
        kill: kill.clone(),
    };
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build();
    let topic = ctx(json!({"topic": "T"}));
    run_until(&engine, wf, topic, &hook, &NoopListener, &kill).await;
    drop(engine);
    store.release(durable.lease()).await.unwrap();
}

/// Reopens run `id` and resumes it to its end with `script`.
async fn resume(
    store: &Arc<dyn StateStore>,
    id: &str,
    wf: &Workflow,
    script: &Script,
) -> RunResult {
    let (durable, stored) = DurableRun::reopen(store.clone(), id, &OwnerId::current(), None)
        .await
        .expect("the lease of a dead run is ours again");
    let state = restore(id, &stored.snapshot).unwrap();
    let durable = Arc::new(durable);
    let engine = Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build();
    let p = engine.prepare(Arc::new(wf.clone())).unwrap();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.resume(&p, state, None, run).await;
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );
    r
}

/// The reference: `wf` uninterrupted, without a store.
async fn uninterrupted(wf: &Workflow, script: &Script) -> RunResult {
    Engine::builder()
        .provider(Arc::new(ScriptProvider(script.clone())))
        .build()
        .run(
            wf,
            ctx(json!({"topic": "T"})),
            RunCtx::new(&CancelToken::new()),
        )
        .await
}

/// `start → vote` (three branches with yields, majority vote) `→ yes | no`.
fn parallel_vote() -> Workflow {
    let branches = (0..3)
        .map(|i| {
            let mut b = Branch::new(format!("b{i}"), format!("r{i}"));
            b.prompt = Some(format!("Review {{topic}} as {i}"));
            b.yields = vec![format!("notes{i}")];
            b
        })
        .collect();
    workflow(
        "start",
        vec![
            node("start", "begin {topic}", &[], vec![success("vote")]),
            Node::Parallel(ParallelNode {
                id: "vote".into(),
                branches,
                consensus_config: Some(ConsensusConfig {
                    judge_agent_id: None,
                    strategy: ConsensusStrategy::MajorityVote,
                    threshold: None,
                }),
                transition_rules: vec![
                    success("yes"),
                    TransitionRule::NoConsensus {
                        target_node: "no".into(),
                        with_feedback: true,
                    },
                ],
            }),
            end("yes", ExitStatus::Success),
            end("no", ExitStatus::Failure),
        ],
    )
}

/// Branch `i` answers through agent `r<i>`: b0 after 1 s, b1 after 2 s, b2 after a minute.
fn vote_script() -> Script {
    let mut s = Script::new()
        .on(
            "r0",
            &[r#"{"score": 90, "approved": true, "notes0": "fine"}"#],
        )
        .on(
            "r1",
            &[r#"{"score": 40, "approved": false, "notes1": "weak"}"#],
        )
        .on(
            "r2",
            &[r#"{"score": 80, "approved": true, "notes2": "good"}"#],
        )
        .delay_on("r0", Duration::from_secs(1))
        .delay_on("r1", Duration::from_secs(2))
        .delay_on("r2", Duration::from_secs(60));
    s.delay = Some(Duration::from_secs(1));
    s
}

/// How many calls each branch agent got, by the branch index in its prompt.
fn branch_calls(script: &Script) -> Vec<usize> {
    (0..3)
        .map(|i| {
            let tag = format!(" as {i}");
            script
                .prompts()
                .iter()
                .filter(|(_, prompt)| prompt.contains(&tag))
                .count()
        })
        .collect()
}

#[tokio::test(start_paused = true)]
async fn a_crash_in_a_parallel_node_reruns_only_the_unfinished_branches() {
    let wf = parallel_vote();
    let clean = uninterrupted(&wf, &vote_script()).await;
    assert_eq!(completed(&clean), (ExitStatus::Success, "yes".into()));

    // Killed once b0 and b1 finished, while b2 still runs.
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let first = vote_script();
    run_until_killed(&store, "p1", &wf, &first, 2).await;
    assert_eq!(branch_calls(&first), [1, 1, 1]);
    let stored = restore("p1", &store.load("p1").await.unwrap().snapshot).unwrap();
    assert_eq!(stored.current_node, "vote");
    match stored.nested.as_deref() {
        Some(Nested::Parallel { node_id, finished }) => {
            assert_eq!(node_id, "vote");
            let ids: Vec<&str> = finished.iter().map(|o| o.id.as_str()).collect();
            assert_eq!(ids, ["b0", "b1"], "recorded in the order they finished");
        }
        other => panic!("no recorded branches: {other:?}"),
    }

    let second = vote_script();
    let r = resume(&store, "p1", &wf, &second).await;
    assert_eq!(
        branch_calls(&second),
        [0, 0, 1],
        "only b2, in flight at the crash, runs again"
    );
    assert_eq!(second.prompts_of("start").len(), 0);
    // The consensus saw the same outcomes as the uninterrupted run.
    assert_eq!(completed(&r), completed(&clean));
    assert_eq!(r.state.context, clean.state.context);
    let last = |r: &RunResult| {
        let h = r.state.history.last().unwrap().clone();
        (h.node_id, h.status, h.output)
    };
    assert_eq!(last(&r), last(&clean));
    // The finished run's stored state has no branches left.
    let stored = restore("p1", &store.load("p1").await.unwrap().snapshot).unwrap();
    assert!(stored.nested.is_none());
    assert_eq!(stored.context, clean.state.context);
}

/// `f` forks to a, b, c (each `x → …` writes its output) and joins at `j` collecting all.
fn fork_three() -> Workflow {
    let mut nodes = vec![
        node("start", "begin {topic}", &[], vec![success("f")]),
        Node::Fork(ForkNode {
            id: "f".into(),
            targets: vec!["a".into(), "b".into(), "c".into()],
            transition_rules: vec![success("j")],
            ..ForkNode::default()
        }),
    ];
    for t in ["a", "b", "c"] {
        nodes.push(node(
            t,
            &format!("do {t} for {{topic}}"),
            &[],
            vec![success("j")],
        ));
    }
    nodes.push(Node::Join(JoinNode {
        id: "j".into(),
        await_targets: vec!["f".into()],
        merge_strategy: MergeStrategy::CollectAll,
        writes: vec!["all".into()],
        fail_on_any_error: true,
        transition_rules: vec![success("done")],
        ..JoinNode::default()
    }));
    nodes.push(end("done", ExitStatus::Success));
    workflow("start", nodes)
}

fn fork_script() -> Script {
    let mut s = Script::new()
        .on("a", &["alpha"])
        .on("b", &["beta"])
        .on("c", &["gamma"])
        .delay_on("a", Duration::from_secs(1))
        .delay_on("b", Duration::from_secs(2))
        .delay_on("c", Duration::from_secs(60));
    s.delay = Some(Duration::from_secs(1));
    s
}

#[tokio::test(start_paused = true)]
async fn a_crash_in_a_fork_reruns_only_the_unfinished_targets() {
    let wf = fork_three();
    let clean = uninterrupted(&wf, &fork_script()).await;
    assert_eq!(completed(&clean), (ExitStatus::Success, "done".into()));

    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    run_until_killed(&store, "f1", &wf, &fork_script(), 2).await;
    let stored = restore("f1", &store.load("f1").await.unwrap().snapshot).unwrap();
    match stored.nested.as_deref() {
        Some(Nested::Fork { node_id, branches }) => {
            assert_eq!(node_id, "f");
            let ended: Vec<(&str, Option<&BranchEnd>)> = branches
                .iter()
                .map(|b| (b.target.as_str(), b.ended.as_ref()))
                .collect();
            assert_eq!(
                ended,
                [
                    ("a", Some(&BranchEnd::Completed)),
                    ("b", Some(&BranchEnd::Completed))
                ]
            );
            // A recorded branch keeps only the context entries it changed.
            assert!(!branches[0].state.context.contains_key("topic"));
            assert_eq!(branches[0].state.context["a"], json!("alpha"));
        }
        other => panic!("no recorded targets: {other:?}"),
    }

    let second = fork_script();
    let r = resume(&store, "f1", &wf, &second).await;
    let calls = |n: &str| second.prompts_of(n).len();
    assert_eq!(
        (calls("start"), calls("a"), calls("b"), calls("c")),
        (0, 0, 0, 1),
        "only c, in flight at the crash, runs again"
    );
    assert_eq!(completed(&r), completed(&clean));
    assert_eq!(r.state.context, clean.state.context);
    assert_eq!(r.state.path(), clean.state.path());
    assert_eq!(r.state.steps, clean.state.steps);
    let stored = restore("f1", &store.load("f1").await.unwrap().snapshot).unwrap();
    assert!(stored.nested.is_none());
    assert_eq!(stored.path(), clean.state.path());
}

/// Wakes the test when compensation `id` starts.
struct OnCompensation(&'static str, Arc<Notify>);

impl ExecutionListener for OnCompensation {
    fn on_event(&self, e: &Event<'_>) {
        if let Event::CompensationStarted {
            compensation_id, ..
        } = e
            && *compensation_id == self.0
        {
            self.1.notify_one();
        }
    }
}

/// `p0 → sub → done | failed`; the child `c0 → c1 → declined` (FAILURE) names `undo-c0` and
/// `undo-c1` for its two nodes.
fn parent_with_compensating_child() -> (Workflow, Workflow) {
    let mut child = workflow(
        "c0",
        vec![
            node("c0", "book c0", &[], vec![success("c1")]),
            node("c1", "book c1", &[], vec![success("declined")]),
            end("declined", ExitStatus::Failure),
        ],
    );
    child.id = "child".into();
    child.agents.insert("undoer".into(), agent("undoer"));
    for n in ["c0", "c1"] {
        let id = format!("undo-{n}");
        child.saga.compensations.insert(
            id.clone(),
            Compensation {
                id: id.clone(),
                body: CompensationBody::Agent {
                    agent_id: "undoer".into(),
                    prompt: "undo {compensating}".into(),
                },
            },
        );
        child.saga.node_compensations.insert(n.into(), id);
    }
    let parent = parent_of("child", &[]);
    (parent, child)
}

#[tokio::test(start_paused = true)]
async fn a_crash_while_a_child_compensates_resumes_the_compensations_left() {
    let (parent, child) = parent_with_compensating_child();
    let repo: Arc<dyn WorkflowRepository> = Arc::new(MapRepository::from_iter([child]));
    // Every call takes a second (paused time), so the process can die inside one.
    let script = || Script {
        delay: Some(Duration::from_secs(1)),
        ..Script::new()
    };
    let engine_with = |script: &Script| {
        Engine::builder()
            .provider(Arc::new(ScriptProvider(script.clone())))
            .workflows(repo.clone())
            .build()
    };
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let durable = new_run(&store, "s1", &parent).await;
    let first = script();
    let kill = Arc::new(Notify::new());
    {
        // The process dies while `undo-c0` (the child's second compensation) runs.
        let engine = engine_with(&first);
        let crash = OnCompensation("undo-c0", kill.clone());
        let topic = ctx(json!({"topic": "T"}));
        run_until(&engine, &parent, topic, durable.as_ref(), &crash, &kill).await;
    }
    store.release(durable.lease()).await.unwrap();
    drop(durable);

    let (durable, stored) = DurableRun::reopen(store.clone(), "s1", &OwnerId::current(), None)
        .await
        .expect("the lease of a dead run is ours again");
    let state = restore("s1", &stored.snapshot).unwrap();
    assert_eq!(state.current_node, "sub");
    let Some(Nested::Child { state: saved, .. }) = state.nested.as_deref() else {
        panic!("no saved child: {:?}", state.nested);
    };
    let done: Vec<&str> = saved
        .compensations
        .iter()
        .map(|c| c.compensation_id.as_str())
        .collect();
    assert_eq!(done, ["undo-c1"], "undo-c1 was checkpointed as done");
    let left: Vec<&str> = saved
        .compensating
        .as_ref()
        .unwrap()
        .pending
        .iter()
        .map(|t| t.compensation_id.as_str())
        .collect();
    assert_eq!(left, ["undo-c0"], "undo-c0 was in flight");

    let durable = Arc::new(durable);
    let second = script();
    let engine = engine_with(&second);
    let p = engine.prepare(Arc::new(parent.clone())).unwrap();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.resume(&p, state, None, run).await;
    // A child that ends FAILURE still completes: the sub-workflow node succeeds.
    assert_eq!(completed(&r), (ExitStatus::Success, "done".into()));
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );
    let runs = |id: &str| first.prompts_of(id).len() + second.prompts_of(id).len();
    assert_eq!(
        (runs("undo-c1"), runs("undo-c0")),
        (1, 2),
        "each compensation ran once, the one in flight at the crash twice"
    );
    assert_eq!((runs("p0"), runs("c0"), runs("c1")), (1, 1, 1));
    assert_eq!(
        second.prompts_of("c1").len(),
        0,
        "the child's nodes did not run again"
    );
}

/// The parallel node inside a sub-workflow child: recorded below the child's state
/// (`/nested/state/nested`), resumed the same way.
#[tokio::test(start_paused = true)]
async fn a_crash_in_a_parallel_node_of_a_child_reruns_only_its_unfinished_branches() {
    let mut child = parallel_vote();
    child.id = "child".into();
    let repo: Arc<dyn WorkflowRepository> = Arc::new(MapRepository::from_iter([child]));
    let parent = parent_of("child", &[("notes1", "notes1")]);
    let engine = |script: &Script| {
        Engine::builder()
            .provider(Arc::new(ScriptProvider(script.clone())))
            .workflows(repo.clone())
            .build()
    };
    let clean = engine(&vote_script())
        .run(
            &parent,
            ctx(json!({"topic": "T"})),
            RunCtx::new(&CancelToken::new()),
        )
        .await;
    assert_eq!(completed(&clean), (ExitStatus::Success, "done".into()));

    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let durable = new_run(&store, "c1", &parent).await;
    let kill = Arc::new(Notify::new());
    let first = vote_script();
    {
        let hook = KillAfterBranches {
            durable: durable.clone(),
            n: 2,
            recorded: Mutex::new(0),
            kill: kill.clone(),
        };
        let engine = engine(&first);
        let topic = ctx(json!({"topic": "T"}));
        run_until(&engine, &parent, topic, &hook, &NoopListener, &kill).await;
    }
    store.release(durable.lease()).await.unwrap();
    drop(durable);

    let (durable, stored) = DurableRun::reopen(store.clone(), "c1", &OwnerId::current(), None)
        .await
        .expect("the lease of a dead run is ours again");
    let state = restore("c1", &stored.snapshot).unwrap();
    let Some(Nested::Child { state: saved, .. }) = state.nested.as_deref() else {
        panic!("no saved child: {:?}", state.nested);
    };
    assert_eq!(saved.current_node, "vote");
    let Some(Nested::Parallel { finished, .. }) = saved.nested.as_deref() else {
        panic!("no recorded branches in the child: {:?}", saved.nested);
    };
    assert_eq!(finished.len(), 2);

    let durable = Arc::new(durable);
    let second = vote_script();
    let engine = engine(&second);
    let p = engine.prepare(Arc::new(parent.clone())).unwrap();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.resume(&p, state, None, run).await;
    assert_eq!(completed(&r), completed(&clean));
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Completed)
    );
    assert_eq!(branch_calls(&second), [0, 0, 1], "only b2 runs again");
    assert_eq!(r.state.context, clean.state.context);
}
