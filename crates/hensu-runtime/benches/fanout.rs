//! Per-branch overhead of fan-out nodes: a 1,000-branch parallel node and a 1,000-target fork
//! (each target a standard node, then a COLLECT_ALL join), with agents that answer at once,
//! beside the floor of spawning and awaiting 1,000 tokio tasks on the same runtime.
//!
//! `cargo bench -p hensu-runtime --bench fanout`; per-branch overhead beyond the floor =
//! (node time − floor time) / 1,000.

use std::sync::Arc;

use divan::Bencher;
use hensu_ir::*;
use hensu_runtime::*;
use indexmap::IndexMap;
use serde_json::Value;

mod support;
use support::ConstantProvider;

const BRANCHES: usize = 1_000;

fn main() {
    divan::main();
}

fn success(t: &str) -> TransitionRule {
    TransitionRule::Success {
        target_node: t.into(),
        with_feedback: false,
    }
}

fn wf(start: &str, nodes: Vec<Node>) -> Workflow {
    let mut agents = IndexMap::new();
    agents.insert("a".to_string(), AgentConfig::new("a", "Agent", "m"));
    Workflow {
        id: "fanout".into(),
        version: "1".into(),
        metadata: Metadata::default(),
        agents,
        nodes: nodes.into_iter().map(|n| (n.id().to_string(), n)).collect(),
        start_node: start.into(),
        config: Some(WorkflowConfig {
            max_steps: BRANCHES as i64 + 10,
            ..WorkflowConfig::default()
        }),
        saga: Default::default(),
        timing: Default::default(),
        state_schema: None,
    }
}

fn end() -> Node {
    Node::End(EndNode {
        id: "end".into(),
        status: ExitStatus::Success,
    })
}

fn parallel_wf() -> Workflow {
    let branches = (0..BRANCHES)
        .map(|i| {
            let mut b = Branch::new(format!("b{i}"), "a".to_string());
            b.prompt = Some("Review {topic}".into());
            b
        })
        .collect();
    wf(
        "p",
        vec![
            Node::Parallel(ParallelNode {
                id: "p".into(),
                branches,
                consensus_config: None,
                transition_rules: vec![success("end")],
            }),
            end(),
        ],
    )
}

fn fork_wf() -> Workflow {
    let targets: Vec<String> = (0..BRANCHES).map(|i| format!("t{i}")).collect();
    let mut nodes = vec![Node::Fork(ForkNode {
        id: "f".into(),
        targets: targets.clone(),
        transition_rules: vec![success("j")],
        ..ForkNode::default()
    })];
    for t in &targets {
        nodes.push(Node::Standard(StandardNode {
            id: t.clone(),
            agent_id: Some("a".into()),
            prompt: Some("Research {topic}".into()),
            transition_rules: vec![success("j")],
            ..StandardNode::default()
        }));
    }
    nodes.push(Node::Join(JoinNode {
        id: "j".into(),
        writes: vec!["all".into()],
        transition_rules: vec![success("end")],
        ..JoinNode::default()
    }));
    nodes.push(end());
    wf("f", nodes)
}

fn input() -> Context {
    let mut c = Context::default();
    c.insert("topic".into(), Value::String("benchmarks".into()));
    c
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

fn bench_workflow(bencher: Bencher, workflow: Workflow) {
    let rt = rt();
    let engine = Engine::builder()
        .provider(Arc::new(ConstantProvider))
        .build();
    let prepared = engine.prepare(Arc::new(workflow)).expect("prepare");
    let cancel = CancelToken::new();
    bencher.with_inputs(input).bench_local_values(|ctx| {
        let r = rt.block_on(engine.run_prepared(&prepared, ctx, RunCtx::new(&cancel)));
        assert!(r.outcome.is_success(), "{:?}", r.outcome);
        r
    });
}

#[divan::bench(sample_count = 30, sample_size = 1)]
fn parallel_1000_branches(bencher: Bencher) {
    bench_workflow(bencher, parallel_wf());
}

#[divan::bench(sample_count = 30, sample_size = 1)]
fn fork_1000_targets(bencher: Bencher) {
    bench_workflow(bencher, fork_wf());
}

/// The floor: spawn 1,000 tokio tasks and await them all.
#[divan::bench(sample_count = 30, sample_size = 1)]
fn floor_spawn_1000_tasks(bencher: Bencher) {
    let rt = rt();
    bencher.bench_local(|| {
        rt.block_on(async {
            let handles: Vec<_> = (0..BRANCHES)
                .map(|i| tokio::spawn(async move { i }))
                .collect();
            let mut sum = 0;
            for h in handles {
                sum += h.await.unwrap_or(0);
            }
            sum
        })
    });
}
