//! The static worst-case bound: `check --bounds` (human and JSON), `run --max-cost`, and a
//! property test that a stub run never exceeds the bound on random small workflows.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use hensu_runtime::{CancelToken, Engine, Event, ExecutionListener, StubProvider};
use hensu_sema::bounds::{self, BoundsOptions, Count};
use proptest::prelude::*;

use super::*;

#[test]
fn check_bounds_prints_a_table_and_a_json_section() {
    let o = run_hensuc(&[
        "check",
        "--bounds",
        "examples/workflows/content-pipeline.hwf",
        "-d",
        "examples",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(
        out.contains("bounds of `content-pipeline` (one run, worst case)"),
        "{out}"
    );
    assert!(out.contains("node executions  16"), "{out}");
    assert!(
        out.contains("worst-case cost  unknown: no [pricing"),
        "{out}"
    );

    let o = run_hensuc(&[
        "check",
        "--bounds",
        "--format",
        "json",
        "examples/workflows/content-pipeline.hwf",
        "-d",
        "examples",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["bounds"]["format_version"], 1);
    let wf = &v["bounds"]["workflows"][0];
    assert_eq!(wf["workflow"], "content-pipeline");
    assert_eq!(wf["node_executions"], 16);
    assert_eq!(wf["agent_calls"]["writer"]["calls"], 24);
    assert_eq!(wf["model_calls"]["gpt-4o"], 6);
    // Without --bounds the JSON report is unchanged.
    let o = run_hensuc(&[
        "check",
        "--format",
        "json",
        "examples/workflows/content-pipeline.hwf",
        "-d",
        "examples",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(v.get("bounds").is_none());
}

#[test]
fn an_unbudgeted_cycle_is_reported_with_its_location() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-bounds-cycle");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    std::fs::write(
        dir.join("workflows/loop.hwf"),
        "fun wf() = workflow(\"loop\") {\n    agents { agent(\"a\") { role = \"r\"; model = \"stub\" } }\n    graph {\n        start at \"x\"\n        node(\"x\") { agent = \"a\"; prompt = \"p\"; onSuccess goto \"y\" }\n        node(\"y\") { agent = \"a\"; prompt = \"p\"; onSuccess goto \"x\" }\n    }\n}\n",
    )
    .unwrap();
    let o = hensuc()
        .current_dir(&dir)
        .args(["check", "--bounds", "-d", "."])
        .output()
        .unwrap();
    let out = stdout(&o);
    assert!(out.contains("node executions  unbounded"), "{out}");
    assert!(
        out.contains("unbounded: cycle x → y has no budget (W0303) at ./workflows/loop.hwf:5:14; only maxSteps = 1000 stops it"),
        "{out}"
    );
}

#[test]
fn run_max_cost_refuses_a_run_whose_bound_exceeds_it() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-max-cost");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("workflows")).unwrap();
    for d in ["prompts", "rubrics", "stubs"] {
        let _ = std::process::Command::new("cp")
            .args([
                "-r",
                repo().join("examples").join(d).to_str().unwrap(),
                dir.to_str().unwrap(),
            ])
            .status();
    }
    std::fs::copy(
        repo().join("examples/workflows/content-pipeline.hwf"),
        dir.join("workflows/content-pipeline.hwf"),
    )
    .unwrap();
    std::fs::write(
        dir.join("hensu.toml"),
        "[pricing.\"claude-sonnet-4-5\"]\ninput_per_mtok = 3.0\noutput_per_mtok = 15.0\n[pricing.\"gpt-4o\"]\ninput_per_mtok = 2.5\noutput_per_mtok = 10.0\n",
    )
    .unwrap();
    let wf = dir.join("workflows/content-pipeline.hwf");
    let args = |limit: &str| {
        hensuc()
            .args([
                "run",
                wf.to_str().unwrap(),
                "-d",
                dir.to_str().unwrap(),
                "--no-store",
            ])
            .args(["-c", "{\"topic\": \"x\"}", "--max-cost", limit])
            .output()
            .unwrap()
    };
    // 24 × (4000 × 3 + 4096 × 15) / 1e6 + 6 × (4000 × 2.5 + 4096 × 10) / 1e6 = 1.7626 + 0.3058
    let o = args("1");
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("refusing to start: the worst-case cost of `content-pipeline` is 2.0684, above --max-cost 1"), "{}", stderr(&o));
    let o = args("2.5");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("worst-case cost 2.0684 is within --max-cost 2.5"));
}

/// Counts node executions and agent calls of a run.
#[derive(Default)]
struct Counter {
    nodes: Mutex<BTreeMap<String, u64>>,
    agents: Mutex<BTreeMap<String, u64>>,
}

impl ExecutionListener for Counter {
    fn on_event(&self, event: &Event<'_>) {
        match event {
            Event::NodeStarted { node_id, .. } => {
                *self
                    .nodes
                    .lock()
                    .unwrap()
                    .entry(node_id.to_string())
                    .or_default() += 1
            }
            Event::AgentCall { agent_id, .. } => {
                *self
                    .agents
                    .lock()
                    .unwrap()
                    .entry(agent_id.to_string())
                    .or_default() += 1
            }
            _ => {}
        }
    }
}

/// One generated node: where its three condition arms go and what its stub answers.
#[derive(Debug, Clone)]
struct GenNode {
    /// Forward targets (index into later nodes or the two ends), as fractions of what is left.
    goto_a: usize,
    otherwise_b: usize,
    otherwise: usize,
    revise_back: usize,
    budget: u8,
    answer: u8,
    plain: bool,
}

fn gen_node() -> impl Strategy<Value = GenNode> {
    (
        0usize..8,
        0usize..8,
        0usize..8,
        0usize..8,
        0u8..4,
        0u8..3,
        proptest::bool::weighted(0.2),
    )
        .prop_map(
            |(goto_a, otherwise_b, otherwise, revise_back, budget, answer, plain)| GenNode {
                goto_a,
                otherwise_b,
                otherwise,
                revise_back,
                budget,
                answer,
                plain,
            },
        )
}

/// A workflow of standard nodes `s0…` and ends `ok`, `bad`: each routes on its variable `v` —
/// `"a"` forward, `"b"` revise to itself or an earlier node with a budget, else forward.
fn source(nodes: &[GenNode]) -> (String, Vec<(String, String)>) {
    use std::fmt::Write as _;
    let n = nodes.len();
    let forward = |i: usize, pick: usize| {
        let later = n - i - 1 + 2;
        let k = pick % later;
        if k < n - i - 1 {
            format!("s{}", i + 1 + k)
        } else if k == n - i - 1 {
            "ok".into()
        } else {
            "bad".into()
        }
    };
    let mut src = String::from(
        "fun wf() = workflow(\"gen\") {\n    agents {\n        agent(\"a0\") { role = \"r\"; model = \"stub\" }\n        agent(\"a1\") { role = \"r\"; model = \"stub\" }\n    }\n    graph {\n        start at \"s0\"\n",
    );
    let mut stubs = Vec::new();
    for (i, g) in nodes.iter().enumerate() {
        let _ = writeln!(
            src,
            "        node(\"s{i}\") {{\n            agent = \"a{}\"\n            prompt = \"p\"",
            i % 2
        );
        if g.plain {
            let _ = writeln!(
                src,
                "            onSuccess goto \"{}\"",
                forward(i, g.goto_a)
            );
        } else {
            let _ = writeln!(
                src,
                "            writes(\"v\")\n            onCondition(\"v\") {{\n                whenValue equalTo \"a\" goto \"{}\"\n                whenValue equalTo \"b\" revise \"s{}\" retry {} otherwise \"{}\"\n                otherwise goto \"{}\"\n            }}",
                forward(i, g.goto_a),
                g.revise_back % (i + 1),
                g.budget,
                forward(i, g.otherwise_b),
                forward(i, g.otherwise),
            );
            let v = ["a", "b", "c"][g.answer as usize];
            stubs.push((format!("s{i}"), format!("{{\"v\": \"{v}\"}}")));
        }
        src.push_str("        }\n");
    }
    src.push_str("        end(\"ok\")\n        end(\"bad\", ExitStatus.FAILURE)\n    }\n}\n");
    (src, stubs)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn a_stub_run_never_exceeds_the_static_bound(nodes in proptest::collection::vec(gen_node(), 1..6)) {
        let (src, stubs) = source(&nodes);
        let lowered = hensu_sema::lower_source(
            &src,
            hensu_diagnostics::FileId::default(),
            &hensu_sema::files::NoFiles,
        );
        let errors: Vec<_> = lowered.diagnostics.iter().filter(|d| d.is_error()).collect();
        prop_assert!(errors.is_empty(), "{src}\n{errors:?}");
        let wf = lowered.workflow.unwrap();
        let bound = bounds::analyze(&wf, &|_| None, &BoundsOptions::default());

        let provider = StubProvider::new(None, None);
        for (id, text) in &stubs {
            provider.registry().register("default", id, text);
        }
        let counter = Arc::new(Counter::default());
        let engine = Engine::builder()
            .provider(Arc::new(provider))
            .build();
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        let cancel = CancelToken::new();
        let run = hensu_runtime::RunCtx::new(&cancel).listener(counter.as_ref());
        let result = runtime.block_on(engine.run(&wf, Default::default(), run));
        prop_assert!(
            matches!(result.outcome, hensu_runtime::RunOutcome::Completed { .. }),
            "{src}\n{:?}", result.outcome
        );

        let nodes_run = counter.nodes.lock().unwrap().clone();
        let total: u64 = nodes_run.values().sum();
        prop_assert!(Count::Finite(total) <= bound.node_executions, "{src}\ntotal {total} > {:?}", bound.node_executions);
        for (node, runs) in &nodes_run {
            let b = bound.per_node[node];
            prop_assert!(Count::Finite(*runs) <= b, "{src}\n{node}: {runs} > {b:?}");
        }
        for (agent, calls) in counter.agents.lock().unwrap().iter() {
            let b = bound.agent_calls[agent].calls;
            prop_assert!(Count::Finite(*calls) <= b, "{src}\n{agent}: {calls} > {b:?}");
        }
    }
}
