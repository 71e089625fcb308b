//! `hensuc serve`: the hensu server (crates/hensu-server, docs/server.md) on this machine, with
//! the web console (crates/hensu-console, docs/console.md) at `/`.
//!
//! Configuration, later sources winning: `[server]` in `<dir>/hensu.toml` (`listen`, `store`,
//! `jwt_public_key_file`, `jwt_issuer`, `jwt_audience`, `tenant_stubs`, and the connection and
//! resource limits under `[server.limits]`, `hensu_server::Limits`), the environment
//! (`HENSU_JWT_SECRET`, `HENSU_JWT_PUBLIC_KEY` — PEM text or a file path —, `HENSU_JWT_ISSUER`),
//! then the flags. Secrets are never read from hensu.toml.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc serve -d examples --stub\n  \
    HENSU_JWT_PUBLIC_KEY=\"$(cat jwt.pem)\" HENSU_JWT_ISSUER=https://id.example.com \\\n      hensuc serve --listen 0.0.0.0:8080 --store postgres://hensu@db/hensu -d .")]
pub struct ServeArgs {
    /// Address to listen on (default 127.0.0.1:8080; port 0 picks a free one).
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddr>,
    /// State store: a PostgreSQL URL (several servers share it) or an SQLite path; default
    /// `<DIR>/.hensu/state.db`.
    #[arg(long, value_name = "URL")]
    pub store: Option<String>,
    /// Project directory (hensu.toml, stubs/).
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Serve every model with stub agents.
    #[arg(long)]
    pub stub: bool,
    /// Lease time-to-live: an execution whose server stops heartbeating is continued by
    /// another server sharing the store this long after (e.g. `30s`, `2s`).
    #[arg(long, default_value = "30s", value_parser = crate::commands::worker::parse_duration, value_name = "DURATION")]
    pub lease_ttl: std::time::Duration,
    /// Log lines on stderr as text, or as JSON objects carrying each run's trace ids
    /// (docs/observability.md, *Logs*); `RUST_LOG` filters them.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub log_format: crate::logs::LogFormat,
}

/// `[server]` of `<dir>/hensu.toml` (hensu-project's `ServerSection`); the file's first error
/// refuses to serve, and so does a secret written in it.
fn read_section(dir: &Path) -> anyhow::Result<hensu_project::ServerSection> {
    let section = crate::project::settings(dir)?.server;
    if section.jwt_secret.is_some() {
        anyhow::bail!(
            "{}: [server] jwt_secret: secrets are never read from hensu.toml; set the \
             environment variable HENSU_JWT_SECRET instead (docs/server.md, *Running it*)",
            dir.join(hensu_project::PROJECT_FILE).display()
        );
    }
    Ok(section)
}

fn pem(value: &str) -> anyhow::Result<String> {
    if value.contains("-----BEGIN") {
        return Ok(value.to_string());
    }
    std::fs::read_to_string(value)
        .with_context(|| format!("cannot read the public key file {value}"))
}

/// The budget check of the `[[schedules]]` of hensu.toml against the project's workflow files
/// (docs/schedules.md, *The budget check*): E0515 and E0516 refuse to serve, printed as
/// `hensuc check` prints them. A schedule whose workflow is not among the files is checked
/// when it fires (the server runs pushed workflows).
fn refuse_schedules(dir: &Path) -> anyhow::Result<bool> {
    if crate::project::settings(dir)?.schedules.is_empty() {
        return Ok(false);
    }
    // A served project need not hold its workflows (they are pushed): nothing to check then.
    let Ok(project) = crate::project::load(&[], Some(dir)) else {
        return Ok(false);
    };
    let refusals: Vec<_> = project
        .diagnostics
        .iter()
        .filter(|d| matches!(d.code, "E0515" | "E0516"))
        .cloned()
        .collect();
    if refusals.is_empty() {
        return Ok(false);
    }
    crate::output::emit(
        &project.files,
        &refusals,
        crate::output::DiagnosticFormat::Human,
        crate::output::Color::Auto,
    );
    eprintln!("error: refusing to serve: a schedule of hensu.toml is over the budget");
    Ok(true)
}

pub fn execute(args: ServeArgs) -> anyhow::Result<ExitCode> {
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from("."));
    let section = read_section(&dir)?;
    if refuse_schedules(&dir)? {
        return Ok(ExitCode::from(1));
    }
    let listen = args
        .listen
        .or(section.listen)
        .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8080)));
    let store = args
        .store
        .or(section.store)
        .unwrap_or_else(|| dir.join(hensu_store::STATE_DB).display().to_string());
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
    let public_key_pem = match (env("HENSU_JWT_PUBLIC_KEY"), &section.jwt_public_key_file) {
        (Some(v), _) => Some(pem(&v)?),
        (None, Some(f)) => Some(pem(&dir.join(f).display().to_string())?),
        (None, None) => None,
    };
    let auth = hensu_server::AuthConfig {
        hs256_secret: env("HENSU_JWT_SECRET"),
        public_key_pem,
        issuer: env("HENSU_JWT_ISSUER").or(section.jwt_issuer),
        audience: env("HENSU_JWT_AUDIENCE").or(section.jwt_audience),
    };
    let limits = section
        .limits
        .clone()
        .validated()
        .map_err(|e| anyhow::anyhow!("{}: {e}", dir.join("hensu.toml").display()))?;
    let stubs = match (&section.tenant_stubs, auth.is_configured()) {
        // Dev mode: the one tenant is the project's developer, as for `hensuc run`.
        (_, false) => hensu_server::StubScenarios::Shared(dir.join("stubs")),
        (Some(t), true) => hensu_server::StubScenarios::PerTenant(dir.join(t)),
        (None, true) => hensu_server::StubScenarios::None,
    };
    let config = hensu_server::ServerConfig {
        listen,
        store,
        auth,
        project_dir: dir.clone(),
        stubs,
        limits,
        force_stub: args.stub,
        executor: hensu_server::ExecutorOptions {
            lease_ttl: args.lease_ttl,
            poll: (args.lease_ttl / 4).clamp(
                std::time::Duration::from_millis(50),
                std::time::Duration::from_millis(500),
            ),
            ..hensu_server::ExecutorOptions::default()
        },
    };
    crate::logs::init(args.log_format);
    let json_logs = args.log_format == crate::logs::LogFormat::Json;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let state = hensu_server::build_state(&config).await?;
        let listener = tokio::net::TcpListener::bind(config.listen)
            .await
            .with_context(|| format!("cannot listen on {}", config.listen))?;
        let addr = listener.local_addr()?;
        let mode = if config.auth.is_configured() {
            "JWT"
        } else {
            "dev tenant (no key)"
        };
        // A supervisor reads the address here: as the line it always was in text, as a
        // log line (with `addr`) in JSON.
        if json_logs {
            tracing::info!(%addr, auth = mode, "hensu server listening on http://{addr} (auth: {mode})");
            tracing::info!("web console at http://{addr}/ (docs/console.md)");
        } else {
            eprintln!("hensu server listening on http://{addr} (auth: {mode})");
            eprintln!("web console at http://{addr}/ (docs/console.md)");
        }
        let console = hensu_console::router(state.clone());
        hensu_server::serve_with(listener, state, console, async {
            super::shutdown_signal().await;
            tracing::info!(
                "shutting down: no new requests; running executions are handed back at their \
                 next boundary (not cancelled)"
            );
        })
        .await
    })?;
    Ok(ExitCode::SUCCESS)
}
