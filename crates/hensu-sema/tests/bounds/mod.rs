//! The static worst-case bound (docs/bounds.md) of every example, computed by hand.
//!
//! Notation: `pos` is the topological order of the forward edges, `F(e)` the firings of a
//! budgeted edge, `epochs(o) = 1 + Σ F(e')` over edges crossing `o` backwards, a node's runs are
//! its entries, a predecessor moves forward at most `min(runs, epochs)` times, end nodes run once
//! in total. Agent calls are runs × 2 when the answer must carry JSON keys (`writes`, a rubric,
//! score/approval/condition routing, consensus votes: one structured-output correction by
//! default), runs × 1 otherwise.

#![allow(clippy::unwrap_used, clippy::panic)] // test code: a failed unwrap is a failed test

use std::collections::BTreeMap;

use hensu_ir::Workflow;
use hensu_sema::bounds::{self, BoundsOptions, CostBound, Count, Price};
use hensu_sema::files::{FileError, FileProvider, ResourceDir};

struct ExampleFiles(std::path::PathBuf);

impl FileProvider for ExampleFiles {
    fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
        std::fs::read_to_string(self.0.join(dir.as_str()).join(relative))
            .map_err(|_| FileError::NotFound)
    }
}

fn examples() -> BTreeMap<String, Workflow> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(root.join("workflows")).unwrap() {
        let path = entry.unwrap().path();
        let src = std::fs::read_to_string(&path).unwrap();
        let lowered = hensu_sema::lower_source(
            &src,
            hensu_diagnostics::FileId::default(),
            &ExampleFiles(root.clone()),
        );
        let wf = lowered.workflow.expect("every example lowers");
        out.insert(wf.id.clone(), wf);
    }
    out
}

fn bound(id: &str) -> bounds::WorkflowBounds {
    let all = examples();
    let lookup = |name: &str| all.get(name);
    bounds::analyze(&all[id], &lookup, &BoundsOptions::default())
}

#[track_caller]
fn assert_bound(id: &str, total: u64, nodes: &[(&str, u64)], calls: &[(&str, u64)]) {
    let b = bound(id);
    assert_eq!(
        b.node_executions,
        Count::Finite(total),
        "{id}: node executions"
    );
    let got_nodes: Vec<(&str, u64)> = b
        .per_node
        .iter()
        .map(|(k, v)| (k.as_str(), v.finite().unwrap()))
        .collect();
    let mut want_nodes = nodes.to_vec();
    want_nodes.sort();
    assert_eq!(got_nodes, want_nodes, "{id}: per node");
    let got_calls: Vec<(&str, u64)> = b
        .agent_calls
        .iter()
        .map(|(k, v)| (k.as_str(), v.calls.finite().unwrap()))
        .collect();
    let mut want_calls = calls.to_vec();
    want_calls.sort();
    assert_eq!(got_calls, want_calls, "{id}: agent calls");
    assert!(b.unbounded_cycles.is_empty(), "{id}: no unbounded cycle");
}

/// research(0) → draft(1) → critique(2) → final_check(3). critique revise→draft ≤2 (e1),
/// final_check revise→research ≤1 (e2). F(e2) = 1·1; epochs(critique) = 1 + F(e2) = 2, F(e1) = 4.
/// research = 1 + F(e2) = 2; draft = min(2, epochs(research) = 2) + F(e1) = 6;
/// critique = min(6, epochs(draft) = 1 + 4 + 1) = 6; final_check = min(6, epochs(critique) = 2)
/// = 2; one end. 2 + 6 + 6 + 2 + 1 = 17 (exact). Every node writes: calls × 2.
#[test]
fn backtrack_routing() {
    assert_bound(
        "backtrack-routing",
        17,
        &[
            ("research", 2),
            ("draft", 6),
            ("critique", 6),
            ("final_check", 2),
            ("done", 1),
            ("give-up", 1),
        ],
        &[("researcher", 4), ("writer", 12), ("critic", 16)],
    );
}

/// vote revise→draft ≤2: F = 2. draft = 3, vote = min(3, epochs(draft) = 3) = 3,
/// publish = min(3, epochs(vote) = 1) = 1, one end: 8. writer = draft 3×2 + publish 1×1.
#[test]
fn consensus_vote() {
    assert_bound(
        "consensus-vote",
        8,
        &[
            ("draft", 3),
            ("vote", 3),
            ("publish", 1),
            ("done", 1),
            ("rejected", 1),
        ],
        &[
            ("reviewer1", 6),
            ("reviewer2", 6),
            ("reviewer3", 6),
            ("writer", 7),
        ],
    );
}

/// write: score arms cover every score, so no rubric auto-backtrack; revise→write ≤3 (e1).
/// review revise→write ≤2 (e2): F(e2) = 2, epochs(write) = 3, F(e1) = 9. write = 1 + 9 + 2 = 12,
/// review = min(12, 3) = 3, one end: 16 (exact).
#[test]
fn content_pipeline() {
    assert_bound(
        "content-pipeline",
        16,
        &[("write", 12), ("review", 3), ("done", 1), ("needs-work", 1)],
        &[("writer", 24), ("reviewer", 6)],
    );
}

/// diagnose retry ≤2: 3 runs; page-oncall = min(3, 1) = 1; one end: 5.
#[test]
fn escalation() {
    assert_bound(
        "escalation",
        5,
        &[
            ("diagnose", 3),
            ("page-oncall", 1),
            ("resolved", 1),
            ("escalated", 1),
        ],
        &[("sre", 6)],
    );
}

/// generate 1; publish retry ≤2: 3; one end: 5.
#[test]
fn executable_actions() {
    assert_bound(
        "executable-actions",
        5,
        &[("generate", 1), ("publish", 3), ("done", 1), ("failed", 1)],
        &[("generator", 2)],
    );
}

/// fork 1, each target 1, the join once (sub-flows stop at it; retry ≤0 adds nothing), format-post
/// 1, one end: 6. writer = intro 2 + body 2 + format-post 1.
#[test]
fn fork_join_concatenate() {
    assert_bound(
        "fork-join-concatenate",
        6,
        &[
            ("fork-sections", 1),
            ("write-intro", 1),
            ("write-body", 1),
            ("join-sections", 1),
            ("format-post", 1),
            ("done", 1),
            ("failed", 1),
        ],
        &[("writer", 5)],
    );
}

#[test]
fn fork_join_first_successful() {
    assert_bound(
        "fork-join-first-successful",
        5,
        &[
            ("fork", 1),
            ("fast-translation", 1),
            ("careful-translation", 1),
            ("join", 1),
            ("done", 1),
            ("failed", 1),
        ],
        &[("fast", 2), ("careful", 2)],
    );
}

#[test]
fn fork_join_merge_maps() {
    assert_bound(
        "fork-join-merge-maps",
        6,
        &[
            ("split", 1),
            ("extract-vendor", 1),
            ("extract-amounts", 1),
            ("merge", 1),
            ("record", 1),
            ("done", 1),
            ("failed", 1),
        ],
        &[("extractor", 4)],
    );
}

/// fork, three targets, join, report, one end: 7. analyst 3 × 2, writer (no JSON) 1.
#[test]
fn fork_join() {
    assert_bound(
        "fork-join",
        7,
        &[
            ("fork-research", 1),
            ("market-research", 1),
            ("finance-research", 1),
            ("people-research", 1),
            ("join-research", 1),
            ("report", 1),
            ("done", 1),
            ("failed", 1),
        ],
        &[("analyst", 6), ("writer", 1)],
    );
}

/// normalize retry ≤1: 2 runs.
#[test]
fn generic_node() {
    assert_bound(
        "generic-node",
        5,
        &[
            ("validate-input", 1),
            ("normalize", 2),
            ("summarize", 1),
            ("done", 1),
            ("invalid", 1),
        ],
        &[("summarizer", 2)],
    );
}

/// A reviewer's manual backtrack is a human decision, not counted (docs/bounds.md).
#[test]
fn human_review() {
    assert_bound(
        "human-review",
        3,
        &[("plan", 1), ("execute", 1), ("done", 1), ("cancelled", 1)],
        &[("planner", 2), ("executor", 2)],
    );
}

/// Two branches and the judge, each once with a correction; calm also writes the announcement.
#[test]
fn judge_decides() {
    assert_bound(
        "judge-decides",
        3,
        &[
            ("pitch", 1),
            ("announce", 1),
            ("done", 1),
            ("no-headline", 1),
        ],
        &[("bold", 2), ("calm", 3), ("judge", 2)],
    );
}

/// 4 own executions + the child sub-summarizer (summarize, done) once: 6.
#[test]
fn main_research() {
    assert_bound(
        "main-research",
        6,
        &[
            ("research", 1),
            ("delegate_summary", 1),
            ("publish", 1),
            ("done", 1),
        ],
        &[
            ("researcher", 2),
            ("editor", 1),
            ("sub-summarizer/summarizer", 2),
        ],
    );
}

/// draft: condition revise→draft ≤2 (e1), onFailure retry 1 (e2, its own counter); review
/// revise→draft ≤3 (e3). F(e3) = 3, epochs(draft) = 4, F(e1) = 8, F(e2) = 4. draft = 1 + 8 + 4
/// + 3 = 16, review = min(16, 4) = 4, publish = min(4, 1) = 1, one end: 22.
#[test]
fn mini_review() {
    assert_bound(
        "mini_review",
        22,
        &[
            ("draft", 16),
            ("review", 4),
            ("publish", 1),
            ("done", 1),
            ("failed", 1),
        ],
        &[("writer", 32), ("reviewer", 8)],
    );
}

/// work revise→work ≤4 (e1), verify revise→work ≤2 (e2). F(e2) = 2, epochs(work) = 3,
/// F(e1) = 12. work = 15, verify = min(15, 3) = 3, escalate = 3 (from work) + 1 (from verify) =
/// 4: loose, it is followed by an end so it really runs once. 15 + 3 + 4 + 1 = 23.
#[test]
fn ralph_loop() {
    assert_bound(
        "ralph-loop",
        23,
        &[
            ("work", 15),
            ("verify", 3),
            ("escalate", 4),
            ("done", 1),
            ("stuck", 1),
        ],
        &[("worker", 30), ("checker", 6)],
    );
}

/// write revise ≤2: 3; improve = min(3, 1) = 1; one end: 5.
#[test]
fn self_evaluation() {
    assert_bound(
        "self-evaluation",
        5,
        &[("write", 3), ("improve", 1), ("publish", 1), ("abandon", 1)],
        &[("writer", 6), ("editor", 2)],
    );
}

#[test]
fn sub_summarizer() {
    assert_bound(
        "sub-summarizer",
        2,
        &[("summarize", 1), ("done", 1)],
        &[("summarizer", 2)],
    );
}

/// critique revise→draft ≤2: draft 3, critique min(3, epochs(draft) = 3) = 3.
#[test]
fn travel_guide() {
    assert_bound(
        "travel_guide",
        8,
        &[("research", 1), ("draft", 3), ("critique", 3), ("end", 1)],
        &[("researcher", 2), ("writer", 6), ("critic", 6)],
    );
}

/// author has a rubric and no onScore: it may re-run itself 3 times per epoch (the start is
/// itself, so no back-track elsewhere). gate revise→author ≤2: F = 2, epochs(author) = 3,
/// rubric re-runs F = 9. author = 1 + 9 + 2 = 12, gate = min(12, 3) = 3, one end: 16.
#[test]
fn unanimous_vote() {
    assert_bound(
        "unanimous-vote",
        16,
        &[("author", 12), ("gate", 3), ("ship", 1), ("human", 1)],
        &[("author", 24), ("crypto", 6), ("authz", 6)],
    );
}

#[test]
fn weighted_vote() {
    assert_bound(
        "weighted-vote",
        2,
        &[("review", 1), ("approved", 1), ("rejected", 1)],
        &[("junior1", 2), ("junior2", 2), ("senior", 2)],
    );
}

/// Cost: content-pipeline with prices; 24 writer calls and 6 reviewer calls, each 4000 input
/// tokens (assumed) and 4096 output tokens (default maxTokens).
#[test]
fn content_pipeline_cost() {
    let all = examples();
    let lookup = |name: &str| all.get(name);
    let mut options = BoundsOptions::default();
    options.pricing.insert(
        "claude-sonnet-4-5".into(),
        Price {
            input_per_mtok: 3.0,
            output_per_mtok: 15.0,
        },
    );
    let b = bounds::analyze(&all["content-pipeline"], &lookup, &options);
    assert_eq!(b.cost(&options), CostBound::Unpriced(vec!["gpt-4o".into()]));
    options.pricing.insert(
        "gpt-4o".into(),
        Price {
            input_per_mtok: 2.5,
            output_per_mtok: 10.0,
        },
    );
    let writer = 24.0 * (4000.0 * 3.0 + 4096.0 * 15.0) / 1e6;
    let reviewer = 6.0 * (4000.0 * 2.5 + 4096.0 * 10.0) / 1e6;
    let CostBound::Finite(c) = b.cost(&options) else {
        panic!("finite cost expected")
    };
    assert!((c - (writer + reviewer)).abs() < 1e-9, "{c}");
}

/// A cycle of plain gotos has no budget: unbounded, and the cycle is named.
#[test]
fn unbudgeted_cycle_is_unbounded() {
    let src = r#"
fun wf() = workflow("loop") {
    agents { agent("a") { role = "r"; model = "stub" } }
    graph {
        start at "x"
        node("x") { agent = "a"; prompt = "p"; onSuccess goto "y" }
        node("y") { agent = "a"; prompt = "p"; onSuccess goto "x" }
    }
}
"#;
    let files = hensu_sema::files::MemoryFiles::default();
    let wf = hensu_sema::lower_source(src, hensu_diagnostics::FileId::default(), &files)
        .workflow
        .unwrap();
    let b = bounds::analyze(&wf, &|_| None, &BoundsOptions::default());
    assert_eq!(b.node_executions, Count::Unbounded);
    assert_eq!(
        b.unbounded_cycles,
        vec![vec!["x".to_string(), "y".to_string()]]
    );
    assert_eq!(b.agent_calls["a"].calls, Count::Unbounded);
}

/// The rubric engine's own back-edge is limited like the runtime limits it: by the node's
/// bounded rule when it has one (here `onFailure retry 5`: 5 automatic re-runs per visit, not
/// the default 3), else by the run's limit; `retry 0` turns it off. draft = 1 + 5 (its
/// failure retries) + 5 (rubric re-runs), the start itself being the only earlier target.
#[test]
fn rubric_backtracks_use_the_nodes_own_budget() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    let source = |retry: u32| {
        format!(
            r#"workflow("rubric-budget") {{
    agents {{ agent("writer") {{ role = "Writer"; model = "stub" }} }}
    graph {{
        start at "draft"
        node("draft") {{
            agent = "writer"
            prompt = "Write"
            rubric = "content-quality.md"
            onSuccess goto "done"
            onFailure retry {retry} otherwise "done"
        }}
        end("done")
    }}
}}
"#
        )
    };
    let per_node = |retry: u32| {
        let lowered = hensu_sema::lower_source(
            &source(retry),
            hensu_diagnostics::FileId::default(),
            &ExampleFiles(root.clone()),
        );
        let wf = lowered.workflow.expect("lowers");
        let b = bounds::analyze(&wf, &|_| None, &BoundsOptions::default());
        b.per_node["draft"]
    };
    assert_eq!(per_node(5), Count::Finite(1 + 5 + 5));
    assert_eq!(per_node(0), Count::Finite(1));
}

/// book-flight → book-hotel → pay, once each; one end. travel-agent: two bookings × 2 (they
/// write) + one agent compensation (`cancel-hotel`, once per book-hotel visit, no correction);
/// `cancel-flight` runs actions, no agent. gateway: pay × 2.
#[test]
fn trip_booking() {
    assert_bound(
        "trip-booking",
        4,
        &[
            ("book-flight", 1),
            ("book-hotel", 1),
            ("pay", 1),
            ("booked", 1),
            ("declined", 1),
            ("failed", 1),
        ],
        &[("travel-agent", 5), ("gateway", 2)],
    );
}

/// draft → cool-off (1 h timer) → approval (signal, 48 h timeout) → published | escalated:
/// one timer and one signal wait, 49 hours of waiting at most (docs/bounds.md, *Waits*).
#[test]
fn approval_gate_counts_its_waits() {
    assert_bound(
        "approval-gate",
        4,
        &[
            ("draft", 1),
            ("cool-off", 1),
            ("approval", 1),
            ("published", 1),
            ("escalated", 1),
        ],
        &[("writer", 2)],
    );
    let w = bound("approval-gate").waits;
    assert_eq!(w.timers, Count::Finite(1));
    assert_eq!(w.signals, Count::Finite(1));
    assert_eq!(w.wait_ms, Count::Finite(49 * 3_600_000));
    // A workflow without waits has none.
    assert_eq!(bound("greeting").waits, bounds::Waits::default());
}

/// A map node (docs/language.md, *Map over a list*): `maxItems` calls of its agent per visit;
/// without `maxItems` the calls (and so the cost) are unbounded though the node runs once; a
/// sub-workflow body counts the child's calls `maxItems` times.
#[test]
fn map_nodes_count_max_items_calls() {
    assert_bound(
        "paper-digest",
        3,
        &[
            ("summarize-papers", 1),
            ("digest", 1),
            ("done", 1),
            ("failed", 1),
        ],
        // The digest writes a variable: one structured-output correction allowed.
        &[("summarizer", 20), ("editor", 2)],
    );
    let lower = |src: &str| {
        let files = hensu_sema::files::MemoryFiles::default();
        hensu_sema::lower_source(src, hensu_diagnostics::FileId::default(), &files)
            .workflow
            .unwrap()
    };
    let unbounded = lower(
        r#"
fun wf() = workflow("each") {
    state { input("xs", VarType.LIST_STRING) }
    agents { agent("a") { role = "r"; model = "stub" } }
    graph {
        start at "m"
        map("m") { over = "xs"; agent = "a"; prompt = "{item}"; onSuccess goto "e" }
        end("e")
    }
}
"#,
    );
    let b = bounds::analyze(&unbounded, &|_| None, &BoundsOptions::default());
    assert_eq!(b.node_executions, Count::Finite(2), "the node runs once");
    assert_eq!(b.agent_calls["a"].calls, Count::Unbounded);

    let child = lower(
        r#"
fun wf() = workflow("one") {
    state { input("item", VarType.STRING) }
    agents { agent("c") { role = "r"; model = "stub" } }
    graph {
        start at "w"
        node("w") { agent = "c"; prompt = "{item}"; onSuccess goto "e" }
        end("e")
    }
}
"#,
    );
    let parent = lower(
        r#"
fun wf() = workflow("all") {
    state { input("xs", VarType.LIST_STRING) }
    graph {
        start at "m"
        map("m") { over = "xs"; target = "one"; result = "item"; maxItems = 7; onSuccess goto "e" }
        end("e")
    }
}
"#,
    );
    let lookup = |id: &str| (id == "one").then_some(&child);
    let b = bounds::analyze(&parent, &lookup, &BoundsOptions::default());
    assert_eq!(b.agent_calls["one/c"].calls, Count::Finite(7));
    assert_eq!(
        b.node_executions,
        Count::Finite(2 + 7 * 2),
        "the child's two nodes per item"
    );
}
