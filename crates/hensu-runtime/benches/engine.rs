//! Engine overhead per node step: a 100 000-node chain whose agent returns a constant, beside a
//! floor loop doing only what any engine must (a context insert and a template render per step).
//!
//! `cargo bench -p hensu-runtime --bench engine`; divide the reported time by 100 000.

use std::sync::Arc;

use divan::Bencher;
use hensu_ir::*;
use hensu_runtime::*;
use indexmap::IndexMap;
use serde_json::Value;

mod support;
use support::ConstantProvider;

const STEPS: usize = 100_000;

fn main() {
    divan::main();
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
    agents.insert("a".to_string(), AgentConfig::new("a", "Agent", "m"));
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
        timing: Default::default(),
        state_schema: None,
    }
}

fn input() -> Context {
    let mut c = Context::default();
    c.insert("topic".into(), Value::String("benchmarks".into()));
    c
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn engine_chain_100k(bencher: Bencher) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let engine = Engine::builder()
        .provider(Arc::new(ConstantProvider))
        .build();
    let prepared = engine.prepare(Arc::new(chain())).expect("prepare");
    let cancel = CancelToken::new();
    bencher.with_inputs(input).bench_local_values(|ctx| {
        let r = rt.block_on(engine.run_prepared(&prepared, ctx, RunCtx::new(&cancel)));
        assert!(r.outcome.is_success());
        r
    });
}

#[divan::bench(sample_count = 10, sample_size = 1)]
fn floor_chain_100k(bencher: Bencher) {
    let ids: Vec<String> = (0..STEPS).map(|i| format!("n{i}")).collect();
    bencher.with_inputs(input).bench_local_values(|mut ctx| {
        for id in &ids {
            let prompt = resolve("Step about {topic}", &ctx);
            ctx.insert(id.clone(), Value::String(prompt));
        }
        ctx
    });
}
