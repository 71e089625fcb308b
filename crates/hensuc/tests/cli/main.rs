//! End-to-end tests of the `hensuc` binary, one module per command or concern. Every test builds
//! its command with [`hensuc`], which clears the environment: a developer's real `*_API_KEY`,
//! `HENSU_*` or `EDITOR` never changes what a test sees.
#![allow(clippy::unwrap_used, clippy::panic)] // test code: a failed unwrap is a failed test

mod action_outputs;
mod bounds;
mod build;
mod check;
mod check_runs_nothing;
mod console_browser;
mod console_browser_tools;
#[cfg(unix)]
mod crash;
#[cfg(unix)]
mod durable;
mod explain;
mod extends;
mod fmt;
mod graph;
mod handlers;
#[cfg(unix)]
mod journal;
mod json_schemas;
mod logs;
mod lsp_stdio;
mod mcp;
mod mcp_connect;
mod outcomes;
mod pipelined;
mod process;
mod project_file;
mod replay;
mod retention;
mod review;
#[cfg(unix)]
mod review_terminal;
mod reviews_pending;
mod run;
#[cfg(unix)]
mod run_live_text;
mod security;
mod serve;
mod serve_schedules;
mod serve_shutdown;
mod serve_takeover;
mod serve_tokens;
mod telemetry;
mod telemetry_grpc;
mod telemetry_tool_loop;
mod time_travel;
#[cfg(unix)]
mod timers;
mod timers_nested;
mod tool_approval;
mod tooling;
#[cfg(unix)]
mod workers;
mod workflow_tests;
mod workflow_tests_stubs;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root (the examples and `tests/fixtures/` live there).
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// A `hensuc` command with a cleared environment: only `PATH` (review editors and shell actions
/// run `sh`, `sed`), a `HOME` of its own and `NO_COLOR`; stdin is empty and the working directory
/// is the repository root. Tests add what they need (`.env(..)`, `.current_dir(..)`).
fn hensuc() -> Command {
    let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join("hensuc-home");
    std::fs::create_dir_all(&home).unwrap();
    let mut command = Command::new(env!("CARGO_BIN_EXE_hensuc"));
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("NO_COLOR", "1")
        .current_dir(repo())
        .stdin(Stdio::null());
    command
}

/// Runs `hensuc ARGS` from the repository root and waits for it.
fn run_hensuc(args: &[&str]) -> Output {
    hensuc().args(args).output().unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
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

/// A fresh schema of the test PostgreSQL (`HENSU_TEST_DATABASE_URL`, set by
/// `scripts/pg-test.sh`) with hensu's tables, and a URL whose `search_path` is that schema.
/// The name is unique across processes and within this one (process id, time, counter): tests
/// run side by side, and two that shared a schema saw each other's runs.
#[allow(dead_code)]
fn pg_schema() -> (hensu_store::PgStore, String) {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let base = std::env::var("HENSU_TEST_DATABASE_URL")
        .expect("HENSU_TEST_DATABASE_URL is not set: run under scripts/pg-test.sh");
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let schema = format!("t_{:x}_{:x}_{n}", std::process::id(), hensu_store::now_ms());
    let store = wait(hensu_store::PgStore::open_in_schema(
        &base,
        Some(&schema),
        hensu_store::StoreOptions::default(),
    ))
    .expect("HENSU_TEST_DATABASE_URL must reach a PostgreSQL");
    let sep = if base.contains('?') { '&' } else { '?' };
    (
        store,
        format!("{base}{sep}options=-c%20search_path%3D{schema}"),
    )
}

/// The signing key the tests' servers verify tokens with (`HENSU_JWT_SECRET`).
#[allow(dead_code)]
const JWT_SECRET: &str = "hensuc-cli-tests-secret-hensuc-cli-tests";

/// A token of `tenant` signed with [`JWT_SECRET`] (docs/server.md, *Authentication*).
#[allow(dead_code)]
fn tenant_token(tenant: &str) -> String {
    jsonwebtoken::encode(
        &jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256),
        &serde_json::json!({"sub": format!("{tenant}-user"), "tenant_id": tenant, "exp": 4_000_000_000u64}),
        &jsonwebtoken::EncodingKey::from_secret(JWT_SECRET.as_bytes()),
    )
    .expect("a token")
}
