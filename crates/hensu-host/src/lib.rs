//! hensu-host — the host side of a hensu run: everything that touches the machine the engine
//! (`hensu-runtime`) runs on. The engine defines the seams as traits; this crate implements them:
//!
//! * shell commands of `execute` actions ([`CommandRegistry`], a [`hensu_runtime::CommandRunner`]
//!   reading `commands.yaml` and running `/bin/sh -c` in its own process group, with values
//!   passed in the environment, never as shell text — docs/security.md, *Action commands*),
//! * HTTP: the `webhook` action handler ([`WebhookHandler`]) and the `api-caller` generic node
//!   handler ([`ApiCallerHandler`]),
//! * the terminal: [`InteractiveReview`] (stdin/stderr and `$EDITOR`) and [`DeferredReview`]
//!   (pauses the run for an out-of-band answer),
//! * files: stub responses on disk ([`FsStubFiles`], read with `tokio::fs`),
//! * durable runs: [`DurableRun`] records every node boundary in a `hensu_store::StateStore`'s
//!   run log; [`worker::run_worker`] claims queued and orphaned runs from a shared store and
//!   executes them; a durable run is also the [`hensu_runtime::Waiter`] of its `wait` and
//!   `awaitSignal` nodes (`waits.rs`: signals from the store, a suspended run's wake time on
//!   its record).
//!
//! [`launch`] is the one run recipe every face uses: a run's configuration ([`launch::RunSetup`]),
//! its creation in the store ([`launch::create_run`]) and its engine ([`launch::engine`]).
//! [`action_handlers`] and [`generic_handlers`] are the engine's built-in handlers plus the
//! ones here.

mod command_process;
pub mod command_script;
mod durable;
mod handlers;
mod http;
pub mod launch;
mod network;
pub mod recorded;
mod review;
pub mod review_notify;
pub mod runs_diff;
mod shell;
mod stub_files;
pub mod trace;
mod waits;
pub mod worker;

use std::sync::Arc;

use hensu_runtime::{ActionHandlerRegistry, GenericHandlerRegistry};

pub use durable::{DurableRun, SnapshotRedactor, final_update, restore, snapshot};
pub use handlers::register_declared;
pub use http::{ApiCallerHandler, WebhookHandler, percent_encode};
pub use network::NetworkAccess;
pub use review::{DeferredReview, InteractiveReview, PendingReview, TerminalPause};
pub use shell::{
    BASE_ENV, COMMAND_KEYS, CommandRegistry, CommandSpec, DEFAULT_COMMAND_TIMEOUT_MS,
    IDEMPOTENCY_KEY_VAR, MAX_VALUE_BYTES, UnsafeCommand, audit_commands, command_env,
    read_commands_yaml, run_command, run_command_with,
};
pub use stub_files::FsStubFiles;

/// The action handlers of a host: the engine's `log` plus `webhook` (posting to the payload's
/// `url`, else `default_webhook_url`).
pub fn action_handlers(default_webhook_url: Option<String>) -> ActionHandlerRegistry {
    action_handlers_with(default_webhook_url, NetworkAccess::Live, None)
}

/// [`action_handlers`] with the run's network access (simulated webhooks in a stub run) and
/// egress policy (a server run's: docs/server.md, *Egress*).
pub fn action_handlers_with(
    default_webhook_url: Option<String>,
    network: NetworkAccess,
    egress: Option<Arc<hensu_egress::EgressPolicy>>,
) -> ActionHandlerRegistry {
    let mut r = ActionHandlerRegistry::with_defaults();
    r.register(Arc::new(
        WebhookHandler::new(default_webhook_url)
            .with_network(network)
            .with_egress(egress),
    ));
    r
}

/// The generic node handlers of a host: the engine's `validator` and `data-transformer` plus
/// `api-caller`.
pub fn generic_handlers() -> GenericHandlerRegistry {
    generic_handlers_with(NetworkAccess::Live, None)
}

/// [`generic_handlers`] with the run's network access (a simulated `api-caller` in a stub run)
/// and egress policy (a server run's).
pub fn generic_handlers_with(
    network: NetworkAccess,
    egress: Option<Arc<hensu_egress::EgressPolicy>>,
) -> GenericHandlerRegistry {
    let mut r = GenericHandlerRegistry::with_defaults();
    r.register(Arc::new(
        ApiCallerHandler::new()
            .with_network(network)
            .with_egress(egress),
    ));
    r
}
