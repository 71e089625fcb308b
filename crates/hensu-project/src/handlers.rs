//! `[handlers.NAME]` of `hensu.toml` (docs/mcp.md, *Declared action handlers*): action
//! handlers a project declares for `send("NAME", …)`, either a webhook (`url`, `headers` whose
//! values are the names of environment variables holding them) or a forward to an MCP tool
//! (`mcp = { server = "…", tool = "…" }`). The rules serde cannot express are checked here
//! (E0906 at the key or value), with messages that never repeat a header's value.

use hensu_diagnostics::{Diagnostic, codes};
use indexmap::IndexMap;
use serde::Deserialize;

use crate::ProjectConfig;
use crate::messages::shown_name;
use crate::spans::SpanIndex;

/// The handlers every run has, which a declaration may not replace.
pub const BUILT_IN_HANDLERS: &[&str] = &["log", "webhook", "mcp"];

/// One `[handlers.NAME]`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandlerEntry {
    /// A webhook: the URL the payload is POSTed to as JSON.
    pub url: Option<String>,
    /// A webhook's headers: header name → the name of the environment variable holding its
    /// value (a secret is never written in `hensu.toml`).
    #[serde(default)]
    pub headers: IndexMap<String, String>,
    /// A webhook's time limit in milliseconds (default 30 000).
    pub timeout: Option<u64>,
    /// A forward to an MCP tool: `{"tool": tool, "arguments": payload}` through `send("mcp")`.
    pub mcp: Option<McpForward>,
}

/// `mcp = { server = "…", tool = "…" }`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct McpForward {
    /// The `[mcp.servers.NAME]` offering the tool; absent: the run's MCP tools, whichever
    /// server offers it (on `hensuc serve`, the tenant's).
    pub server: Option<String>,
    pub tool: String,
}

/// What a declared handler does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HandlerKind<'a> {
    Webhook {
        url: &'a str,
        headers: &'a IndexMap<String, String>,
        timeout_ms: u64,
    },
    Mcp {
        tool: &'a str,
    },
}

impl HandlerEntry {
    /// The handler's kind; `None` for an entry the checks reject (neither or both forms).
    pub fn kind(&self) -> Option<HandlerKind<'_>> {
        match (&self.url, &self.mcp) {
            (Some(url), None) => Some(HandlerKind::Webhook {
                url,
                headers: &self.headers,
                timeout_ms: self.timeout.unwrap_or(30_000),
            }),
            (None, Some(m)) => Some(HandlerKind::Mcp { tool: &m.tool }),
            _ => None,
        }
    }
}

/// Whether `name` can be an environment variable's name (`SLACK_TOKEN`).
pub fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn invalid(name: &str, span: hensu_diagnostics::Span, label: impl Into<String>) -> Diagnostic {
    Diagnostic::new(
        codes::E0906,
        format!("invalid `hensu.toml`: handler `{}`", shown_name(name)),
        span,
        label,
    )
}

/// E0906 for each `[handlers.NAME]` a run would refuse.
pub(crate) fn check(config: &ProjectConfig, spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    for (name, entry) in &config.handlers {
        let at = |key: &str| spans.key(&["handlers", name, key]);
        if BUILT_IN_HANDLERS.contains(&name.as_str()) {
            out.push(
                invalid(
                    name,
                    spans.key(&["handlers", name]),
                    "a built-in handler has this name",
                )
                .with_help(
                    "give the handler another name; `log`, `webhook` and `mcp` are built in",
                ),
            );
            continue;
        }
        match (&entry.url, &entry.mcp) {
            (None, None) => out.push(
                invalid(name, spans.key(&["handlers", name]), "neither `url` nor `mcp`")
                    .with_help("a webhook has `url = \"https://…\"`; a forward to an MCP tool has `mcp = { server = \"…\", tool = \"…\" }`"),
            ),
            (Some(_), Some(_)) => out.push(
                invalid(name, at("mcp"), "both `url` and `mcp`")
                    .with_help("a handler is either a webhook (`url`) or a forward to an MCP tool (`mcp`), not both"),
            ),
            (Some(url), None) => {
                if !(url.starts_with("https://") || url.starts_with("http://")) {
                    out.push(
                        invalid(name, spans.value(&["handlers", name, "url"]), "not an http:// or https:// URL")
                            .with_help("write the webhook's full URL, e.g. `\"https://hooks.example.com/…\"`"),
                    );
                }
                headers(name, entry, spans, out);
            }
            (None, Some(m)) => {
                if !entry.headers.is_empty() || entry.timeout.is_some() {
                    let key = if entry.headers.is_empty() { "timeout" } else { "headers" };
                    out.push(
                        invalid(name, at(key), "only a webhook (`url`) takes this key")
                            .with_help("the MCP server's own settings apply to a forwarded call"),
                    );
                }
                if m.tool.trim().is_empty() {
                    out.push(invalid(name, spans.value(&["handlers", name, "mcp", "tool"]), "no tool name"));
                }
                if let Some(server) = &m.server
                    && !config.mcp.servers.contains_key(server)
                {
                    let mut d = invalid(
                        name,
                        spans.value(&["handlers", name, "mcp", "server"]),
                        "no `[mcp.servers]` entry has this name",
                    );
                    let known = config.mcp.servers.keys().map(String::as_str);
                    d = match hensu_sema::suggest::help_for(server, known) {
                        Some(help) => d.with_help(help),
                        None => d.with_help("declare the server as `[mcp.servers.NAME]`, or leave `server` out to use any of the run's MCP tools"),
                    };
                    out.push(d);
                }
            }
        }
    }
}

/// A header's value must name an environment variable: a literal secret must not sit in
/// `hensu.toml` (and the message does not repeat it).
fn headers(name: &str, entry: &HandlerEntry, spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    for (header, env) in &entry.headers {
        if is_env_name(env) {
            continue;
        }
        out.push(
            invalid(
                name,
                spans.value(&["handlers", name, "headers", header]),
                "not the name of an environment variable",
            )
            .with_note("a header's value is read from the environment when the handler runs, never from `hensu.toml`")
            .with_help(format!(
                "write the variable's name, e.g. `{} = \"{}\"`, and set it in the environment",
                shown_name(header),
                env_suggestion(name)
            )),
        );
    }
}

/// `SLACK_TOKEN` for a handler `slack`.
fn env_suggestion(name: &str) -> String {
    let base: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("{base}_TOKEN")
}
