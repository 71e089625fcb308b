//! Cost of one checkpoint of a run whose snapshot holds a ~100 KB context.
//!
//! `cargo bench -p hensu-store --bench checkpoint`
//!
//! - `serde_round_trip`: the floor — `serde_json::to_vec` + `from_slice` of the same snapshot;
//! - `memory_checkpoint` (target ≤ 1.5× the floor), `memory_checkpoint_and_load`;
//! - `sqlite_checkpoint` with `synchronous=NORMAL` (the default) and `FULL` (target ≤ 1 ms);
//! - `sqlite_load`: reading the run back (a resume).
//!
//! The SQLite file lives under `CARGO_TARGET_TMPDIR` (a real disk, not tmpfs).

use divan::Bencher;
use hensu_store::{
    Durability, MemoryStore, OwnerId, RecordUpdate, RunRecord, SqliteStore, StateStore,
    StoreOptions,
};
use serde_json::{Value, json};

fn main() {
    let s = snapshot();
    let len = serde_json::to_vec(&s).map(|v| v.len()).unwrap_or(0);
    eprintln!("snapshot: {len} bytes of JSON");
    divan::main();
}

/// A run state shaped like the runtime's `RunState`: agent outputs (prose and JSON) in the
/// context, a history with outputs, retry counters — about 100 KB of JSON.
fn snapshot() -> Value {
    let para = "The reviewer found that the draft covers the main points but lacks concrete \
                examples; the next revision should add two case studies and tighten the \
                introduction. ";
    let mut context = serde_json::Map::new();
    context.insert("topic".into(), json!("durable state for agent workflows"));
    context.insert("audience".into(), json!("platform engineers"));
    for i in 0..36 {
        context.insert(format!("draft_{i}"), json!(para.repeat(12)));
    }
    for i in 0..28 {
        context.insert(
            format!("analysis_{i}"),
            json!({
                "score": 70 + i,
                "passed": i % 3 != 0,
                "issues": (0..6).map(|k| format!("issue {k} of section {i}: {}", &para[..60])).collect::<Vec<_>>(),
                "sources": (0..4).map(|k| json!({"url": format!("https://example.invalid/{i}/{k}"), "title": format!("Source {k}")})).collect::<Vec<_>>(),
            }),
        );
    }
    let history: Vec<Value> = (1..=40)
        .map(|step| {
            json!({
                "step": step,
                "node_id": format!("node_{step}"),
                "status": "SUCCESS",
                "output": &para[..(step * 4).min(para.len())],
                "at_ms": step * 1234,
            })
        })
        .collect();
    json!({
        "execution_id": "run-0001",
        "workflow_id": "content-pipeline",
        "current_node": "review",
        "context": context,
        "history": history,
        "backtracks": [{"from": "review", "to": "write", "kind": "REVISE", "reason": "score below 80"}],
        "retry_counters": {"revise:review": 1},
        "phase": {"type": "INITIAL"},
        "steps": 40,
    })
}

#[divan::bench]
fn serde_round_trip(bencher: Bencher) {
    let s = snapshot();
    bencher.bench(|| {
        let bytes = serde_json::to_vec(divan::black_box(&s)).unwrap_or_default();
        let back: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        divan::black_box(back)
    });
}

fn run(store: &dyn StateStore, s: &Value) -> hensu_store::Lease {
    let record = RunRecord::new("r1", "content-pipeline", "v1", Some("start".into()));
    crate::wait(store.create_run(&record, &json!({"id": "content-pipeline"}), s))
        .and_then(|()| crate::wait(store.acquire("r1", &OwnerId::current())))
        .unwrap_or_else(|e| panic!("bench setup: {e}"))
}

fn bench_checkpoints(bencher: Bencher, store: &dyn StateStore) {
    let s = snapshot();
    let lease = run(store, &s);
    let update = RecordUpdate::running("review");
    let mut step = 0;
    bencher.bench_local(|| {
        let c = crate::wait(store.checkpoint(&lease, step, &update, divan::black_box(&s)))
            .unwrap_or_else(|e| panic!("checkpoint: {e}"));
        step = c.step;
    });
}

#[divan::bench]
fn memory_checkpoint(bencher: Bencher) {
    bench_checkpoints(bencher, &MemoryStore::new());
}

#[divan::bench]
fn memory_checkpoint_and_load(bencher: Bencher) {
    let store = MemoryStore::new();
    let s = snapshot();
    let lease = run(&store, &s);
    let update = RecordUpdate::running("review");
    let mut step = 0;
    bencher.bench_local(|| {
        let c = crate::wait(store.checkpoint(&lease, step, &update, divan::black_box(&s)))
            .unwrap_or_else(|e| panic!("checkpoint: {e}"));
        step = c.step;
        divan::black_box(
            crate::wait(store.load("r1"))
                .map(|r| r.snapshot)
                .unwrap_or(Value::Null),
        )
    });
}

fn sqlite(durability: Durability) -> (tempfile::TempDir, SqliteStore) {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap_or_else(|e| panic!("tempdir: {e}"));
    let store = SqliteStore::open_file(
        dir.path().join(".hensu/state.db"),
        StoreOptions {
            durability,
            ..StoreOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("open: {e}"));
    (dir, store)
}

#[divan::bench(sample_count = 200, sample_size = 5)]
fn sqlite_checkpoint_normal(bencher: Bencher) {
    let (_dir, store) = sqlite(Durability::Normal);
    bench_checkpoints(bencher, &store);
}

#[divan::bench(sample_count = 100, sample_size = 2)]
fn sqlite_checkpoint_full(bencher: Bencher) {
    let (_dir, store) = sqlite(Durability::Full);
    bench_checkpoints(bencher, &store);
}

#[divan::bench(sample_count = 200, sample_size = 5)]
fn sqlite_load(bencher: Bencher) {
    let (_dir, store) = sqlite(Durability::Normal);
    let s = snapshot();
    let _lease = run(&store, &s);
    bencher.bench(|| {
        divan::black_box(
            crate::wait(store.load("r1"))
                .map(|r| r.snapshot)
                .unwrap_or(Value::Null),
        )
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
