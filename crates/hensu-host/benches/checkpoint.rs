//! End-to-end checkpoint cost: the boundary hook of a durable run ([`DurableRun`]: state →
//! JSON, redaction walk, the store's transaction) with a 100 KB context, beside a bare
//! serde_json round trip of the same context.
//!
//! `cargo bench -p hensu-host --bench checkpoint`

#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use hensu_host::{DurableRun, SnapshotRedactor};
use hensu_runtime::*;
use hensu_store::{MemoryStore, OwnerId, RunRecord, SqliteStore, StateStore};
use serde_json::{Value, json};

fn main() {
    divan::main();
}

/// A state whose context holds ~100 KB: 100 entries of ~1 KB text, plus a short history.
fn state() -> RunState {
    let mut ctx = Context::default();
    for i in 0..100 {
        ctx.insert(
            format!("key{i}"),
            Value::String(format!("{i:04} ").repeat(200)),
        );
    }
    let mut s = RunState::new("r".into(), "wf".into(), "n0".into(), ctx);
    for i in 0..10 {
        s.history.push(HistoryStep {
            step: i + 1,
            node_id: format!("n{i}"),
            status: NodeStatus::Success,
            output: Some(json!("short output")),
            error: None,
            at_ms: i,
            rubric: None,
            usage: None,
            compensates: None,
        });
    }
    s
}

#[divan::bench]
fn serde_round_trip(b: divan::Bencher) {
    let s = state();
    let bytes = serde_json::to_vec(&s.context).unwrap().len();
    assert!(bytes > 100_000, "{bytes}");
    b.bench(|| {
        let text = serde_json::to_string(divan::black_box(&s.context)).unwrap();
        let back: Context = serde_json::from_str(&text).unwrap();
        back
    });
}

fn durable(
    rt: &tokio::runtime::Runtime,
    store: Arc<dyn StateStore>,
    redact: bool,
) -> (DurableRun, RunState) {
    let s = state();
    let r: Option<SnapshotRedactor> = if redact {
        Some(Arc::new(|v: &mut Value| walk(v)))
    } else {
        None
    };
    let d = rt
        .block_on(DurableRun::create(
            store,
            &RunRecord::new("r", "wf", "1", Some("n0".into())),
            &json!({}),
            &s,
            &OwnerId::current(),
            r,
        ))
        .unwrap();
    (d, s)
}

/// What a provider-key redactor does on a snapshot with no key in it: visit every string.
fn walk(v: &mut Value) {
    match v {
        Value::String(s) => {
            divan::black_box(s.contains("sk-never-present"));
        }
        Value::Array(a) => a.iter_mut().for_each(walk),
        Value::Object(m) => m.values_mut().for_each(walk),
        _ => {}
    }
}

#[divan::bench(args = [false, true])]
fn checkpoint_memory(b: divan::Bencher, redact: bool) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (d, s) = durable(&rt, Arc::new(MemoryStore::new()), redact);
    b.bench_local(|| rt.block_on(d.record_step(&s)).unwrap());
}

#[divan::bench(args = [false, true])]
fn checkpoint_sqlite(b: divan::Bencher, redact: bool) {
    let dir = tempfile::tempdir().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (d, s) = durable(
        &rt,
        Arc::new(SqliteStore::open(dir.path()).unwrap()),
        redact,
    );
    b.bench_local(|| rt.block_on(d.record_step(&s)).unwrap());
}
