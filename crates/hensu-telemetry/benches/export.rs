//! The cost of the live trace per step: a 10 000-node chain whose agent answers a constant,
//! run without telemetry (no listener: the engine builds no step events), with the trace
//! listener building every span into a sink that drops it, and with the real OTLP exporter
//! (the SDK's batch queue; its endpoint on 127.0.0.1 refuses connections, so the export
//! thread fails fast and never slows the run).
//!
//! `cargo bench -p hensu-telemetry --bench export`; divide the reported time by 10 000.

use std::collections::HashMap;
use std::sync::Arc;

use async_trait::async_trait;
use divan::Bencher;
use hensu_ir::*;
use hensu_providers::Redactor;
use hensu_runtime::*;
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
        Ok(AgentResponse::text("constant answer"))
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
    agents.insert("a".to_string(), AgentConfig::new("a", "Agent", "gpt-4o"));
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

fn run(bencher: Bencher, listener: Option<Arc<dyn SpanSink>>) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let engine = Engine::builder()
        .provider(Arc::new(ConstantProvider))
        .build();
    let workflow = Arc::new(chain());
    let prepared = engine.prepare(workflow.clone()).expect("prepare");
    let cancel = CancelToken::new();
    bencher.with_inputs(input).bench_local_values(|ctx| {
        let trace = listener.clone().map(|sink| {
            TraceListener::new(
                workflow.clone(),
                None,
                sink,
                Arc::new(Redactor::empty()),
                false,
            )
        });
        let run_ctx = match &trace {
            Some(t) => RunCtx::new(&cancel).listener(t),
            None => RunCtx::new(&cancel),
        };
        let r = rt.block_on(engine.run_prepared(&prepared, ctx, run_ctx));
        assert!(r.outcome.is_success());
        r
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn chain_10k_telemetry_off(bencher: Bencher) {
    run(bencher, None);
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn chain_10k_spans_built(bencher: Bencher) {
    run(bencher, Some(Arc::new(Drop)));
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn chain_10k_otlp_export(bencher: Bencher) {
    // Port 9 (discard) on 127.0.0.1: nothing listens, a connection is refused at once.
    let exporter =
        Exporter::new(&TelemetryConfig::for_endpoint("http://127.0.0.1:9")).expect("exporter");
    let exporter = Arc::new(exporter);
    run(bencher, Some(exporter.clone()));
    let _ = exporter.shutdown();
}
