//! What a fork costs against the parent's length: `cargo bench -p hensu-store --bench fork`.
//!
//! A fork references its parent's log prefix instead of copying it (docs/cli.md, *Time
//! travel*), so forking a 20,000-step run must cost what forking a 20-step run costs
//! (the bound: at most 2×). Each sample forks the parent at its last step as a new
//! run (record, workflow copied from the parent, the `forked` row with an edit, one
//! transaction), on an SQLite file (`synchronous=NORMAL`, the default policy).
//!
//! Measured (2-core shared machine, one run, medians): see docs/performance.md, *Forks*.

use divan::Bencher;
use hensu_store::{
    ForkSpec, OwnerId, RecordUpdate, RunParent, RunRecord, RunStatus, SqliteStore, StateDelta,
    StateStore, StepEntry, StoreOptions,
};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const SIZES: [u64; 2] = [20, 20_000];

fn wait<F: std::future::Future>(call: F) -> F::Output {
    thread_local! {
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("bench runtime");
    }
    RT.with(|rt| rt.block_on(call))
}

fn initial_state() -> Value {
    json!({
        "execution_id": "bench",
        "workflow_id": "chain",
        "current_node": "node_1",
        "context": {"topic": "durable workflows"},
        "history": [],
        "phase": {"type": "INITIAL"},
        "steps": 0,
    })
}

/// A parent run of `n` steps shaped like the runtime's (every step adds an output to the
/// context and a history row), compacted under the default policy.
fn parent(n: u64) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("tempdir: {e}"));
    let store = SqliteStore::open_file(dir.path().join("state.db"), StoreOptions::default())
        .unwrap_or_else(|e| panic!("open: {e}"));
    let record = RunRecord::new("parent", "chain", "v1", Some("node_1".into()));
    let workflow =
        json!({"id": "chain", "nodes": (0..50).map(|i| format!("node_{i}")).collect::<Vec<_>>()});
    wait(store.create_run(&record, &workflow, &initial_state())).expect("create");
    let lease = wait(store.acquire("parent", &OwnerId::current())).expect("acquire");
    for k in 1..=n {
        let node = format!("node_{k}");
        let out = format!("stub output of {node}: the draft was reviewed and passed");
        let entry = StepEntry {
            node: Some(node.clone()),
            node_status: Some("SUCCESS".into()),
            output: Some(json!(out)),
            delta: StateDelta::new()
                .set(&["context", &node], json!(out))
                .push(
                    &["history"],
                    json!({"step": k, "node_id": node, "status": "SUCCESS"}),
                )
                .replace(&["current_node"], json!(format!("node_{}", k + 1)))
                .replace(&["steps"], json!(k)),
            ..StepEntry::default()
        };
        let update = RecordUpdate::running(format!("node_{}", k + 1));
        wait(store.append(&lease, k - 1, &update, &entry)).expect("append");
    }
    (dir, store)
}

#[divan::bench(args = SIZES, sample_count = 100, sample_size = 10)]
fn fork_at_the_last_step(bencher: Bencher, n: u64) {
    let (_dir, store) = parent(n);
    let mut i = 0u64;
    bencher.bench_local(|| {
        i += 1;
        let mut record = RunRecord::new(format!("fork{i}"), "chain", "v1", None);
        record.status = RunStatus::Queued;
        record.current_node = Some(format!("node_{}", n + 1));
        let spec = ForkSpec {
            parent: RunParent {
                run_id: "parent".into(),
                step: n,
            },
            record,
            workflow: None,
            edits: StateDelta::new().set(&["context", "topic"], json!("forked")),
            tenant: None,
        };
        wait(store.fork(&spec)).expect("fork")
    });
}
