//! The cost of the live trace per step, in one run: a 10,000-node chain whose agent answers a
//! constant at once (so only the engine's, the store's and the trace's own work is measured),
//! without telemetry (no listener: the engine builds no step events), with the trace listener
//! (its spans built on the trace thread into a sink that drops them) and with the real OTLP
//! exporter (the SDK's batch queue; its endpoint on 127.0.0.1 refuses connections, so the
//! export thread fails fast and never slows the run) — in memory, and as a durable run on an
//! SQLite store (the run recipe's [`DurableRun`], a log row per step), which is what the
//! issue's bound is stated against (docs/performance.md, *Live trace export*).
//!
//! Every node writes the same context key (a per-node key makes the durable step's diff of the
//! context grow with the run, which would hide the trace's cost behind the store's).
//!
//! The `sqlite_journal_*` variants measure the call journal (docs/security.md, *Call journal*)
//! of the same durable run: on but idle (no call), and with one journaled tool call a step
//! (its start and result rows).
//!
//! `cargo bench -p hensu-host --bench telemetry`; divide the reported time by 10,000.

#![allow(clippy::unwrap_used)]

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use divan::Bencher;
use hensu_host::DurableRun;
use hensu_ir::*;
use hensu_providers::Redactor;
use hensu_runtime::*;
use hensu_store::{OwnerId, RunRecord, SqliteStore, StateStore};
use hensu_telemetry::{Exporter, SpanRecord, SpanSink, TelemetryConfig, TraceListener};
use indexmap::IndexMap;
use serde_json::Value;

const STEPS: usize = 10_000;

fn main() {
    divan::main();
}

struct Constant(AgentConfig);

#[async_trait]
impl Agent for Constant {
    fn id(&self) -> &str {
        &self.0.id
    }
    fn config(&self) -> &AgentConfig {
        &self.0
    }
    async fn execute(&self, _r: AgentRequest<'_>) -> Result<AgentResponse, AgentError> {
        if self.0.tools.is_empty() {
            return Ok(AgentResponse::text("constant answer"));
        }
        // One tool call through the run's call journal (a start and a result row).
        let spec = journal::CallSpec {
            kind: journal::CallKind::Tool,
            name: "lookup",
            declared: journal::Declared::IDEMPOTENT,
        };
        let r = journal::journaled(spec, |_slot| async {
            Ok::<_, ()>(("a constant result".to_string(), true))
        })
        .await;
        match r {
            Ok(text) => Ok(AgentResponse::text(text)),
            Err(_) => Err(AgentError::new("journal", "the journal failed")),
        }
    }
}

struct ConstantProvider;

impl AgentProvider for ConstantProvider {
    fn name(&self) -> &str {
        "constant"
    }
    fn supports_model(&self, _m: &str) -> bool {
        true
    }
    fn priority(&self) -> i32 {
        1
    }
    fn create_agent(
        &self,
        c: &AgentConfig,
        _: &HashMap<String, String>,
    ) -> Result<Arc<dyn Agent>, AgentError> {
        Ok(Arc::new(Constant(c.clone())))
    }
}

/// Drops every span: what building them costs, without any export.
struct Drop;

impl SpanSink for Drop {
    fn export(&self, _trace_id: [u8; 16], span: SpanRecord) {
        divan::black_box(span);
    }
}

fn chain() -> Workflow {
    chain_with(&[])
}

/// [`chain`] whose agent declares `tools` (then it makes one journaled tool call a step).
fn chain_with(tools: &[&str]) -> Workflow {
    let mut nodes = IndexMap::new();
    for i in 0..STEPS {
        let id = format!("n{i}");
        let next = if i + 1 == STEPS {
            "end".to_string()
        } else {
            format!("n{}", i + 1)
        };
        nodes.insert(
            id.clone(),
            Node::Standard(StandardNode {
                id,
                agent_id: Some("a".into()),
                prompt: Some("Step about {topic}".into()),
                // Every node writes the same key, so the context stays small (the `shared`
                // shape of scripts/stub-chain.sh, which the durable-step figures use).
                writes: vec!["out".into()],
                transition_rules: vec![TransitionRule::Success {
                    target_node: next,
                    with_feedback: false,
                }],
                ..StandardNode::default()
            }),
        );
    }
    nodes.insert(
        "end".into(),
        Node::End(EndNode {
            id: "end".into(),
            status: ExitStatus::Success,
        }),
    );
    let mut agents = IndexMap::new();
    let mut agent = AgentConfig::new("a", "Agent", "gpt-4o");
    agent.tools = tools.iter().map(|t| t.to_string()).collect();
    agents.insert("a".to_string(), agent);
    Workflow {
        id: "chain".into(),
        version: "1".into(),
        metadata: Metadata::default(),
        agents,
        nodes,
        start_node: "n0".into(),
        config: Some(WorkflowConfig {
            max_steps: STEPS as i64 + 1,
            ..WorkflowConfig::default()
        }),
        saga: Default::default(),
        state_schema: None,
        timing: Default::default(),
    }
}

fn input() -> Context {
    let mut c = Context::default();
    c.insert("topic".into(), Value::String("benchmarks".into()));
    c
}

/// Where the run keeps its state.
#[derive(Clone, Copy)]
enum Store {
    Memory,
    Sqlite,
}

fn run(bencher: Bencher, store: Store, listener: Option<Arc<dyn SpanSink>>) {
    run_with(bencher, store, listener, Journal::Off);
}

/// Whether the durable run journals its calls (docs/security.md, *Call journal*).
#[derive(Clone, Copy, PartialEq)]
enum Journal {
    Off,
    /// The journal on, no call made.
    Idle,
    /// The journal on, one tool call a step.
    OneCall,
}

fn run_with(bencher: Bencher, store: Store, listener: Option<Arc<dyn SpanSink>>, journal: Journal) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let engine = Engine::builder()
        .provider(Arc::new(ConstantProvider))
        .build();
    let workflow = Arc::new(match journal {
        Journal::OneCall => chain_with(&["lookup"]),
        Journal::Off | Journal::Idle => chain(),
    });
    let workflow_json = serde_json::to_value(&*workflow).expect("workflow");
    let prepared = engine.prepare(workflow.clone()).expect("prepare");
    let cancel = CancelToken::new();
    let dir = tempfile::tempdir().expect("tempdir");
    let db: Option<Arc<dyn StateStore>> = match store {
        Store::Memory => None,
        Store::Sqlite => Some(Arc::new(SqliteStore::open(dir.path()).expect("store"))),
    };
    let mut runs = 0u64;
    let mut setup = || {
        runs += 1;
        let id = format!("bench-{runs}");
        let durable = db.as_ref().map(|db| {
            let record = RunRecord::new(&id, "chain", "1", Some("n0".into()));
            let initial = RunState::new(id.clone(), "chain".into(), "n0".into(), input());
            rt.block_on(DurableRun::create(
                db.clone(),
                &record,
                &workflow_json,
                &initial,
                &OwnerId::current(),
                None,
            ))
            .expect("create")
        });
        (id, durable.map(Arc::new))
    };
    bencher
        .with_inputs(&mut setup)
        .bench_local_values(|(id, durable)| {
            let trace = listener.clone().map(|sink| {
                TraceListener::new(
                    workflow.clone(),
                    None,
                    sink,
                    Arc::new(Redactor::empty()),
                    false,
                )
            });
            let mut run_ctx = RunCtx::new(&cancel).run_id(&id);
            if let Some(t) = &trace {
                run_ctx = run_ctx.listener(t);
            }
            if let Some(d) = &durable {
                run_ctx = run_ctx.checkpointer(d.as_ref());
            }
            let calls = durable
                .as_ref()
                .filter(|_| journal != Journal::Off)
                .map(|d| d.journal());
            run_ctx = run_ctx.journal(calls.as_ref());
            let r = rt.block_on(engine.run_prepared(&prepared, input(), run_ctx));
            assert!(r.outcome.is_success());
            if let Some(d) = &durable {
                rt.block_on(d.finish(&r)).expect("finish");
            }
            r
        });
}

fn otlp() -> Arc<Exporter> {
    // Port 9 (discard) on 127.0.0.1: nothing listens, a connection is refused at once.
    Arc::new(Exporter::new(&TelemetryConfig::for_endpoint("http://127.0.0.1:9")).expect("exporter"))
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn memory_telemetry_off(bencher: Bencher) {
    run(bencher, Store::Memory, None);
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn memory_spans_built(bencher: Bencher) {
    run(bencher, Store::Memory, Some(Arc::new(Drop)));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn memory_otlp_export(bencher: Bencher) {
    let exporter = otlp();
    run(bencher, Store::Memory, Some(exporter.clone()));
    let _ = exporter.shutdown();
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn sqlite_telemetry_off(bencher: Bencher) {
    run(bencher, Store::Sqlite, None);
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn sqlite_spans_built(bencher: Bencher) {
    run(bencher, Store::Sqlite, Some(Arc::new(Drop)));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn sqlite_otlp_export(bencher: Bencher) {
    let exporter = otlp();
    run(bencher, Store::Sqlite, Some(exporter.clone()));
    let _ = exporter.shutdown();
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn sqlite_journal_idle(bencher: Bencher) {
    run_with(bencher, Store::Sqlite, None, Journal::Idle);
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn sqlite_journal_one_tool_call(bencher: Bencher) {
    run_with(bencher, Store::Sqlite, None, Journal::OneCall);
}
