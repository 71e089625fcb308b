//! hensu-host tests, one binary: the engine wired to the host's I/O (shell commands, HTTP,
//! stub files on disk, the deferred and terminal reviewers, durable runs in a store) and the
//! examples' golden traces. The workflow builders and the scripted agent are
//! `hensu_runtime::testing`, shared with hensu-runtime's tests (the engine-only tests).

#![allow(clippy::unwrap_used, clippy::panic)]

use std::sync::{Arc, Mutex};

use hensu_host::{CommandRegistry, CommandSpec, FsStubFiles, run_command};
use hensu_ir::*;
use hensu_runtime::testing::*;
use hensu_runtime::*;
use indexmap::IndexMap;
use serde_json::{Value, json};

/// Runs `wf` on `engine` until `killed` fires — the process "dies" there (the run's future is
/// dropped mid-node). A run that ends first fails the test.
async fn run_until(
    engine: &Engine,
    wf: &Workflow,
    input: Context,
    checkpointer: &dyn Checkpointer,
    listener: &dyn ExecutionListener,
    killed: &tokio::sync::Notify,
) {
    let token = CancelToken::new();
    let run = RunCtx::new(&token)
        .checkpointer(checkpointer)
        .listener(listener);
    tokio::select! {
        r = engine.run(wf, input, run) => panic!("the run was to be killed: {:?}", r.outcome),
        _ = killed.notified() => {}
    }
}

/// A new durable run of `wf` in `store` (run id `id`, input `input`), owned by `owner`.
async fn new_durable_run(
    store: &Arc<dyn hensu_store::StateStore>,
    id: &str,
    wf: &Workflow,
    input: Context,
    owner: &hensu_store::OwnerId,
) -> Arc<hensu_host::DurableRun> {
    let record =
        hensu_store::RunRecord::new(id, wf.id.clone(), "1.0.0", Some(wf.start_node.clone()));
    let initial = RunState::new(id.into(), wf.id.clone(), wf.start_node.clone(), input);
    Arc::new(
        hensu_host::DurableRun::create(store.clone(), &record, &json!({}), &initial, owner, None)
            .await
            .unwrap(),
    )
}

mod actions;
mod api_caller;
mod bad_input;
mod command_env;
mod command_processes;
mod command_values;
mod durable_branches;
mod durable_compensation;
mod durable_nested;
mod durable_pipelined;
mod durable_runs;
mod egress;
mod golden_traces;
mod launch;
mod recorded;
mod redrive;
mod review;
mod stub_files;
mod stub_scenarios;

fn harness(script: &Script) -> Harness {
    harness_with(script, |b| b)
}

/// The runtime's harness with the host's action and generic handlers.
fn harness_with(script: &Script, f: impl FnOnce(EngineBuilder) -> EngineBuilder) -> Harness {
    hensu_runtime::testing::harness_with(script, |b| {
        f(b.action_handlers(hensu_host::action_handlers(None))
            .generic_handlers(hensu_host::generic_handlers()))
    })
}

/// The output of a successful result (panics with the failure otherwise).
fn ok_output(r: &ActionResult) -> &str {
    assert!(r.success, "expected success, got {r:?}");
    &r.output
}

/// Awaits a store call (the store is async) from a plain test thread, on one shared
/// multi-threaded runtime (a PostgreSQL connection opened by one call keeps its I/O task
/// running for the next).
#[allow(dead_code)]
fn wait<F: std::future::Future>(call: F) -> F::Output {
    static RT: std::sync::OnceLock<tokio::runtime::Runtime> = std::sync::OnceLock::new();
    RT.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("test runtime")
    })
    .block_on(call)
}
