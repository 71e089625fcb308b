pub mod attach;
pub mod bounds;
pub mod build;
pub mod cancel;
pub mod check;
mod check_tools;
pub mod completions;
pub mod delete;
mod describe;
mod detach;
pub mod explain;
pub mod fmt;
pub mod fork;
pub mod graph;
mod graph_saga;
pub mod health;
pub mod init;
mod live_text;
pub mod lsp;
pub mod mcp;
mod progress;
pub mod pull;
pub mod push;
pub mod remote;
pub mod remote_runs;
pub mod replay;
pub mod resume;
pub mod run;
mod run_summary;
pub mod runs;
mod runs_diff;
mod runs_json;
mod runs_purge;
#[cfg(feature = "server")]
pub mod serve;
pub mod session;
pub mod signal;
pub mod test;
pub mod trace;
pub mod worker;
pub mod workflows;

/// Ctrl-C or SIGTERM: how a long-running command (`serve`, `mcp connect`) is asked to stop.
pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}
