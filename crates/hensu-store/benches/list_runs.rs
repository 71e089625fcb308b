//! Listing a tenant's executions at 100,000 runs (docs/performance.md, *Listing executions*;
//! target: a page in ≤ 50 ms).
//!
//! `cargo bench -p hensu-store --bench list_runs`
//!
//! One SQLite file (under `CARGO_TARGET_TMPDIR`) holds 100,000 runs of one tenant (98%
//! completed, 1% running, 1% paused; ten workflows) and 1,000 of another tenant, created
//! through the registry as the server creates them. Measured:
//!
//! - `page_*`: one page of 50 (`WorkflowRegistry::tenant_runs_page`): the first, one half-way
//!   down through a cursor, filtered by workflow, by a rare status (running), by a common
//!   status (completed), by a time window;
//! - `full_list_baseline`: what `GET /api/v1/executions` did before paging — the tenant's run
//!   ids (`tenant_runs`), then each record.

use std::sync::{Arc, OnceLock};

use divan::Bencher;
use hensu_store::{
    RunCursor, RunQuery, RunRecord, RunStatus, SqliteStore, StateStore, StoreOptions,
    WorkflowRegistry,
};

const RUNS: u64 = 100_000;

fn main() {
    divan::main();
}

struct Fixture {
    _dir: tempfile::TempDir,
    store: SqliteStore,
    registry: Arc<dyn WorkflowRegistry>,
    /// The cursor after the first half of the tenant's runs.
    middle: RunCursor,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .unwrap_or_else(|e| panic!("tempdir: {e}"));
        let store =
            SqliteStore::open_file(dir.path().join(".hensu/state.db"), StoreOptions::default())
                .unwrap_or_else(|e| panic!("open: {e}"));
        let registry = wait(store.registry()).unwrap_or_else(|e| panic!("registry: {e}"));
        let started = std::time::Instant::now();
        let wf = br#"{"id": "wf"}"#;
        let state = serde_json::json!({"context": {"topic": "rust"}});
        for i in 0..RUNS + 1_000 {
            let (tenant, n) = if i < RUNS {
                ("big", i)
            } else {
                ("small", i - RUNS)
            };
            let mut r = RunRecord::new(
                format!("{tenant}-{n:06}"),
                format!("wf-{}", n % 10),
                "v1",
                Some("start".into()),
            );
            // Several runs per millisecond, as under load.
            r.started_at = 1_700_000_000_000 + n / 4;
            r.updated_at = r.started_at;
            r.status = match n % 100 {
                0 => RunStatus::Running,
                1 => RunStatus::Paused,
                _ => RunStatus::Completed,
            };
            wait(registry.create_tenant_run(tenant, &r, wf, &state))
                .unwrap_or_else(|e| panic!("create: {e}"));
        }
        eprintln!(
            "created {} runs in {:.1} s",
            RUNS + 1_000,
            started.elapsed().as_secs_f64()
        );
        let half = RunQuery {
            limit: 500,
            ..RunQuery::default()
        };
        let mut q = half.clone();
        for _ in 0..(RUNS / 2 / 500) {
            let page = wait(registry.tenant_runs_page("big", &q)).unwrap_or_else(|e| panic!("{e}"));
            q.cursor = page.next_cursor;
        }
        let middle = q.cursor.unwrap_or_else(|| panic!("no middle cursor"));
        Fixture {
            _dir: dir,
            store,
            registry,
            middle,
        }
    })
}

fn page(bencher: Bencher, query: RunQuery) {
    let f = fixture();
    bencher.bench(|| {
        let page = wait(f.registry.tenant_runs_page("big", &query))
            .unwrap_or_else(|e| panic!("page: {e}"));
        divan::black_box(page.records.len())
    });
}

#[divan::bench(sample_count = 50)]
fn page_first(bencher: Bencher) {
    page(bencher, RunQuery::default());
}

#[divan::bench(sample_count = 50)]
fn page_middle_by_cursor(bencher: Bencher) {
    let cursor = Some(fixture().middle.clone());
    page(
        bencher,
        RunQuery {
            cursor,
            ..RunQuery::default()
        },
    );
}

#[divan::bench(sample_count = 50)]
fn page_by_workflow(bencher: Bencher) {
    page(
        bencher,
        RunQuery {
            workflow_id: Some("wf-3".into()),
            ..RunQuery::default()
        },
    );
}

#[divan::bench(sample_count = 50)]
fn page_rare_status_running(bencher: Bencher) {
    page(
        bencher,
        RunQuery {
            statuses: vec![RunStatus::Running],
            ..RunQuery::default()
        },
    );
}

#[divan::bench(sample_count = 50)]
fn page_common_status_completed(bencher: Bencher) {
    page(
        bencher,
        RunQuery {
            statuses: vec![RunStatus::Completed],
            ..RunQuery::default()
        },
    );
}

#[divan::bench(sample_count = 50)]
fn page_time_window(bencher: Bencher) {
    page(
        bencher,
        RunQuery {
            since: Some(1_700_000_010_000),
            until: Some(1_700_000_012_000),
            ..RunQuery::default()
        },
    );
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn full_list_baseline(bencher: Bencher) {
    let f = fixture();
    bencher.bench(|| {
        let ids = wait(f.registry.tenant_runs("big")).unwrap_or_else(|e| panic!("ids: {e}"));
        let mut n = 0;
        for id in ids.iter().rev() {
            if wait(f.store.record(id)).is_ok() {
                n += 1;
            }
        }
        divan::black_box(n)
    });
}

/// Awaits a store call on one current-thread runtime (the hand-off to the store's thread
/// included, as a caller pays it).
fn wait<F: std::future::Future>(call: F) -> F::Output {
    thread_local! {
        static RT: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("bench runtime");
    }
    RT.with(|rt| rt.block_on(call))
}
