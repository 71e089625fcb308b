//! Tool-call approval in the engine (docs/mcp.md, *Tool approval*), with an in-memory journal:
//! a gated call holds the run at the call (a review of its own with the tool and arguments),
//! the node runs again on resume and replays its model turn, the decision is journaled before
//! it is used; approve runs the call once (with edited arguments), reject never runs it and
//! the agent gets the reason; a run that cannot pause fails the node with E0520.

use std::sync::atomic::{AtomicUsize, Ordering};

use hensu_runtime::journal::{
    Approval, CallJournal, CallKind, CallPhase, CallSpec, Declared, approve_tool_call, journaled,
};

use super::journal::MemoryJournal;
use super::*;

/// An agent with a model turn (journaled as a model call, counted) that asks for tool `delete`
/// with `{"path": "/tmp/a"}`; the call goes through the approval gate, then (approved) the
/// tool runs (counted, with the arguments it got).
struct GatedAgent {
    config: AgentConfig,
    turns: Arc<AtomicUsize>,
    ran: Arc<Mutex<Vec<Value>>>,
}

#[async_trait]
impl Agent for GatedAgent {
    fn id(&self) -> &str {
        &self.config.id
    }
    fn config(&self) -> &AgentConfig {
        &self.config
    }
    async fn execute(&self, _req: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        let fail = |e: hensu_runtime::journal::CallError| AgentError::new(e.kind(), e.to_string());
        let model = CallSpec {
            kind: CallKind::Model,
            name: "m",
            declared: Declared::IDEMPOTENT,
        };
        let args: Value = journaled(model, |_| async {
            self.turns.fetch_add(1, Ordering::SeqCst);
            Ok::<_, ()>((json!({"path": "/tmp/a"}), true))
        })
        .await
        .map_err(|_| AgentError::new("x", "model failed"))?;
        let args = match approve_tool_call("delete", &args).await.map_err(fail)? {
            Approval::Approved(a) => a,
            Approval::Rejected(reason) => {
                return Ok(AgentResponse::text(format!("rejected: {reason}")));
            }
        };
        let tool = CallSpec {
            kind: CallKind::Tool,
            name: "delete",
            declared: Declared::default(),
        };
        let out: String = journaled(tool, |_| async {
            self.ran.lock().unwrap().push(args.clone());
            Ok::<_, ()>((format!("deleted {}", args["path"]), true))
        })
        .await
        .map_err(|_| AgentError::new("x", "tool failed"))?;
        Ok(AgentResponse::text(out))
    }
}

struct GatedProvider(Arc<AtomicUsize>, Arc<Mutex<Vec<Value>>>);

impl AgentProvider for GatedProvider {
    fn name(&self) -> &str {
        "gated"
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
        Ok(Arc::new(GatedAgent {
            config: config.clone(),
            turns: self.0.clone(),
            ran: self.1.clone(),
        }))
    }
}

/// Defers every review and every gated call (a durable run's reviewer answers later).
pub(super) struct Deferring;

#[async_trait]
impl ReviewHandler for Deferring {
    async fn request_review(&self, _r: ReviewRequest<'_>) -> ReviewOutcome {
        ReviewOutcome::Pending {
            correlation_id: "node-review".into(),
        }
    }
}

pub(super) struct Fixture {
    pub(super) engine: Engine,
    pub(super) journal: Arc<MemoryJournal>,
    turns: Arc<AtomicUsize>,
    ran: Arc<Mutex<Vec<Value>>>,
}

pub(super) fn fixture(review: Arc<dyn ReviewHandler>) -> Fixture {
    fixture_with(review, |b| b)
}

/// [`fixture`] with more of the engine (a workflow repository).
pub(super) fn fixture_with(
    review: Arc<dyn ReviewHandler>,
    more: impl FnOnce(EngineBuilder) -> EngineBuilder,
) -> Fixture {
    let turns = Arc::new(AtomicUsize::new(0));
    let ran = Arc::new(Mutex::new(Vec::new()));
    let engine = more(
        Engine::builder()
            .provider(Arc::new(GatedProvider(turns.clone(), ran.clone())))
            .review_handler(review),
    )
    .build();
    Fixture {
        engine,
        journal: Arc::default(),
        turns,
        ran,
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

impl Fixture {
    pub(super) fn ctx<'a>(
        &self,
        cancel: &'a CancelToken,
        j: Option<&'a Arc<dyn CallJournal>>,
    ) -> RunCtx<'a> {
        RunCtx::new(cancel).run_id("r1").journal(j)
    }
    async fn run(&self) -> RunResult {
        let cancel = CancelToken::new();
        let j: Arc<dyn CallJournal> = self.journal.clone();
        self.engine
            .run(&one_node(), Context::default(), self.ctx(&cancel, Some(&j)))
            .await
    }
    async fn resume(&self, state: RunState, decision: Option<ReviewDecision>) -> RunResult {
        let cancel = CancelToken::new();
        let j: Arc<dyn CallJournal> = self.journal.clone();
        let p = self.engine.prepare(Arc::new(one_node())).unwrap();
        self.engine
            .resume(&p, state, decision, self.ctx(&cancel, Some(&j)))
            .await
    }
    pub(super) fn turns(&self) -> usize {
        self.turns.load(Ordering::SeqCst)
    }
    pub(super) fn ran(&self) -> Vec<Value> {
        self.ran.lock().unwrap().clone()
    }
}

fn output_of(r: &RunResult) -> String {
    r.state.history[0]
        .output
        .as_ref()
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Runs to the gate: paused at the call, one review of the tool with its arguments.
async fn at_the_gate(f: &Fixture) -> (RunState, String) {
    let r = f.run().await;
    assert!(matches!(r.outcome, RunOutcome::Paused), "{:?}", r.outcome);
    assert_eq!(f.turns(), 1);
    assert!(f.ran().is_empty(), "not called before approval");
    let reviews = waiting_reviews(&r.state);
    assert_eq!(reviews.len(), 1, "{reviews:?}");
    let call = reviews[0].tool_call.clone().expect("a tool-call review");
    assert_eq!(call.tool, "delete");
    assert_eq!(call.arguments, json!({"path": "/tmp/a"}));
    assert_eq!(reviewed_tool_call(&r.state), Some(&call));
    assert_eq!(r.state.steps, 0, "paused before the node");
    let held: Vec<_> = f
        .journal
        .entries()
        .into_iter()
        .filter(|e| e.phase == CallPhase::Held)
        .collect();
    assert_eq!(held.len(), 1);
    assert_eq!(held[0].kind, CallKind::Approval);
    assert_eq!(
        held[0].result.as_ref().unwrap()["arguments"],
        call.arguments
    );
    (r.state, reviews[0].correlation_id.clone())
}

#[tokio::test]
async fn an_approval_with_edited_arguments_runs_the_call_once_with_them() {
    let f = fixture(Arc::new(Deferring));
    let (mut state, corr) = at_the_gate(&f).await;
    assert!(corr.starts_with("tool-"), "{corr}");
    assert!(route_review(&mut state, &corr));
    let edits: Context = [("path".to_string(), json!("/tmp/b"))]
        .into_iter()
        .collect();
    let r = f
        .resume(state, Some(ReviewDecision::Approve { edits: Some(edits) }))
        .await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(f.turns(), 1, "the model turn was replayed, not asked again");
    assert_eq!(f.ran(), [json!({"path": "/tmp/b"})]);
    assert_eq!(output_of(&r), "deleted \"/tmp/b\"");
    let decided = f
        .journal
        .entries()
        .into_iter()
        .find(|e| e.kind == CallKind::Approval && e.phase == CallPhase::Finished)
        .expect("the decision is journaled");
    assert_eq!(
        decided.result,
        Some(json!({"decision": "approve", "arguments": {"path": "/tmp/b"}}))
    );
    // The node runs again (a crash after it): nothing is asked or called again.
    let again = f.resume(r.state.clone(), None).await;
    assert_eq!(f.turns(), 1);
    assert_eq!(f.ran().len(), 1);
    assert!(!matches!(again.outcome, RunOutcome::Paused));
}

#[tokio::test]
async fn a_rejection_never_runs_the_call_and_the_agent_reads_the_reason() {
    let f = fixture(Arc::new(Deferring));
    let (state, _) = at_the_gate(&f).await;
    let r = f
        .resume(
            state,
            Some(ReviewDecision::Reject {
                reason: "not that file".into(),
            }),
        )
        .await;
    assert_eq!(completed(&r).1, "done");
    assert!(f.ran().is_empty(), "zero calls");
    assert_eq!(output_of(&r), "rejected: not that file");
}

#[tokio::test]
async fn a_run_stopped_during_the_pause_asks_the_same_review_again_without_the_model() {
    let f = fixture(Arc::new(Deferring));
    let (state, corr) = at_the_gate(&f).await;
    // Resumed without a decision (the process died before the pause was saved, or a plain
    // resume): the same review again, the model's turn replayed.
    let mut before = state.clone();
    before.phase = ExecutionPhase::Initial;
    let r = f.resume(before, None).await;
    assert!(matches!(r.outcome, RunOutcome::Paused));
    assert_eq!(f.turns(), 1, "the model was not asked again");
    assert_eq!(waiting_reviews(&r.state)[0].correlation_id, corr);
    let held = f
        .journal
        .entries()
        .iter()
        .filter(|e| e.phase == CallPhase::Held)
        .count();
    assert_eq!(held, 1, "held once");
    assert!(f.ran().is_empty());
}

#[tokio::test]
async fn auto_approve_runs_a_gated_call_at_once() {
    let f = fixture(Arc::new(AutoApprove));
    let r = f.run().await;
    assert_eq!(completed(&r).1, "done");
    assert_eq!(f.ran(), [json!({"path": "/tmp/a"})]);
}

#[tokio::test]
async fn a_gated_call_without_a_journal_fails_its_node_with_e0520() {
    let f = fixture(Arc::new(Deferring));
    let cancel = CancelToken::new();
    // A call observer makes the node a journal visit without a journal (a run without a
    // store).
    struct Quiet;
    impl hensu_runtime::journal::CallObserver for Quiet {
        fn on_call(&self, _e: &hensu_runtime::journal::CallEvent<'_>) {}
    }
    struct Listen;
    impl ExecutionListener for Listen {
        fn call_observer(&self) -> Option<Arc<dyn hensu_runtime::journal::CallObserver>> {
            Some(Arc::new(Quiet))
        }
    }
    let listener = Listen;
    let ctx = RunCtx::new(&cancel).run_id("r1").listener(&listener);
    let r = f.engine.run(&one_node(), Context::default(), ctx).await;
    assert_eq!(completed(&r).1, "failed");
    assert!(f.ran().is_empty());
    let error = r.state.history[0].error.clone().unwrap();
    assert!(error.contains("without a state store"), "{error}");
    insta::assert_snapshot!(error);
}
