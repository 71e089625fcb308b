//! The rules of `hensu.toml` that serde cannot express, each reported at its key or value: the
//! providers' (hensu-providers' `validate`), the MCP servers' endpoints (hensu-mcp), hosts of
//! `[network] allow_hosts`, the entries of `[server.egress] allow`, prices, and — once the project's workflows are known — priced
//! models that no agent uses.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_mcp::McpConfig;
use hensu_providers::{ConfigError, ProvidersConfig};
use indexmap::IndexMap;

use crate::ProjectConfig;
use crate::spans::SpanIndex;

pub(crate) fn check_config(config: &ProjectConfig, spans: &SpanIndex) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    providers(config, spans, &mut out);
    mcp_servers(&config.mcp, spans, &mut out);
    allow_hosts(&config.network.allow_hosts, spans, &mut out);
    egress_allow(&config.server.egress.allow, spans, &mut out);
    review_webhook(config.server.review_webhook.as_deref(), spans, &mut out);
    prices(config, spans, &mut out);
    crate::handlers::check(config, spans, &mut out);
    crate::schedules::check(&config.schedules, &config.budget, spans, &mut out);
    crate::schedules::check_retention(&config.retention, spans, &mut out);
    out
}

/// Each provider on its own, then the shared sections, so every bad entry is reported.
fn providers(config: &ProjectConfig, spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    let shared = ProvidersConfig {
        providers: IndexMap::new(),
        ..config.providers_config()
    };
    let mut report = |result: Result<(), ConfigError>| {
        if let Err(ConfigError::Invalid { path, message }) = result {
            let parts: Vec<&str> = path.split('.').collect();
            let shown: Vec<&str> = parts
                .iter()
                .map(|p| crate::messages::shown_name(p))
                .collect();
            out.push(
                Diagnostic::new(
                    codes::E0906,
                    format!("invalid `hensu.toml`: `{}`", shown.join(".")),
                    spans.value(&parts),
                    message,
                )
                .with_help("a run refuses the file until this is fixed"),
            );
        }
    };
    for (name, entry) in &config.providers {
        let one = ProvidersConfig {
            providers: IndexMap::from([(name.clone(), entry.clone())]),
            ..ProvidersConfig::default()
        };
        report(hensu_providers::validate(&one));
    }
    report(hensu_providers::validate(&shared));
}

/// Each MCP server's endpoint (both `command` and `url`, neither, a bad scheme, …).
fn mcp_servers(mcp: &McpConfig, spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    for (name, server) in &mcp.servers {
        let one = McpConfig {
            servers: IndexMap::from([(name.clone(), server.clone())]),
            ..McpConfig::default()
        };
        let Err(message) = one.endpoints() else {
            continue;
        };
        let message = message
            .strip_prefix(&format!("mcp.servers.{name}: "))
            .unwrap_or(&message)
            .replace(name.as_str(), crate::messages::shown_name(name));
        // At the first key the message names, else at the server's table.
        let key = message
            .split('`')
            .skip(1)
            .step_by(2)
            .find(|k| spans.get(&["mcp", "servers", name, k]).is_some());
        let span = match key {
            Some(_) if message.contains("not both") => spans.key(&["mcp", "servers", name, "url"]),
            Some(k) => spans.key(&["mcp", "servers", name, k]),
            None => spans.key(&["mcp", "servers", name]),
        };
        out.push(
            Diagnostic::new(
                codes::E0906,
                format!(
                    "invalid `hensu.toml`: MCP server `{}`",
                    crate::messages::shown_name(name)
                ),
                span,
                message,
            )
            .with_help("a `command` server is started over stdio, a `url` server reached over HTTP (docs/mcp.md)"),
        );
    }
}

/// W0904: an entry that can never equal a request's host name.
fn allow_hosts(hosts: &[String], spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    for (i, entry) in hosts.iter().enumerate() {
        let host = host_of(entry);
        let plain = host == entry.as_str() && is_host_name(host);
        if plain {
            continue;
        }
        let index = i.to_string();
        let mut d = Diagnostic::new(
            codes::W0904,
            "`allow_hosts` entry is not a host name",
            spans.value(&["network", "allow_hosts", &index]),
            "requests are matched by host name only, so this entry lets nothing through",
        );
        if host.contains('*') {
            d = d.with_help("patterns are not supported: list each host name");
        } else if is_host_name(host) {
            d = d.with_help(format!("write the host alone: `\"{host}\"`"));
        } else {
            d = d.with_help("write a host name such as `\"hooks.example.com\"`");
        }
        out.push(d);
    }
}

/// E0906: an entry of `[server.egress] allow` that is neither a host name nor an address
/// range (a URL, a port, a pattern, a bad CIDR). `hensuc serve` refuses the file.
fn egress_allow(entries: &[String], spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    for (i, entry) in entries.iter().enumerate() {
        let Err(bad) = hensu_egress::AllowEntry::parse(entry) else {
            continue;
        };
        let index = i.to_string();
        out.push(
            Diagnostic::new(
                codes::E0906,
                "invalid `hensu.toml`: `server.egress.allow` entry",
                spans.value(&["server", "egress", "allow", &index]),
                bad.problem,
            )
            .with_help(bad.help),
        );
    }
}

/// E0906: `[server] review_webhook` that is not an `http://` or `https://` URL with a host.
fn review_webhook(url: Option<&str>, spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    let Some(url) = url else {
        return;
    };
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let host = rest.map(|r| host_of(r.split('/').next().unwrap_or_default()));
    if host.is_some_and(is_host_name) {
        return;
    }
    out.push(
        Diagnostic::new(
            codes::E0906,
            "invalid `hensu.toml`: `server.review_webhook`",
            spans.value(&["server", "review_webhook"]),
            "not an http:// or https:// URL with a host",
        )
        .with_help("write the receiver's URL, e.g. `\"https://hooks.example.com/hensu\"`"),
    );
}

/// A DNS name or an IP address as a URL's host is written (`[::1]` with brackets).
fn is_host_name(host: &str) -> bool {
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        return inner.parse::<std::net::Ipv6Addr>().is_ok();
    }
    !host.is_empty()
        && host.len() <= 253
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
}

/// The host of `entry` if it is written as a URL (`https://user@host:8080/path` → `host`).
fn host_of(entry: &str) -> &str {
    let rest = entry.split_once("://").map_or(entry, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or(rest);
    let host_port = authority.rsplit('@').next().unwrap_or(authority);
    if host_port.starts_with('[') {
        return host_port;
    }
    host_port.split(':').next().unwrap_or(host_port)
}

fn prices(config: &ProjectConfig, spans: &SpanIndex, out: &mut Vec<Diagnostic>) {
    for (model, price) in &config.pricing {
        for (key, value) in [
            ("input_per_mtok", price.input_per_mtok),
            ("output_per_mtok", price.output_per_mtok),
        ] {
            if !(value.is_finite() && value >= 0.0) {
                out.push(Diagnostic::new(
                    codes::E0906,
                    format!(
                        "invalid `hensu.toml`: `pricing.\"{}\".{key}`",
                        crate::messages::shown_name(model)
                    ),
                    spans.value(&["pricing", model, key]),
                    "a price must be a number ≥ 0",
                ));
            }
        }
    }
}

/// W0905 for each price of a model no agent of `used` names (see `ProjectFile::check_pricing`).
pub(crate) fn unused_prices(
    config: &ProjectConfig,
    spans: &SpanIndex,
    used: Vec<&str>,
) -> Vec<Diagnostic> {
    let known: Vec<&str> = hensu_sema::schema::MODELS
        .iter()
        .map(|(_, id)| *id)
        .chain(used.iter().copied())
        .collect();
    config
        .pricing
        .keys()
        .filter(|model| !used.contains(&model.as_str()))
        .map(|model| {
            let mut d = Diagnostic::new(
                codes::W0905,
                format!(
                    "price for model `{}`, which no agent uses",
                    crate::messages::shown_name(model)
                ),
                spans.key(&["pricing", model]),
                "the cost bound looks prices up by the exact model id",
            );
            if let Some(help) = hensu_sema::suggest::help_for(model, known.iter().copied()) {
                d = d.with_help(help);
            }
            d
        })
        .collect()
}

/// W0340 for each `require_approval` pattern of `[mcp]` or `[mcp.servers.NAME]` that matches
/// none of `tools`.
pub(crate) fn unmatched_approvals(
    config: &ProjectConfig,
    spans: &SpanIndex,
    tools: Vec<&str>,
) -> Vec<Diagnostic> {
    let mcp = &config.mcp;
    let top = mcp.require_approval.iter().enumerate().map(|(i, p)| {
        (
            vec!["mcp".to_string(), "require_approval".into(), i.to_string()],
            p,
        )
    });
    let servers = mcp.servers.iter().flat_map(|(name, s)| {
        s.require_approval.iter().enumerate().map(move |(i, p)| {
            let path = ["mcp", "servers", name, "require_approval"];
            (
                path.iter()
                    .map(|s| s.to_string())
                    .chain([i.to_string()])
                    .collect(),
                p,
            )
        })
    });
    top.chain(servers)
        .filter(|(_, p)| !tools.iter().any(|t| hensu_mcp::glob_matches(p, t)))
        .map(|(path, pattern): (Vec<String>, _)| {
            let path: Vec<&str> = path.iter().map(String::as_str).collect();
            let mut d = Diagnostic::new(
                codes::W0340,
                format!("`require_approval` pattern `{pattern}` matches no tool an agent declares"),
                spans.value(&path),
                "it gates nothing: agents call only the tools they declare",
            );
            if let Some(help) = hensu_sema::suggest::help_for(pattern, tools.iter().copied()) {
                d = d.with_help(help);
            }
            d
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::host_of;

    #[test]
    fn hosts_of_urls() {
        assert_eq!(host_of("https://hooks.example.com/x"), "hooks.example.com");
        assert_eq!(host_of("u:p@h.example:8080"), "h.example");
        assert_eq!(host_of("hooks.example.com"), "hooks.example.com");
    }
}
