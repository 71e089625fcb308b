//! The server's connection and resource limits (docs/server.md, *Connections and limits*): one
//! serde type, [`Limits`], read from `[server.limits]` of `hensu.toml` (every key optional,
//! unknown keys refused), with safe defaults. It lives here, with the rest of `hensu.toml`, and
//! hensu-server re-exports it as `hensu_server::Limits`.
//!
//! What each limit protects: the header-read timeout and the connection caps keep idle or
//! slow clients from holding every socket (file descriptors are the scarce resource); the
//! request timeout and body-read timeout cut clients that drip a body; the `Host` allow-list
//! stops DNS rebinding in dev mode; the stream cap keeps one tenant from opening unbounded
//! event streams; the context bounds and the push concurrency keep one request from taking the
//! memory or the CPU every other request needs.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// Connection and resource limits of a server (`[server.limits]`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// A connection must deliver a complete request head this long after it opens or after
    /// its previous response (hyper starts the same timer when a kept-alive connection goes
    /// idle, so this is also the keep-alive idle timeout); otherwise it is closed.
    #[serde(deserialize_with = "duration", serialize_with = "show_duration")]
    pub header_read_timeout: Duration,
    /// Keep connections open between requests (HTTP/1.1 keep-alive).
    pub keep_alive: bool,
    /// Longest gap between two chunks of a request body before the request fails (408).
    #[serde(deserialize_with = "duration", serialize_with = "show_duration")]
    pub body_read_timeout: Duration,
    /// A request (body read and handler) must be answered within this; otherwise 408. An event
    /// stream's response starts at once, so its length is not limited by this.
    #[serde(deserialize_with = "duration", serialize_with = "show_duration")]
    pub request_timeout: Duration,
    /// Open connections at most; over it a new connection is closed at once. `None`: the
    /// open-file limit of the process less a reserve for the store and outbound requests.
    pub max_connections: Option<usize>,
    /// Open connections from one client address at most (0: no cap). Behind a reverse proxy
    /// every connection comes from the proxy: raise it or set 0.
    pub max_connections_per_ip: usize,
    /// The `Host` names (or `name:port`, or IP addresses) requests may carry. `None`: loopback
    /// names and addresses in dev mode (no JWT key), any with a key.
    pub allowed_hosts: Option<Vec<String>>,
    /// Open event streams (SSE) of one tenant at most; over it 429.
    pub max_streams_per_tenant: usize,
    /// Open event streams (SSE) of all tenants together at most; over it 429.
    pub max_streams: usize,
    /// Pushes checked at the same time (their checks run on the blocking pool). `None`: half
    /// the CPUs, at least one.
    pub max_concurrent_pushes: Option<usize>,
    /// A start's `context`: its JSON text at most this many bytes (413).
    pub context_max_bytes: usize,
    /// A start's `context`: object keys and array items, counted at every level, at most (413).
    pub context_max_entries: usize,
    /// A start's `context`: nesting depth at most (400).
    pub context_max_depth: usize,
    /// Runs one batch start (`POST /api/v1/executions/batch`) may queue at most (400); its
    /// whole body is bounded by `context_max_bytes`.
    pub batch_max_starts: usize,
    /// On SIGTERM/SIGINT, how long running executions get to reach their next node boundary
    /// (and open connections to finish); after it, a run still inside a node is handed back
    /// at its last recorded boundary (the node in flight runs again on the next owner).
    #[serde(deserialize_with = "duration", serialize_with = "show_duration")]
    pub shutdown_grace: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            keep_alive: true,
            body_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_connections: None,
            max_connections_per_ip: 256,
            allowed_hosts: None,
            max_streams_per_tenant: 32,
            max_streams: 1024,
            max_concurrent_pushes: None,
            context_max_bytes: 1024 * 1024,
            context_max_entries: 10_000,
            context_max_depth: 32,
            batch_max_starts: 1000,
            shutdown_grace: Duration::from_secs(20),
        }
    }
}

/// File descriptors kept for the store, stub and key files, and outbound requests when the
/// connection cap is derived from the open-file limit.
const FD_RESERVE: u64 = 128;

impl Limits {
    /// The limits with every value checked (a zero timeout or cap is a configuration error,
    /// not "unlimited", except `max_connections_per_ip = 0`).
    pub fn validated(self) -> Result<Limits, String> {
        let nonzero = [
            ("header_read_timeout", self.header_read_timeout.is_zero()),
            ("body_read_timeout", self.body_read_timeout.is_zero()),
            ("request_timeout", self.request_timeout.is_zero()),
            ("max_connections", self.max_connections == Some(0)),
            ("max_streams_per_tenant", self.max_streams_per_tenant == 0),
            ("max_streams", self.max_streams == 0),
            (
                "max_concurrent_pushes",
                self.max_concurrent_pushes == Some(0),
            ),
            ("context_max_bytes", self.context_max_bytes == 0),
            ("context_max_entries", self.context_max_entries == 0),
            ("context_max_depth", self.context_max_depth == 0),
            ("batch_max_starts", self.batch_max_starts == 0),
        ];
        if let Some((name, _)) = nonzero.iter().find(|(_, zero)| *zero) {
            return Err(format!("[server.limits] {name} must be greater than 0"));
        }
        if let Some(hosts) = &self.allowed_hosts
            && let Some(bad) = hosts.iter().find(|h| h.trim().is_empty())
        {
            return Err(format!(
                "[server.limits] allowed_hosts: {bad:?} is not a host name"
            ));
        }
        Ok(self)
    }

    /// The connection cap in force: the configured one, else the open-file limit less
    /// a reserve of 128 (at least 64; 1,024 less the reserve where the limit is unknown).
    pub fn connection_cap(&self) -> usize {
        self.max_connections.unwrap_or_else(|| {
            let soft = open_file_limit().unwrap_or(1024);
            usize::try_from(soft.saturating_sub(FD_RESERVE).max(64)).unwrap_or(usize::MAX)
        })
    }

    /// The push concurrency in force.
    pub fn push_concurrency(&self) -> usize {
        self.max_concurrent_pushes.unwrap_or_else(|| {
            std::thread::available_parallelism()
                .map(|n| (n.get() / 2).max(1))
                .unwrap_or(1)
        })
    }
}

/// The soft open-file limit of this process.
#[cfg(unix)]
fn open_file_limit() -> Option<u64> {
    rustix::process::getrlimit(rustix::process::Resource::Nofile).current
}

#[cfg(not(unix))]
fn open_file_limit() -> Option<u64> {
    None
}

/// A duration as `hensuc` flags write it: `500ms`, `10s`, `2m` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, "s"),
    };
    let n: u64 = num
        .parse()
        .map_err(|_| format!("`{s}` is not a duration (e.g. 10s, 500ms, 2m)"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n.saturating_mul(60))),
        _ => Err(format!("`{s}`: unknown unit `{unit}` (ms, s or m)")),
    }
}

fn duration<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(d)?;
    // The message names no value of the file (hensu-project's rule for every message).
    parse_duration(&text)
        .map_err(|_| serde::de::Error::custom("not a duration: write it as 10s, 500ms or 2m"))
}

fn show_duration<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}ms", d.as_millis()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse_like_the_flags() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("10"), Ok(Duration::from_secs(10)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert!(parse_duration("2h").is_err());
        assert!(parse_duration("x").is_err());
    }

    #[test]
    fn zero_caps_are_refused_and_defaults_pass() {
        assert!(Limits::default().validated().is_ok());
        let zero = Limits {
            max_streams_per_tenant: 0,
            ..Limits::default()
        };
        let err = zero.validated().expect_err("zero refused");
        assert!(err.contains("max_streams_per_tenant"), "{err}");
        let blank = Limits {
            allowed_hosts: Some(vec![" ".into()]),
            ..Limits::default()
        };
        assert!(blank.validated().is_err());
    }

    #[test]
    fn the_connection_cap_stays_under_the_open_file_limit() {
        let cap = Limits::default().connection_cap();
        if let Some(limit) = open_file_limit() {
            assert!(
                (cap as u64) < limit.max(FD_RESERVE + 64),
                "{cap} vs {limit}"
            );
        }
        let set = Limits {
            max_connections: Some(7),
            ..Limits::default()
        };
        assert_eq!(set.connection_cap(), 7);
    }
}
