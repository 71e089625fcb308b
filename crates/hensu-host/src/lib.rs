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
//! * durable runs: [`DurableRun`] checkpoints the run state to a `hensu_store::StateStore` at
//!   every node boundary.
//!
//! A host wires these into an engine with [`action_handlers`] and [`generic_handlers`] (the
//! engine's built-in handlers plus the ones here).

mod command_process;
pub mod command_script;
mod durable;
mod http;
mod review;
mod shell;
mod stub_files;

use std::sync::Arc;

use hensu_runtime::{ActionHandlerRegistry, GenericHandlerRegistry};

pub use durable::{DurableRun, SnapshotRedactor, final_update, restore, snapshot};
pub use http::{ApiCallerHandler, WebhookHandler, percent_encode};
pub use review::{DeferredReview, InteractiveReview, PendingReview};
pub use shell::{
    BASE_ENV, CommandRegistry, CommandSpec, DEFAULT_COMMAND_TIMEOUT_MS, MAX_VALUE_BYTES,
    command_env, run_command, run_command_with,
};
pub use stub_files::FsStubFiles;

/// The action handlers of a host: the engine's `log` plus `webhook` (posting to the payload's
/// `url`, else `default_webhook_url`).
pub fn action_handlers(default_webhook_url: Option<String>) -> ActionHandlerRegistry {
    let mut r = ActionHandlerRegistry::with_defaults();
    r.register(Arc::new(WebhookHandler::new(default_webhook_url)));
    r
}

/// The generic node handlers of a host: the engine's `validator` and `data-transformer` plus
/// `api-caller`.
pub fn generic_handlers() -> GenericHandlerRegistry {
    let mut r = GenericHandlerRegistry::with_defaults();
    r.register(Arc::new(ApiCallerHandler::new()));
    r
}
