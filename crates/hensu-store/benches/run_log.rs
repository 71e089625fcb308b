//! Per-step cost of the run log against the full-snapshot checkpoint, at 1,000 and 20,000
//! steps, on an SQLite file (`synchronous=NORMAL`, the default), in one run:
//!
//! `cargo bench -p hensu-store --bench run_log`
//!
//! The run is a chain of stub nodes shaped like the runtime's state: every step appends a
//! history row, stores the node's output in the context, and moves `current_node` and
//! `steps` — so the state grows with the run, as a real one does.
//!
//! - `append_whole_run(n)`: a whole run of `n` appended steps from creation, compactions under
//!   the default [`SnapshotPolicy`] included; divan's throughput line is steps per second, and
//!   the time divided by `n` is the per-step cost (flat: the same at 1,000 and 20,000);
//! - `append_whole_run_without_compaction(n)`: the same with [`SnapshotPolicy::NEVER`]: the
//!   difference is the compactions' amortized cost per step;
//! - `append_whole_run_snapshot_sent(n)`: the same run under the default policy, with the
//!   caller holding the state (as the runtime does) and sending it when the store asks
//!   ([`StepSnapshot::OnRequest`]) instead of the store replaying its log; the caller's
//!   upkeep of the state is included;
//! - `append_step_at(n)`: one more appended step on a run already `n` steps long;
//! - `checkpoint_step_at(n)`: one more full-snapshot checkpoint (the old path, which the
//!   runtime calls today) of a state `n` steps long, serialization included (grows with `n`).
//!
//! Measured (2-core machine, quiet, one run, medians; 2026-12-02, schema 3): whole run under
//! the default policy 32.3 ms / 1,000 steps and 664 ms / 20,000 steps = 33.2 µs per step
//! (flat); with compaction off 21.5 µs per step at 20,000 (so compaction, which re-encodes a
//! state holding the run's history, is ~12 µs of a step here, where every step's output is in
//! both the context and the history); the snapshot sent by the caller 32.3 µs (the caller's
//! clone of its state when asked is in that figure); one appended step 13.7 µs at 1,000 and
//! 13.9 µs at 20,000; one full-snapshot checkpoint 0.61 ms at 1,000 and 23.4 ms at 20,000.

use divan::{Bencher, counter::ItemsCount};
use hensu_store::{
    Lease, OwnerId, RecordUpdate, RunRecord, SnapshotPolicy, SqliteStore, StateDelta, StateStore,
    StepEntry, StepSnapshot, StoreOptions,
};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

const SIZES: [u64; 2] = [1_000, 20_000];

fn output(n: u64) -> String {
    format!("stub output of node_{n}: the draft was reviewed and passed")
}

fn history_row(n: u64) -> Value {
    json!({"step": n, "node_id": format!("node_{n}"), "status": "SUCCESS", "output": output(n), "at_ms": n * 3})
}

fn initial_state() -> Value {
    json!({
        "execution_id": "bench",
        "workflow_id": "chain",
        "current_node": "node_1",
        "context": {"topic": "durable workflows"},
        "history": [],
        "backtracks": [],
        "retry_counters": {},
        "phase": {"type": "INITIAL"},
        "steps": 0,
    })
}

/// What step `n` changes, as the engine would hand it over.
fn step(n: u64) -> StepEntry {
    let node = format!("node_{n}");
    StepEntry {
        node: Some(node.clone()),
        node_status: Some("SUCCESS".into()),
        output: Some(json!(output(n))),
        delta: StateDelta::new()
            .set(&["context", &node], json!(output(n)))
            .push(&["history"], history_row(n))
            .replace(&["current_node"], json!(format!("node_{}", n + 1)))
            .replace(&["steps"], json!(n)),
        started_at: Some(n * 3),
        duration_ms: Some(0),
        snapshot: StepSnapshot::ByStore,
    }
}

/// The same change applied to a full state (the checkpoint path's input).
fn advance(state: &mut Value, n: u64) {
    let node = format!("node_{n}");
    state["context"][node] = json!(output(n));
    if let Some(h) = state["history"].as_array_mut() {
        h.push(history_row(n));
    }
    state["current_node"] = json!(format!("node_{}", n + 1));
    state["steps"] = json!(n);
}

fn open() -> (tempfile::TempDir, SqliteStore) {
    open_with(SnapshotPolicy::default())
}

fn open_with(snapshot_policy: SnapshotPolicy) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("tempdir: {e}"));
    let opts = StoreOptions {
        snapshot_policy,
        ..StoreOptions::default()
    };
    let store = SqliteStore::open_file(dir.path().join("state.db"), opts)
        .unwrap_or_else(|e| panic!("open: {e}"));
    (dir, store)
}

fn start(store: &SqliteStore, id: &str, state: &Value) -> Lease {
    let record = RunRecord::new(id, "chain", "v1", Some("node_1".into()));
    crate::wait(store.create_run(&record, &json!({"id": "chain"}), state))
        .and_then(|()| crate::wait(store.acquire(id, &OwnerId::current())))
        .unwrap_or_else(|e| panic!("bench setup: {e}"))
}

fn append(store: &SqliteStore, lease: &Lease, n: u64) {
    let update = RecordUpdate::running(format!("node_{}", n + 1));
    crate::wait(store.append(lease, n - 1, &update, &step(n)))
        .unwrap_or_else(|e| panic!("append {n}: {e}"));
}

#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn append_whole_run(bencher: Bencher, n: u64) {
    whole_run(bencher, n, SnapshotPolicy::default());
}

/// The same run with compaction off: the difference to `append_whole_run` is what the
/// compactions cost, amortized per step, in the same run.
#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn append_whole_run_without_compaction(bencher: Bencher, n: u64) {
    whole_run(bencher, n, SnapshotPolicy::NEVER);
}

/// The default policy, the snapshot sent by the caller when asked.
#[divan::bench(args = SIZES, sample_count = 3, sample_size = 1)]
fn append_whole_run_snapshot_sent(bencher: Bencher, n: u64) {
    let (_dir, store) = open();
    let mut run = 0u64;
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        run += 1;
        let mut state = initial_state();
        let lease = start(&store, &format!("run{run}"), &state);
        let mut wanted = false;
        for k in 1..=n {
            advance(&mut state, k);
            let entry = StepEntry {
                snapshot: if wanted {
                    StepSnapshot::State(state.clone())
                } else {
                    StepSnapshot::OnRequest
                },
                ..step(k)
            };
            let update = RecordUpdate::running(format!("node_{}", k + 1));
            wanted = crate::wait(store.append(&lease, k - 1, &update, &entry))
                .unwrap_or_else(|e| panic!("append {k}: {e}"))
                .snapshot_wanted;
        }
    });
}

fn whole_run(bencher: Bencher, n: u64, policy: SnapshotPolicy) {
    let (_dir, store) = open_with(policy);
    let mut run = 0u64;
    bencher.counter(ItemsCount::new(n)).bench_local(|| {
        run += 1;
        let lease = start(&store, &format!("run{run}"), &initial_state());
        for k in 1..=n {
            append(&store, &lease, k);
        }
    });
}

#[divan::bench(args = SIZES, sample_count = 50, sample_size = 20)]
fn append_step_at(bencher: Bencher, n: u64) {
    let (_dir, store) = open();
    let lease = start(&store, "r", &initial_state());
    for k in 1..=n {
        append(&store, &lease, k);
    }
    let mut k = n;
    bencher.bench_local(|| {
        k += 1;
        append(&store, &lease, k);
    });
}

#[divan::bench(args = SIZES, sample_count = 20, sample_size = 1)]
fn checkpoint_step_at(bencher: Bencher, n: u64) {
    let (_dir, store) = open();
    let mut state = initial_state();
    for k in 1..=n {
        advance(&mut state, k);
    }
    let lease = start(&store, "r", &state);
    let mut k = n;
    let mut expected = 0;
    bencher.bench_local(|| {
        k += 1;
        advance(&mut state, k);
        let c =
            crate::wait(store.checkpoint(&lease, expected, &RecordUpdate::running("n"), &state))
                .unwrap_or_else(|e| panic!("checkpoint: {e}"));
        expected = c.step;
    });
}

/// Awaits a store call (the store is async) on one current-thread runtime: the cost measured
/// includes the hand-off to the store's writer thread and back, as a caller pays it.
fn wait<F: std::future::Future>(call: F) -> F::Output {
    thread_local! {
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("bench runtime");
    }
    RT.with(|rt| rt.block_on(call))
}
