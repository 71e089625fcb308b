//! The console over HTTP against an in-process server (real router, real store, stub agents):
//! sign-in, tenant isolation, CSRF refusals, escaping of hostile outputs, the review flow, the
//! start form, the list's filters and pages. The browser tests (Chromium) are in hensuc's tests.

mod harness;
mod pages;
mod security;
mod workflow_actions;

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
