//! `hensuc mcp connect`: the tenant's side of a server's MCP gateway (docs/mcp.md, *Server
//! mode: `hensuc mcp connect`*). The MCP servers of the project's `hensu.toml` are started or
//! reached as a local run does (`hensu_mcp::McpClients`) and offered to the server's runs of
//! one tenant through `hensu_mcp::tenant_bridge`, until Ctrl-C or SIGTERM. A team that moves
//! from `hensuc run` to `hensuc serve` keeps its `[mcp.servers]`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use anyhow::Context as _;
use base64::Engine as _;
use clap::{Args, Subcommand};
use hensu_mcp::tenant_bridge::{BridgeEvent, BridgeTarget, serve_tenant_tools, shown_url};
use serde_json::Value;

use super::remote::{RemoteArgs, ServerTarget};
use crate::args::ProjectDir;
use crate::exit;

/// The tenant of every request to a server without a signing key (docs/server.md,
/// *Authentication*).
const DEV_TENANT: &str = "dev-tenant";

#[derive(Args, Debug)]
pub struct McpArgs {
    #[command(subcommand)]
    pub command: McpCommand,
}

#[derive(Subcommand, Debug)]
pub enum McpCommand {
    /// Offer the MCP servers of hensu.toml to a hensu server's runs of your tenant (through
    /// its gateway), until stopped.
    Connect(ConnectArgs),
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    HENSU_TOKEN=… hensuc mcp connect --server https://hensu.example.com -d .\n  \
    hensuc mcp connect --server http://127.0.0.1:8080   # a dev server: tenant dev-tenant")]
pub struct ConnectArgs {
    #[command(flatten)]
    pub project: ProjectDir,
    /// The tenant whose runs get the tools (the gateway's `clientId`). Default: the token's
    /// `tenant_id` claim; `dev-tenant` without a token.
    #[arg(long, value_name = "ID")]
    pub tenant: Option<String>,
    /// A PEM file of the authorities to trust for an `https://` server instead of the public
    /// roots (a certificate a private authority signed).
    #[arg(long, value_name = "FILE")]
    pub ca_file: Option<PathBuf>,
    #[command(flatten)]
    pub remote: RemoteArgs,
    /// Log lines on stderr as text, or as JSON objects (docs/observability.md, *Logs*);
    /// `RUST_LOG` filters them.
    #[arg(long, value_enum, default_value = "text", value_name = "FORMAT")]
    pub log_format: crate::logs::LogFormat,
}

pub fn execute(args: McpArgs) -> anyhow::Result<ExitCode> {
    match args.command {
        McpCommand::Connect(args) => connect(args),
    }
}

fn connect(args: ConnectArgs) -> anyhow::Result<ExitCode> {
    let workdir = args.project.dir.unwrap_or_else(|| PathBuf::from("."));
    let settings = crate::project::settings(&workdir)?;
    if settings.mcp.servers.is_empty() {
        anyhow::bail!(
            "{} declares no MCP server ([mcp.servers.NAME], docs/mcp.md): nothing to offer",
            workdir.join("hensu.toml").display()
        );
    }
    let ServerTarget { base, token } = args
        .remote
        .target()?
        .ok_or_else(|| anyhow::anyhow!("no server: pass --server URL or set HENSU_SERVER"))?;
    let tenant = match args.tenant {
        Some(tenant) => tenant,
        None => tenant_of(token.as_deref())?,
    };
    crate::logs::init(args.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async move {
        let clients = hensu_mcp::McpClients::connect(&settings.mcp, &workdir)
            .await
            .map_err(anyhow::Error::msg)?;
        let tools = clients
            .tools()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
            .join(", ");
        let servers = settings.mcp.servers.len();
        tracing::info!(
            servers,
            tools = %tools,
            "MCP servers started: {servers} server{}, tools {tools}",
            if servers == 1 { "" } else { "s" }
        );
        let target = BridgeTarget {
            server: base,
            token,
            tenant,
            ca_file: args.ca_file,
            idle_limit: hensu_mcp::tenant_bridge::DEFAULT_IDLE_LIMIT,
        };
        let server = shown_url(&target.server);
        let announce = {
            let (server, tenant) = (server.clone(), target.tenant.clone());
            Arc::new(move |event: BridgeEvent| report(&server, &tenant, event))
        };
        let clients = Arc::new(clients);
        let outcome =
            serve_tenant_tools(clients.clone(), &target, announce, super::shutdown_signal()).await;
        if let Ok(clients) = Arc::try_unwrap(clients) {
            clients.shutdown().await;
        }
        outcome.with_context(|| format!("offering the tools to {server} failed"))?;
        tracing::info!("stopped");
        Ok(ExitCode::from(exit::SUCCESS))
    })
}

/// The tenant a token speaks for: its `tenant_id` claim, read without verifying the token
/// (the server verifies it; this only names the gateway's `clientId`, which must match).
fn tenant_of(token: Option<&str>) -> anyhow::Result<String> {
    let Some(token) = token else {
        return Ok(DEV_TENANT.to_string());
    };
    let claims = token
        .split('.')
        .nth(1)
        .and_then(|payload| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD
                .decode(payload.trim_end_matches('='))
                .ok()
        })
        .and_then(|bytes| serde_json::from_slice::<Value>(&bytes).ok());
    claims
        .as_ref()
        .and_then(|c| c.get("tenant_id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| {
            anyhow::anyhow!(
                "the token carries no `tenant_id` claim to connect as: name the tenant with --tenant ID"
            )
        })
}

fn report(server: &str, tenant: &str, event: BridgeEvent) {
    match event {
        BridgeEvent::Connected => tracing::info!(
            server,
            tenant,
            "connected to {server} as tenant `{tenant}`: its runs can call these tools"
        ),
        BridgeEvent::Disconnected { reason, retry_in } => tracing::warn!(
            reason = %reason,
            retry_in_ms = retry_in.as_millis() as u64,
            "not connected: {reason}; trying again in {:.1} s",
            retry_in.as_secs_f64()
        ),
        BridgeEvent::Called {
            tool,
            error: None,
            elapsed,
        } => tracing::info!(
            tool = %tool,
            elapsed_ms = elapsed.as_millis() as u64,
            "{tool}: answered in {} ms",
            elapsed.as_millis()
        ),
        BridgeEvent::Called {
            tool,
            error: Some(error),
            elapsed,
        } => tracing::warn!(
            tool = %tool,
            elapsed_ms = elapsed.as_millis() as u64,
            error = %error,
            "{tool}: failed in {} ms: {error}",
            elapsed.as_millis()
        ),
        BridgeEvent::ResponseLost { reason } => tracing::warn!(
            reason = %reason,
            "an answer did not reach the server: {reason}"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(claims: &str) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(s);
        format!("{}.{}.sig", b64(r#"{"alg":"HS256"}"#), b64(claims))
    }

    #[test]
    fn the_tenant_comes_from_the_tokens_claim() {
        assert_eq!(
            tenant_of(Some(&jwt(r#"{"sub":"ana","tenant_id":"acme"}"#))).expect("a tenant"),
            "acme"
        );
        assert_eq!(tenant_of(None).expect("the dev tenant"), DEV_TENANT);
        for bad in ["opaque-token", &jwt(r#"{"sub":"ana"}"#), "a.%%%.c"] {
            let e = tenant_of(Some(bad)).expect_err("no tenant").to_string();
            assert!(e.contains("--tenant"), "{e}");
        }
    }
}
