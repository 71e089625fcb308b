//! The one run recipe: how every face (`hensuc run`, `hensuc resume`, `hensuc worker` and the
//! server's executor) turns a workflow into a running, recorded run.
//!
//! * [`RunSetup`] is a run's configuration, resolved once: the project's run sections of
//!   `hensu.toml` ([`ProjectConfig`]: `[providers]`, `[retry]`, `[circuit_breaker]`,
//!   `[timeouts]`, `[structured_output]`, `[network]`, `[mcp]`), the store, the stubs, the
//!   review mode, whether local commands may run and the egress policy of its HTTP requests
//!   (server runs). Command-line flags and server settings
//!   are mapped onto it; nothing below looks at a clap struct.
//! * [`create_run`] stores a new run with its [`StoredWorkflow`] envelope under the one run-id
//!   scheme ([`new_run_id`]) and returns its [`RunHandle`].
//! * [`fork_run`] forks a stored run at a step of its log (the fork references the parent's
//!   log prefix; checked against another workflow first when one is given), paused there for
//!   the face to resume like any paused run.
//! * [`send_signal`] sends a signal to a stored run (its payload checked against the
//!   variables its `awaitSignal` nodes write), for `hensuc signal`, the server and the console.
//! * [`replay_run`] replays a stored run with every outside call answered from its run log
//!   (the engine gets the recorded answers through [`Extras::recorded`]) and compares it
//!   with the recording.
//! * [`engine`] builds the engine of one run from the setup plus the [`Extras`] only a face
//!   adds: the tools when they are not the project's (the server's tenant MCP client), the
//!   listener that receives provider retries (the face's progress and `--events` listener,
//!   which also goes into the run's `RunCtx`), the terminal an interactive review pauses.
//!
//! So a workflow run by `hensuc run`, by a worker or by the server resolves the same providers,
//! network policy, structured-output and retry settings, and its sub-workflow nodes see the
//! same callable workflows ([`callable_workflows`]).

mod engine;
mod fork;
pub mod replay;
mod signal;
mod stored;
pub mod telemetry;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hensu_store::StateStore;

pub use engine::{Extras, RefuseCommands, RunEngine, RunToolSet, ToolSupply, engine};
pub use engine::{NO_LOCAL_COMMANDS, callable_workflows, required_reviews};
pub use fork::{
    ForkError, ForkPlan, Forked, check_fork, failed_step, fork_run, next_node, redrive_run,
};
pub use replay::{ReplayError, ReplayPlan, ReplayReport, replay_run};
pub use signal::{
    SignalError, check_payload, check_payload_in, deliver_signal, send_signal, signal_names,
    signal_workflow,
};
pub use stored::{
    NewRun, RunHandle, SourceRef, StoredOptions, StoredWorkflow, WORKFLOW_FORMAT, content_hash,
    create_queued_tenant_runs, create_run, new_run_id,
};

/// The environment variable naming the default `webhook` URL (a `send("webhook", …)` whose
/// payload has no `url`).
pub const WEBHOOK_URL_ENV: &str = "HENSU_WEBHOOK_URL";

/// What a project directory configures for every run in it: the run sections of its
/// `hensu.toml` (the defaults without a file), read by [`ProjectConfig::from_project_dir`].
#[derive(Clone, Debug, Default)]
pub struct ProjectConfig {
    /// The project directory (`stubs/`, `commands.yaml`, `hensu.toml`).
    pub dir: PathBuf,
    /// `[providers.*]`, `[retry]`, `[circuit_breaker]`, `[timeouts]`, `[structured_output]`.
    pub providers: hensu_providers::ProvidersConfig,
    /// `[network] allow_hosts`: the hosts a stub run may really reach.
    pub allow_hosts: Vec<String>,
    /// `[mcp]`: the MCP servers a local run starts.
    pub mcp: hensu_mcp::McpConfig,
    /// `[server.egress]`: the egress policy of a server run (its allow-list; a setup applies
    /// it only when its [`RunSetup::egress`] says so).
    pub egress: hensu_egress::EgressPolicy,
    /// The default `webhook` URL (`HENSU_WEBHOOK_URL`).
    pub webhook_url: Option<String>,
    /// `[handlers.NAME]`: the project's declared action handlers (docs/mcp.md).
    pub handlers: indexmap::IndexMap<String, hensu_project::HandlerEntry>,
    /// `[telemetry]` with the `OTEL_*` environment: the live export of run traces (`None`:
    /// off), see [`telemetry`].
    pub telemetry: Option<hensu_telemetry::TelemetryConfig>,
    /// `[pricing."MODEL"]`: what a server's cost metric counts (docs/observability.md).
    pub pricing: indexmap::IndexMap<String, hensu_project::PriceEntry>,
    /// `[server] review_webhook`: told when a server run pauses for a review
    /// ([`crate::review_notify`]).
    pub review_webhook: Option<String>,
    /// `[store] commit`: how durable runs commit their steps (a face opens its store with
    /// it, [`ProjectConfig::store_options`]).
    pub commit: hensu_store::CommitMode,
}

impl ProjectConfig {
    /// `base` with this project's `[store]` settings (the commit mode).
    pub fn store_options(&self, base: hensu_store::StoreOptions) -> hensu_store::StoreOptions {
        hensu_store::StoreOptions {
            commit: self.commit,
            ..base
        }
    }

    /// Reads `<dir>/hensu.toml` once — the one place a run's project configuration is read.
    /// No file: the defaults. An unreadable or invalid file is an error naming it (never
    /// silently the defaults).
    pub fn from_project_dir(dir: &Path) -> Result<ProjectConfig, String> {
        // hensu-project is the one parser of hensu.toml; its first error (with place and code,
        // what `hensuc check` reports) refuses the run.
        let workspace = hensu_project::Workspace::load_dir(dir)?;
        let config = workspace.config_or_refusal()?;
        Ok(ProjectConfig {
            dir: dir.to_path_buf(),
            providers: config.providers_config(),
            allow_hosts: config.network.allow_hosts.clone(),
            mcp: config.mcp.clone(),
            egress: config.server.egress.policy()?,
            handlers: config.handlers.clone(),
            telemetry: telemetry::resolve(&config.telemetry),
            pricing: config.pricing.clone(),
            // Checked with the file (E0906): a run refuses a bad URL with its place.
            review_webhook: config.server.review_webhook.clone(),
            commit: config.store.commit.unwrap_or_default(),
            webhook_url: std::env::var(WEBHOOK_URL_ENV)
                .ok()
                .filter(|u| !u.trim().is_empty()),
        })
    }

    /// The secrets of this project's providers (their keys in the environment) and of its
    /// declared handlers' headers: what every
    /// event, snapshot and message of a run has redacted. Known before the engine is built,
    /// so a face's listeners redact from the first event.
    pub fn secrets(&self) -> hensu_providers::Redactor {
        let mut names: Vec<String> = hensu_providers::provider_specs(&self.providers)
            .into_iter()
            .filter_map(|s| s.api_key_env)
            .collect();
        // The header values of declared webhooks (docs/mcp.md, *Declared action handlers*).
        names.extend(
            self.handlers
                .values()
                .flat_map(|h| h.headers.values().cloned()),
        );
        hensu_providers::Redactor::from_lookup(&names, &|name| std::env::var(name).ok())
    }
}

/// How reviews are decided, stored with the run (`options.review` of its [`StoredWorkflow`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ReviewMode {
    /// The run pauses at a review; a resume decides (the default: a REQUIRED review is never
    /// approved without a human).
    #[default]
    Deferred,
    /// Asked in the terminal.
    Interactive,
    /// Every review approved without asking.
    AutoApprove,
}

impl ReviewMode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewMode::Deferred => "deferred",
            ReviewMode::Interactive => "interactive",
            ReviewMode::AutoApprove => "auto-approve",
        }
    }

    /// The stored spelling; a run stored before review modes existed defers.
    pub fn parse(stored: Option<&str>) -> ReviewMode {
        match stored {
            Some("interactive") => ReviewMode::Interactive,
            Some("auto-approve") => ReviewMode::AutoApprove,
            _ => ReviewMode::Deferred,
        }
    }

    /// The mode where no terminal is attached (a worker, the server): an interactive run
    /// defers its reviews instead.
    pub fn without_terminal(self) -> ReviewMode {
        match self {
            ReviewMode::Interactive => ReviewMode::Deferred,
            mode => mode,
        }
    }
}

/// Stub agents of a run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Stubs {
    /// Every model is served by stubs (`--stub`; `HENSU_STUB_ENABLED=true` forces it too).
    pub force: bool,
    /// The scenario (`stubs/<scenario>/`); the context key `stub_scenario` takes precedence.
    pub scenario: Option<String>,
    /// Where the stub agents' answers are read (the project's `stubs/` unless a face says
    /// otherwise: the server gives each tenant its own). The stub tool scripts of
    /// [`ToolSupply::Project`] stay the project's (a face with its own tools brings them).
    pub files: StubRoot,
}

/// The directory of a run's stub answers (`<root>/<scenario>/<node>.txt`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StubRoot {
    /// `<project>/stubs`.
    #[default]
    Project,
    /// Another directory (the server: one tenant's scenarios).
    Dir(PathBuf),
    /// No stub files: stub agents give their generated answer, and the only scenario is
    /// `default`.
    None,
}

impl StubRoot {
    /// The stub files of a run in `project_dir`.
    pub fn files(&self, project_dir: &Path) -> Option<Box<dyn hensu_runtime::StubFiles>> {
        let dir = match self {
            StubRoot::Project => project_dir.join("stubs"),
            StubRoot::Dir(dir) => dir.clone(),
            StubRoot::None => return None,
        };
        Some(Box::new(crate::FsStubFiles::new(dir)))
    }
}

impl Stubs {
    /// Whether stubs serve every model: forced here or by `HENSU_STUB_ENABLED=true`.
    pub fn forced(&self) -> bool {
        self.force || hensu_providers::stub_env_enabled(&|name| std::env::var(name).ok())
    }

    /// These stubs continuing a stored run (`hensuc resume --scenario/--stub`, a worker): the
    /// scenario given here, else the stored one; stubs forced when either forces them.
    pub fn continuing(self, stored: &StoredOptions) -> Stubs {
        Stubs {
            force: self.force || stored.stub,
            scenario: self.scenario.or_else(|| stored.scenario.clone()),
            files: self.files,
        }
    }
}

/// A run's configuration, resolved once and shared by every face.
#[derive(Clone)]
pub struct RunSetup {
    pub project: Arc<ProjectConfig>,
    /// Where the run is recorded (`None`: `hensuc run --no-store`).
    pub store: Option<Arc<dyn StateStore>>,
    pub stubs: Stubs,
    pub review: ReviewMode,
    /// `execute(...)` actions run `commands.yaml` (the CLI) or are refused (the server).
    pub local_commands: bool,
    /// The egress policy of the run's `webhook` and `api-caller` requests (docs/server.md,
    /// *Egress*): the server gives every run its project's ([`ProjectConfig::egress`]); `None`
    /// (a local run: `hensuc run`, `resume`, `worker`) checks no address.
    pub egress: Option<Arc<hensu_egress::EgressPolicy>>,
}

impl std::fmt::Debug for RunSetup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunSetup")
            .field("project", &self.project.dir)
            .field("store", &self.store.is_some())
            .field("stubs", &self.stubs)
            .field("review", &self.review)
            .field("local_commands", &self.local_commands)
            .field("egress", &self.egress)
            .finish()
    }
}

impl RunSetup {
    /// The options recorded with a run started under this setup.
    pub fn stored_options(&self) -> StoredOptions {
        StoredOptions {
            scenario: self.stubs.scenario.clone(),
            stub: self.stubs.force,
            review: Some(self.review),
            traceparent: None,
        }
    }
}
