//! Durable runs and run control: checkpoints at every node boundary through a store, resume
//! from any checkpoint, cancellation through the store, redaction, and the RunControl handle
//! (pause after the current node, resume, cancel).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use hensu_host::{DurableRun, SnapshotRedactor, restore, snapshot};
use hensu_ir::*;
use hensu_runtime::*;
use hensu_store::{MemoryStore, OwnerId, RunRecord, RunStatus, StateStore};
use indexmap::IndexMap;
use serde_json::{Value, json};

const NODES: usize = 6;

fn chain() -> Workflow {
    let mut nodes: IndexMap<String, Node> = IndexMap::new();
    for i in 0..NODES {
        let next = if i + 1 == NODES {
            "done".to_string()
        } else {
            format!("n{}", i + 1)
        };
        let id = format!("n{i}");
        nodes.insert(
            id.clone(),
            Node::Standard(StandardNode {
                id,
                agent_id: Some("a".into()),
                prompt: Some(if i == 0 {
                    "start {topic}".into()
                } else {
                    format!("after {{n{}}}", i - 1)
                }),
                transition_rules: vec![TransitionRule::Success {
                    target_node: next,
                    with_feedback: false,
                }],
                ..StandardNode::default()
            }),
        );
    }
    nodes.insert(
        "done".into(),
        Node::End(EndNode {
            id: "done".into(),
            status: ExitStatus::Success,
        }),
    );
    let mut agents = IndexMap::new();
    agents.insert("a".into(), AgentConfig::new("a", "Worker", "test-model"));
    Workflow {
        id: "chain".into(),
        version: "1.0.0".into(),
        metadata: Metadata {
            name: "chain".into(),
            ..Metadata::default()
        },
        agents,
        nodes,
        start_node: "n0".into(),
        config: None,
        saga: Default::default(),
        timing: Default::default(),
        state_schema: None,
    }
}

/// Answers `out(<node>)` after `delay`, counting calls per node; the first call of `hang_at`
/// never answers (the process "dies" there) and signals `reached`.
#[derive(Clone, Default)]
pub(super) struct Echo {
    pub(super) delay: Duration,
    pub(super) calls: Arc<Mutex<HashMap<String, usize>>>,
    pub(super) hang_at: Option<String>,
    pub(super) reached: Arc<tokio::sync::Notify>,
}

impl Echo {
    pub(super) fn calls(&self) -> HashMap<String, usize> {
        self.calls.lock().unwrap().clone()
    }
}

struct EchoAgent {
    config: AgentConfig,
    echo: Echo,
}

#[async_trait]
impl Agent for EchoAgent {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn config(&self) -> &AgentConfig {
        &self.config
    }
    async fn execute(&self, req: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let first = {
            let mut calls = self.echo.calls.lock().unwrap();
            let n = calls.entry(req.node_id.to_string()).or_default();
            *n += 1;
            *n == 1
        };
        if first && self.echo.hang_at.as_deref() == Some(req.node_id) {
            self.echo.reached.notify_one();
            std::future::pending::<()>().await;
        }
        if !self.echo.delay.is_zero() {
            tokio::time::sleep(self.echo.delay).await;
        }
        Ok(AgentResponse::text(format!(
            "out({}) <- {}",
            req.node_id, req.prompt
        )))
    }
}

impl AgentProvider for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn supports_model(&self, _: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        10
    }
    fn create_agent(
        &self,
        config: &AgentConfig,
        _: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(EchoAgent {
            config: config.clone(),
            echo: self.clone(),
        }))
    }
}

fn input() -> Context {
    let mut c = Context::default();
    c.insert("topic".into(), json!("durability"));
    c
}

fn path(r: &RunResult) -> Vec<String> {
    r.state.path().into_iter().map(String::from).collect()
}

/// Keeps every state seen at a boundary.
#[derive(Default)]
struct Recorder(Mutex<Vec<RunState>>);

#[async_trait]
impl RunControlHook for Recorder {
    async fn at_boundary(&self, state: &RunState) -> Result<Boundary, RuntimeError> {
        self.0.lock().unwrap().push(state.clone());
        Ok(Boundary::Continue)
    }
}

#[tokio::test]
async fn checkpoints_at_every_boundary_and_resumes_from_any_of_them() {
    let wf = chain();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let durable = super::new_durable_run(&store, "r1", &wf, input(), &OwnerId::current()).await;
    let recorder = Arc::new(Recorder::default());
    let echo = Echo::default();
    let engine = Engine::builder().provider(Arc::new(echo.clone())).build();
    let controls: [&dyn RunControlHook; 1] = [recorder.as_ref()];
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel)
        .checkpointer(durable.as_ref())
        .controls(&controls);
    let full = engine.run(&wf, input(), run).await;
    assert!(full.outcome.is_success(), "{:?}", full.outcome);
    assert_eq!(
        durable.finish(&full).await.unwrap(),
        Some(RunStatus::Completed)
    );
    let history = store.history("r1").await.unwrap();
    // creation + one checkpoint per node + the final status.
    assert_eq!(history.len(), 1 + NODES + 1);
    assert_eq!(history.last().unwrap().status, RunStatus::Completed);
    let stored = store.load("r1").await.unwrap();
    assert_eq!(stored.record.exit_status.as_deref(), Some("SUCCESS"));
    let saved = restore("r1", &stored.snapshot).unwrap();
    assert_eq!(saved.context, full.state.context);

    // A crash right after any checkpoint: resuming from it reaches the same end, and only the
    // node in flight (the checkpoint's current node) runs again.
    let states = recorder.0.lock().unwrap().clone();
    assert_eq!(states.len(), NODES);
    for (k, st) in states.into_iter().enumerate() {
        let snap = snapshot(&st, None).unwrap();
        let st = restore("r1", &snap).unwrap();
        let echo = Echo::default();
        let engine = Engine::builder().provider(Arc::new(echo.clone())).build();
        let p = engine.prepare(Arc::new(wf.clone())).unwrap();
        let r = engine
            .resume(&p, st, None, RunCtx::new(&CancelToken::new()))
            .await;
        assert!(r.outcome.is_success());
        assert_eq!(r.state.context, full.state.context, "from checkpoint {k}");
        assert_eq!(path(&r), path(&full));
        assert_eq!(r.state.steps, full.state.steps);
        let calls = echo.calls.lock().unwrap().clone();
        assert_eq!(calls.len(), NODES - k, "from checkpoint {k}: {calls:?}");
        assert!(calls.values().all(|c| *c == 1));
    }
}

#[tokio::test]
async fn a_cancel_request_in_the_store_stops_the_run_at_the_next_boundary() {
    let wf = chain();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let record = RunRecord::new("r2", "chain", "1.0.0", Some("n0".into()));
    let initial = RunState::new("r2".into(), "chain".into(), "n0".into(), input());
    let cancel = CancelToken::new();
    let durable = Arc::new(
        DurableRun::create(
            store.clone(),
            &record,
            &json!({}),
            &initial,
            &OwnerId::current(),
            None,
        )
        .await
        .unwrap()
        .with_cancel(cancel.clone()),
    );
    let echo = Echo {
        delay: Duration::from_millis(30),
        ..Echo::default()
    };
    let engine = Engine::builder().provider(Arc::new(echo.clone())).build();
    let s2 = store.clone();
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(45)).await;
        s2.request_cancel("r2").await.unwrap()
    });
    let r = engine
        .run(
            &wf,
            input(),
            RunCtx::new(&cancel).checkpointer(durable.as_ref()),
        )
        .await;
    assert!(matches!(
        canceller.await.unwrap(),
        hensu_store::CancelRequest::Requested { .. }
    ));
    assert!(
        matches!(
            r.outcome,
            RunOutcome::Failed(RuntimeError::Cancelled { .. })
        ),
        "{:?}",
        r.outcome
    );
    // n0 ran; the request lands during n1 (abandoned without a transition) or, when the store
    // is polled only at the boundary, just after it. n2 never completes.
    let p = path(&r);
    assert!(p == ["n0"] || p == ["n0", "n1"], "{p:?}");
    assert!(cancel.is_cancelled());
    assert_eq!(
        durable.finish(&r).await.unwrap(),
        Some(RunStatus::Cancelled)
    );
    assert_eq!(
        store.record("r2").await.unwrap().status,
        RunStatus::Cancelled
    );
}

#[tokio::test]
async fn snapshots_are_redacted_and_a_lost_lease_ends_the_run() {
    let wf = chain();
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::new());
    let record = RunRecord::new("r3", "chain", "1.0.0", Some("n0".into()));
    let mut secret_input = input();
    secret_input.insert("topic".into(), json!("sk-SECRET-0123456789"));
    let initial = RunState::new(
        "r3".into(),
        "chain".into(),
        "n0".into(),
        secret_input.clone(),
    );
    let redact: SnapshotRedactor = Arc::new(|v: &mut Value| redact_all(v));
    let durable = Arc::new(
        DurableRun::create(
            store.clone(),
            &record,
            &json!({}),
            &initial,
            &OwnerId::current(),
            Some(redact),
        )
        .await
        .unwrap(),
    );
    let engine = Engine::builder()
        .provider(Arc::new(Echo::default()))
        .build();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.run(&wf, secret_input, run).await;
    assert!(r.outcome.is_success());
    durable.finish(&r).await.unwrap();
    let text = store.load("r3").await.unwrap().snapshot.to_string();
    assert!(!text.contains("sk-SECRET"), "{text}");
    assert!(text.contains("[REDACTED]"));

    // Another owner takes the run over (e.g. the lease expired): the next checkpoint fails and
    // the run ends with a store error, writing nothing more.
    let store: Arc<dyn StateStore> =
        Arc::new(MemoryStore::new().with_options(hensu_store::StoreOptions {
            lease_ttl: Duration::from_millis(1),
            ..Default::default()
        }));
    let durable = super::new_durable_run(&store, "r4", &wf, input(), &OwnerId::current()).await;
    let thief = store.clone();
    let engine = Engine::builder()
        .provider(Arc::new(Echo {
            delay: Duration::from_millis(20),
            ..Echo::default()
        }))
        .build();
    let steal = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(10)).await;
        thief.acquire("r4", &OwnerId::current()).await.unwrap()
    });
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let r = engine.run(&wf, input(), run).await;
    steal.await.unwrap();
    assert!(
        matches!(r.outcome, RunOutcome::Failed(RuntimeError::Store { .. })),
        "{:?}",
        r.outcome
    );
    let step = store.record("r4").await.unwrap().step;
    assert_eq!(durable.finish(&r).await.unwrap(), None);
    assert_eq!(store.record("r4").await.unwrap().step, step);
    assert_eq!(store.record("r4").await.unwrap().status, RunStatus::Running);
}

fn redact_all(v: &mut Value) {
    match v {
        Value::String(s) if s.contains("sk-SECRET-0123456789") => {
            *s = s.replace("sk-SECRET-0123456789", "[REDACTED]");
        }
        Value::Array(a) => a.iter_mut().for_each(redact_all),
        Value::Object(m) => m.values_mut().for_each(redact_all),
        _ => {}
    }
}

// Paused time: the agents' delays and the test's waits run on tokio's virtual clock, so the
// pause lands during n1 on every machine.
#[tokio::test(start_paused = true)]
async fn run_control_pauses_after_the_current_node_resumes_and_cancels() {
    let wf = Arc::new(chain());
    let control = RunControl::new();
    let echo = Echo {
        delay: Duration::from_millis(25),
        ..Echo::default()
    };
    let engine = Arc::new(Engine::builder().provider(Arc::new(echo.clone())).build());
    let p = engine.prepare(wf.clone()).unwrap();
    assert_eq!(control.status(), ControlStatus::Created);
    let (c, e) = (control.clone(), engine.clone());
    let run =
        tokio::spawn(async move { c.run(&e, &p, input(), RunCtx::new(c.cancel_token())).await });
    tokio::time::sleep(Duration::from_millis(35)).await;
    assert_eq!(control.status(), ControlStatus::Running);
    control.pause();
    // The running node (n1) finishes first, then the run waits at the boundary.
    let mut waited = 0;
    while control.status() != ControlStatus::Paused && waited < 200 {
        tokio::time::sleep(Duration::from_millis(5)).await;
        waited += 1;
    }
    assert_eq!(control.status(), ControlStatus::Paused);
    let started = control.nodes_started();
    assert_eq!(started, 2);
    assert_eq!(control.current_node().as_deref(), Some("n2"));
    tokio::time::sleep(Duration::from_millis(80)).await;
    assert_eq!(
        control.nodes_started(),
        started,
        "nothing runs while paused"
    );
    control.resume();
    let r = run.await.unwrap();
    assert!(r.outcome.is_success());
    assert_eq!(path(&r).len(), NODES);
    assert_eq!(control.status(), ControlStatus::Completed);
    assert!(echo.calls.lock().unwrap().values().all(|c| *c == 1));

    // Cancel while paused ends the run before its next node.
    let control = RunControl::new();
    let engine = Arc::new(Engine::builder().provider(Arc::new(echo.clone())).build());
    let p = engine.prepare(wf.clone()).unwrap();
    control.pause();
    let (c, e) = (control.clone(), engine.clone());
    let run =
        tokio::spawn(async move { c.run(&e, &p, input(), RunCtx::new(c.cancel_token())).await });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert_eq!(control.status(), ControlStatus::Paused);
    control.cancel();
    let r = run.await.unwrap();
    assert!(matches!(
        r.outcome,
        RunOutcome::Failed(RuntimeError::Cancelled { .. })
    ));
    assert!(r.state.history.is_empty());
    assert_eq!(control.status(), ControlStatus::Cancelled);

    // A run cancelled before it starts never starts.
    let control = RunControl::new();
    control.cancel();
    let engine = Engine::builder().provider(Arc::new(echo.clone())).build();
    let p = engine.prepare(wf).unwrap();
    let r = control
        .run(&engine, &p, input(), RunCtx::new(control.cancel_token()))
        .await;
    assert!(matches!(
        r.outcome,
        RunOutcome::Failed(RuntimeError::Cancelled { .. })
    ));
    assert_eq!(control.status(), ControlStatus::Cancelled);
}

/// The snapshots a policy makes due come from the run's state at hand (the store asks, the
/// next boundary sends it), not from a replay of the store's log: they land one step after
/// the step that made them due, and a load gives the same state as the run.
#[tokio::test]
async fn due_snapshots_are_sent_by_the_run_one_step_later() {
    let wf = chain();
    let opts = hensu_store::StoreOptions {
        snapshot_policy: hensu_store::SnapshotPolicy::every(2),
        ..hensu_store::StoreOptions::default()
    };
    let store: Arc<dyn StateStore> = Arc::new(MemoryStore::try_new(opts).unwrap());
    let durable = super::new_durable_run(&store, "r1", &wf, input(), &OwnerId::current()).await;
    let engine = Engine::builder()
        .provider(Arc::new(Echo::default()))
        .build();
    let cancel = CancelToken::new();
    let run = RunCtx::new(&cancel).checkpointer(durable.as_ref());
    let full = engine.run(&wf, input(), run).await;
    assert!(full.outcome.is_success(), "{:?}", full.outcome);
    durable.finish(&full).await.unwrap();
    let snapshots: Vec<u64> = store
        .history("r1")
        .await
        .unwrap()
        .iter()
        .filter(|m| m.snapshot_bytes.is_some())
        .map(|m| m.step)
        .collect();
    // Created at 0; steps 1–6 are the boundaries, 7 the final write. Two rows since the
    // last snapshot make one due (at 2, 5): the store asks, the next step carries it (3, 6).
    // A store compacting on its own would have written at 2, 4 and 6.
    assert_eq!(snapshots, [0, 3, 6]);
    let stored = store.load("r1").await.unwrap();
    assert_eq!(
        restore("r1", &stored.snapshot).unwrap().context,
        full.state.context
    );
    assert_eq!(stored.snapshot, snapshot(&full.state, None).unwrap());
}
