//! The call journal (docs/security.md, *Call journal*) in the engine, with an in-memory
//! journal: calls are numbered per node visit (parallel branches apart), a visit run again
//! replays recorded results without calling, an `unsafe` call started without a result fails
//! (E0511) or holds the run (on_interrupted = pause), an `idempotent` one is issued again
//! with the same key, and a call that is not the recorded one is refused (E0512).

use std::sync::atomic::{AtomicUsize, Ordering};

use hensu_runtime::journal::{
    CallJournal, CallKind, CallPhase, CallPolicy, CallSpec, Declared, JournalEntry, Journaled,
    OnInterrupted, journaled,
};

use super::*;

/// A journal in memory: what a durable run keeps in its log.
#[derive(Default)]
pub(super) struct MemoryJournal {
    entries: Mutex<Vec<JournalEntry>>,
}

impl MemoryJournal {
    pub(super) fn entries(&self) -> Vec<JournalEntry> {
        self.entries.lock().unwrap().clone()
    }
    /// Forgets every result recorded after the `n`th entry (a kill right after it).
    fn truncate(&self, n: usize) {
        self.entries.lock().unwrap().truncate(n);
    }
}

#[async_trait]
impl CallJournal for MemoryJournal {
    async fn recorded(&self, visit: &str) -> Vec<JournalEntry> {
        self.entries()
            .into_iter()
            .filter(|e| e.visit == visit)
            .collect()
    }
    async fn write(&self, entry: &JournalEntry) -> Result<(), String> {
        self.entries.lock().unwrap().push(entry.clone());
        Ok(())
    }
}

/// An agent whose every answer calls tool `tool` twice through the journal (the effect counts
/// its calls and records the idempotency key it got).
struct ToolAgent {
    config: AgentConfig,
    declared: Declared,
    effects: Arc<AtomicUsize>,
    keys: Arc<Mutex<Vec<String>>>,
}

#[async_trait]
impl Agent for ToolAgent {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn config(&self) -> &AgentConfig {
        &self.config
    }
    async fn execute(&self, _req: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let mut out = Vec::new();
        for name in ["search", "book"] {
            let spec = CallSpec {
                kind: CallKind::Tool,
                name,
                declared: self.declared,
            };
            let r = journaled(spec, |slot| async {
                let n = self.effects.fetch_add(1, Ordering::SeqCst) + 1;
                if let Some(s) = slot {
                    self.keys.lock().unwrap().push(s.key);
                }
                Ok::<_, ()>((format!("{name} #{n}"), true))
            })
            .await;
            match r {
                Ok(text) => out.push(text),
                Err(Journaled::Call(e)) => return Err(AgentError::new(e.kind(), e.to_string())),
                Err(Journaled::Effect(())) => return Err(AgentError::new("x", "cancelled")),
            }
        }
        Ok(AgentResponse::text(out.join(", ")))
    }
}

struct ToolProvider(Declared, Arc<AtomicUsize>, Arc<Mutex<Vec<String>>>);

impl AgentProvider for ToolProvider {
    fn name(&self) -> &str {
        "tools"
    }
    fn supports_model(&self, _m: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        3000
    }
    fn create_agent(
        &self,
        config: &AgentConfig,
        _c: &std::collections::HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(ToolAgent {
            config: config.clone(),
            declared: self.0,
            effects: self.1.clone(),
            keys: self.2.clone(),
        }))
    }
}

struct Fixture {
    engine: Engine,
    journal: Arc<MemoryJournal>,
    effects: Arc<AtomicUsize>,
    keys: Arc<Mutex<Vec<String>>>,
}

fn fixture(declared: Declared) -> Fixture {
    let effects = Arc::new(AtomicUsize::new(0));
    let keys = Arc::new(Mutex::new(Vec::new()));
    let engine = Engine::builder()
        .provider(Arc::new(ToolProvider(
            declared,
            effects.clone(),
            keys.clone(),
        )))
        .build();
    Fixture {
        engine,
        journal: Arc::default(),
        effects,
        keys,
    }
}

impl Fixture {
    /// Runs `wf` as run `r1` (the same id every time, as a resume has) with the journal.
    async fn run(&self, wf: &Workflow) -> RunResult {
        let cancel = CancelToken::new();
        let journal: Arc<dyn CallJournal> = self.journal.clone();
        let ctx = RunCtx::new(&cancel).run_id("r1").journal(Some(&journal));
        self.engine.run(wf, Context::default(), ctx).await
    }
    fn effects(&self) -> usize {
        self.effects.load(Ordering::SeqCst)
    }
}

fn one_node() -> Workflow {
    workflow(
        "n",
        vec![
            node(
                "n",
                "go",
                &[],
                vec![success("done"), failure(Some("failed"))],
            ),
            end("done", ExitStatus::Success),
            end("failed", ExitStatus::Failure),
        ],
    )
}

/// The output of the run's first node.
fn output_of(r: &RunResult) -> String {
    r.state.history[0]
        .output
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn phases(entries: &[JournalEntry]) -> Vec<(String, u32, CallPhase)> {
    entries
        .iter()
        .map(|e| (e.visit.clone(), e.index, e.phase))
        .collect()
}

#[tokio::test]
async fn calls_are_journaled_before_use_and_replayed_when_the_visit_runs_again() {
    let f = fixture(Declared::default());
    let r = f.run(&one_node()).await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(f.effects(), 2);
    let entries = f.journal.entries();
    assert_eq!(
        phases(&entries),
        [
            ("1".into(), 0, CallPhase::Started),
            ("1".into(), 0, CallPhase::Finished),
            ("1".into(), 1, CallPhase::Started),
            ("1".into(), 1, CallPhase::Finished),
        ]
    );
    assert_eq!(entries[1].result, Some(json!("search #1")));
    assert_eq!(*f.keys.lock().unwrap(), ["hensu:r1:1:0", "hensu:r1:1:1"]);
    // The node runs again (a resume at its boundary): nothing is called, the answer is the
    // recorded one.
    let r = f.run(&one_node()).await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(f.effects(), 2, "replayed, not called");
    assert_eq!(output_of(&r), "search #1, book #2");
}

#[tokio::test]
async fn a_visit_goes_on_from_the_first_call_without_a_result() {
    let f = fixture(Declared::IDEMPOTENT);
    f.run(&one_node()).await;
    // Killed after `search` finished and `book` started.
    f.journal.truncate(3);
    let r = f.run(&one_node()).await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(f.effects(), 3, "only `book` was issued again");
    assert_eq!(output_of(&r), "search #1, book #3");
    let keys = f.keys.lock().unwrap().clone();
    assert_eq!(keys[1], keys[2], "the same key for both issues of `book`");
}

#[tokio::test]
async fn an_unsafe_call_started_without_a_result_fails_its_node_with_e0511() {
    let f = fixture(Declared::default());
    f.run(&one_node()).await;
    f.journal.truncate(3);
    let r = f.run(&one_node()).await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(f.effects(), 2, "`book` was not issued again");
    let error = r.state.history[0].error.clone().unwrap();
    insta::assert_snapshot!(error);
}

#[tokio::test]
async fn an_unsafe_call_declared_pause_holds_the_run_before_its_node() {
    let held = Declared {
        policy: CallPolicy::Unsafe,
        on_interrupted: OnInterrupted::Pause,
    };
    let f = fixture(held);
    f.run(&one_node()).await;
    f.journal.truncate(3);
    let r = f.run(&one_node()).await;
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    assert_eq!(r.state.current_node, "n");
    assert_eq!(r.state.steps, 0, "the node runs again on resume");
    assert_eq!(f.effects(), 2);
    assert_eq!(f.journal.entries()[3].phase, CallPhase::Held);
    // Resumed (a human's go-ahead): the call is issued again.
    let resumed = {
        let cancel = CancelToken::new();
        let journal: Arc<dyn CallJournal> = f.journal.clone();
        let ctx = RunCtx::new(&cancel).journal(Some(&journal));
        let p = f.engine.prepare(Arc::new(one_node())).unwrap();
        f.engine.resume(&p, r.state, None, ctx).await
    };
    assert_eq!(completed(&resumed).1, "done");
    assert_eq!(f.effects(), 3);
    // Interrupted again while the go-ahead was used (its start recorded, no result): the run
    // holds again instead of issuing the call a third time.
    let started_again = f
        .journal
        .entries()
        .iter()
        .rposition(|e| e.phase == CallPhase::Started)
        .unwrap();
    f.journal.truncate(started_again + 1);
    let r = f.run(&one_node()).await;
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    assert_eq!(f.effects(), 3);
}

#[tokio::test]
async fn a_call_other_than_the_recorded_one_fails_with_e0512() {
    let f = fixture(Declared::IDEMPOTENT);
    // An earlier run of visit 1 recorded another tool at call 0.
    f.journal
        .write(&JournalEntry {
            visit: "1".into(),
            index: 0,
            kind: CallKind::Tool,
            name: "lookup".into(),
            phase: CallPhase::Finished,
            node: Some("n".into()),
            result: Some(json!("old")),
            ok: Some(true),
            duration_ms: Some(1),
        })
        .await
        .unwrap();
    let r = f.run(&one_node()).await;
    assert_eq!(completed(&r).1, "failed");
    assert_eq!(f.effects(), 0);
    let error = r.state.history[0].error.clone().unwrap();
    insta::assert_snapshot!(error);
}

#[tokio::test]
async fn parallel_branches_number_their_calls_apart() {
    let f = fixture(Declared::IDEMPOTENT);
    let wf = parallel_workflow();
    let r = f.run(&wf).await;
    assert_eq!(completed(&r).1, "done");
    let mut visits: Vec<String> = f.journal.entries().into_iter().map(|e| e.visit).collect();
    visits.sort();
    visits.dedup();
    assert_eq!(visits, ["1#a", "1#b"]);
    assert_eq!(f.effects(), 4);
    // Run again: every branch replays.
    f.run(&wf).await;
    assert_eq!(f.effects(), 4);
}

/// A parallel node with branches `a` and `b` of agent `w`, then the end.
fn parallel_workflow() -> Workflow {
    let branches = ["a", "b"]
        .iter()
        .map(|id| {
            let mut b = Branch::new(*id, "w");
            b.prompt = Some(format!("Branch {id}"));
            b
        })
        .collect();
    workflow(
        "p",
        vec![
            Node::Parallel(ParallelNode {
                id: "p".into(),
                branches,
                consensus_config: None,
                transition_rules: vec![success("done")],
            }),
            end("done", ExitStatus::Success),
        ],
    )
}
