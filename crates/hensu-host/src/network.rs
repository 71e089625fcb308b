//! Network access of a run's handlers (webhook `send`, `api-caller`). A run served by stub agents
//! is offline: its network handlers are simulated (the request they would send is recorded in the
//! action / node output, nothing leaves the machine) unless the project allows the host in
//! `hensu.toml`:
//!
//! ```toml
//! [network]
//! allow_hosts = ["hooks.example.com"]
//! ```
//!
//! (docs/language.md, *Runtime semantics*; README, *Offline runs*.) The section is read by
//! hensu-project (`NetworkConfig`); the face turns its hosts into a [`NetworkAccess`].

/// What the network handlers may reach.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum NetworkAccess {
    /// Real HTTP (a run with real models).
    #[default]
    Live,
    /// A stub run: simulated, except for these hosts.
    Offline { allow_hosts: Vec<String> },
}

impl NetworkAccess {
    /// Whether a request to `url` really goes out.
    pub fn allows(&self, url: &str) -> bool {
        match self {
            NetworkAccess::Live => true,
            NetworkAccess::Offline { allow_hosts } => reqwest::Url::parse(url)
                .ok()
                .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
                .is_some_and(|h| allow_hosts.iter().any(|a| a.eq_ignore_ascii_case(&h))),
        }
    }

    /// One line for the run header.
    pub fn describe(&self) -> String {
        match self {
            NetworkAccess::Live => "live".to_string(),
            NetworkAccess::Offline { allow_hosts } if allow_hosts.is_empty() => {
                "simulated (stub run; allow hosts in hensu.toml [network] allow_hosts)".to_string()
            }
            NetworkAccess::Offline { allow_hosts } => format!(
                "simulated (stub run), real HTTP to {}",
                allow_hosts.join(", ")
            ),
        }
    }
}

/// The simulated answer of a request that did not go out.
pub(crate) fn simulated(method: &str, url: &str) -> String {
    format!("simulated (offline run): {method} {url} was not sent")
}
