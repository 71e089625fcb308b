//! The `Host` allow-list (docs/server.md, *Connections and limits*). In dev mode (no JWT key)
//! every request runs as the dev tenant, so a web page whose DNS name is re-pointed at
//! 127.0.0.1 (DNS rebinding) would be same-origin with the server and could drive it; a
//! browser always sends the page's own name as `Host`, so answering loopback names only
//! closes that. With a key, any `Host` is answered unless `allowed_hosts` is configured.

use std::net::IpAddr;

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::ApiError;

/// Which `Host` names a server answers.
#[derive(Clone, Debug)]
pub struct HostRule {
    /// Loopback names and addresses (`localhost`, `*.localhost`, 127.0.0.0/8, `::1`).
    loopback: bool,
    /// Configured names: `name` (any port) or `name:port`, lower case, no trailing dot.
    names: Option<Vec<String>>,
}

impl HostRule {
    /// The rule of a server: `configured` (`allowed_hosts`), plus the loopback names in dev
    /// mode; without either, any name.
    pub fn new(dev_mode: bool, configured: Option<&[String]>) -> HostRule {
        HostRule {
            loopback: dev_mode,
            names: configured.map(|c| c.iter().map(|n| normalise(n)).collect()),
        }
    }

    /// Whether a request whose authority (`Host`) is `host` is answered. A request without
    /// one does not come from a browser and is answered.
    pub fn allows(&self, host: Option<&str>) -> bool {
        if !self.loopback && self.names.is_none() {
            return true;
        }
        let Some(host) = host else { return true };
        let host = normalise(host);
        let (name, _port) = split_port(&host);
        if self.loopback && is_loopback_name(name) {
            return true;
        }
        self.names
            .as_ref()
            .is_some_and(|names| names.iter().any(|n| *n == host || *n == name))
    }
}

/// Lower case, the trailing dot of the name dropped (`name.` is `name`), the port kept:
/// `name`, `name:port`, `v6` or `[v6]:port`.
fn normalise(host: &str) -> String {
    let lower = host.trim().to_ascii_lowercase();
    let (name, port) = split_port(&lower);
    let name = name.trim_end_matches('.');
    match (name.contains(':'), port) {
        (true, Some(p)) => format!("[{name}]:{p}"),
        (false, Some(p)) => format!("{name}:{p}"),
        (_, None) => name.to_string(),
    }
}

/// `name[:port]` or `[v6][:port]` → (name, port).
fn split_port(host: &str) -> (&str, Option<&str>) {
    if let Some(rest) = host.strip_prefix('[') {
        return match rest.split_once(']') {
            Some((addr, tail)) => (addr, tail.strip_prefix(':')),
            None => (host, None),
        };
    }
    match host.rsplit_once(':') {
        // More than one colon: a bare IPv6 address, no port.
        Some((name, _)) if name.contains(':') => (host, None),
        Some((name, port)) => (name, Some(port)),
        None => (host, None),
    }
}

fn is_loopback_name(name: &str) -> bool {
    if name == "localhost" || name.ends_with(".localhost") {
        return true;
    }
    name.parse::<IpAddr>()
        .is_ok_and(|ip| ip.to_canonical().is_loopback())
}

/// The middleware: 421 with the JSON error body for a `Host` the server does not answer.
pub async fn check(State(rule): State<HostRule>, req: Request, next: Next) -> Response {
    let host = req
        .uri()
        .authority()
        .map(|a| a.as_str().to_string())
        .or_else(|| {
            req.headers()
                .get(axum::http::header::HOST)
                .and_then(|v| v.to_str().ok())
                .map(str::to_string)
        });
    if rule.allows(host.as_deref()) {
        return next.run(req).await;
    }
    ApiError::new(
        StatusCode::MISDIRECTED_REQUEST,
        "this server does not answer requests for that Host name (docs/server.md, *Connections \
         and limits*: allowed_hosts)",
    )
    .with_code("host_not_allowed")
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_mode_answers_loopback_names_only() {
        let rule = HostRule::new(true, None);
        for ok in [
            "127.0.0.1:8080",
            "localhost",
            "LOCALHOST.:80",
            "app.localhost:3000",
            "[::1]:8080",
            "127.0.0.2",
            "[::ffff:127.0.0.1]:1",
        ] {
            assert!(rule.allows(Some(ok)), "{ok}");
        }
        for bad in [
            "attacker.example:8080",
            "localhost.attacker.example",
            "10.0.0.1",
            "[::2]:80",
            "127.0.0.1.nip.io",
        ] {
            assert!(!rule.allows(Some(bad)), "{bad}");
        }
        assert!(rule.allows(None));
    }

    #[test]
    fn configured_names_with_and_without_port() {
        let rule = HostRule::new(
            false,
            Some(&[
                "Hensu.Example.com".to_string(),
                "api.internal:8443".to_string(),
            ]),
        );
        assert!(rule.allows(Some("hensu.example.com")));
        assert!(rule.allows(Some("hensu.example.com.:443")));
        assert!(rule.allows(Some("api.internal:8443")));
        assert!(!rule.allows(Some("api.internal:80")));
        assert!(!rule.allows(Some("localhost")), "no loopback with a key");
        assert!(HostRule::new(false, None).allows(Some("anything")));
        let dev = HostRule::new(true, Some(&["box.lan".to_string()]));
        assert!(dev.allows(Some("box.lan:8080")) && dev.allows(Some("localhost")));
    }
}
