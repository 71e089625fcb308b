//! The `[mcp]` section of `hensu.toml` (docs/mcp.md, *Configuration*): its types and the
//! endpoint rules. The file is parsed by hensu-project, whose `ProjectConfig` holds [`McpConfig`].

use std::time::Duration;

use hensu_runtime::journal::{CallPolicy, Declared, OnInterrupted};
use indexmap::IndexMap;
use serde::Deserialize;

/// Default timeout of one `tools/call` (and, unless set apart, of connecting + `tools/list`).
pub const DEFAULT_CALL_TIMEOUT_MS: u64 = 60_000;
/// Default size cap of one tool result, in UTF-8 bytes.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 256 * 1024;

/// `[mcp]`: the servers tools come from and the limits of every call.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct McpConfig {
    /// `[mcp.servers.NAME]`, in file order (tool-name clashes: the first server wins).
    pub servers: IndexMap<String, ServerConfig>,
    /// Timeout of one tool call in milliseconds (default 60 000).
    pub call_timeout_ms: Option<u64>,
    /// Timeout of starting one server and listing its tools (default: the call timeout). A
    /// server started through `cargo run` may need minutes on its first build.
    pub connect_timeout_ms: Option<u64>,
    /// Largest accepted tool result in bytes (default 256 KiB).
    pub max_result_bytes: Option<usize>,
    /// Glob patterns over the names of every server's tools — in server mode, the tenants'
    /// tools reached through the gateway — whose calls by an agent wait for approval
    /// (docs/mcp.md, *Tool approval*).
    pub require_approval: Vec<String>,
}

/// One MCP server: a command spoken to over stdio, or a streamable-HTTP `url`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ServerConfig {
    /// The program to start (looked up on `PATH`; relative paths are relative to the
    /// working directory of the run).
    pub command: Option<String>,
    /// Its arguments, passed as an argument vector (never through a shell).
    pub args: Vec<String>,
    /// Environment variables *names* passed through to the child (its environment is
    /// otherwise cleared except `PATH`, `HOME`, `LANG`, so provider keys never reach it).
    pub env: Vec<String>,
    /// The streamable-HTTP endpoint, e.g. `http://127.0.0.1:8000/mcp` or `https://…`.
    pub url: Option<String>,
    /// `https://` servers only: a PEM file of the certificate authorities to trust *instead of*
    /// the built-in public roots (a private CA, a self-signed server). Relative paths are
    /// relative to the working directory of the run.
    pub ca_file: Option<String>,
    /// Whether the server's tools may be called again when a call was started before the run
    /// stopped and has no recorded result (docs/security.md, *Call journal*): `idempotent`
    /// or `unsafe` (the default when nothing is declared).
    pub policy: Option<CallPolicy>,
    /// Per tool, overriding `policy`: `{ search = "idempotent" }`.
    pub tool_policy: IndexMap<String, CallPolicy>,
    /// What an interrupted `unsafe` call does: `fail` the node (E0511, the default) or
    /// `pause` the run for a human.
    pub on_interrupted: Option<OnInterrupted>,
    /// Glob patterns (`*`, `?`) over the server's tool names whose calls by an agent wait for
    /// a reviewer's approval before they run (docs/mcp.md, *Tool approval*).
    pub require_approval: Vec<String>,
}

impl ServerConfig {
    /// Whether a call of `tool` of this server waits for approval (a `require_approval`
    /// pattern matches its name).
    pub fn requires_approval(&self, tool: &str) -> bool {
        self.require_approval.iter().any(|p| glob_matches(p, tool))
    }

    /// The declared policy of tool `tool` of this server; `None` when neither the tool nor
    /// the server declares one.
    pub fn declared(&self, tool: &str) -> Option<Declared> {
        let policy = self.tool_policy.get(tool).copied().or(self.policy)?;
        Some(Declared {
            policy,
            on_interrupted: self.on_interrupted.unwrap_or_default(),
        })
    }
}

/// How to reach one server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Stdio {
        command: String,
        args: Vec<String>,
        env: Vec<String>,
    },
    Http {
        url: String,
        /// The `ca_file` of an `https://` server (docs/mcp.md, *Configuration*).
        ca_file: Option<String>,
    },
}

impl McpConfig {
    pub fn call_timeout(&self) -> Duration {
        Duration::from_millis(self.call_timeout_ms.unwrap_or(DEFAULT_CALL_TIMEOUT_MS))
    }

    pub fn connect_timeout(&self) -> Duration {
        self.connect_timeout_ms
            .map(Duration::from_millis)
            .unwrap_or_else(|| self.call_timeout())
    }

    /// Whether an agent's call of `tool`, served by server `server` (`None`: by no server of
    /// this section — a scripted stand-in, a tenant's tool), waits for approval: a pattern
    /// of the section matches it, or one of that server's (of any server's, for `None`).
    pub fn requires_approval(&self, server: Option<&str>, tool: &str) -> bool {
        if self.require_approval.iter().any(|p| glob_matches(p, tool)) {
            return true;
        }
        match server.and_then(|s| self.servers.get(s)) {
            Some(s) => s.requires_approval(tool),
            None => self.servers.values().any(|s| s.requires_approval(tool)),
        }
    }

    pub fn max_result_bytes(&self) -> usize {
        self.max_result_bytes.unwrap_or(DEFAULT_MAX_RESULT_BYTES)
    }

    /// Each server's endpoint, or the first configuration error.
    pub fn endpoints(&self) -> Result<Vec<(String, Endpoint)>, String> {
        self.servers
            .iter()
            .map(|(name, s)| s.endpoint(name).map(|e| (name.clone(), e)))
            .collect()
    }
}

impl ServerConfig {
    fn endpoint(&self, name: &str) -> Result<Endpoint, String> {
        if self.ca_file.is_some() && !self.url.as_deref().is_some_and(is_https) {
            return Err(format!(
                "mcp.servers.{name}: `ca_file` applies to `https://` servers only"
            ));
        }
        // `env` passes variables through by name; a `NAME=value` entry would pass nothing.
        // The entry itself is not repeated: it may hold a secret.
        if let Some(i) = self.env.iter().position(|v| !is_env_name(v)) {
            return Err(format!(
                "mcp.servers.{name}: `env` entry {} is not a variable name: `env` lists the names of variables passed through to the server (set a value in hensuc's own environment)",
                i + 1
            ));
        }
        match (&self.command, &self.url) {
            (Some(command), None) if !command.trim().is_empty() => Ok(Endpoint::Stdio {
                command: command.clone(),
                args: self.args.clone(),
                env: self.env.clone(),
            }),
            (None, Some(url)) if url.starts_with("http://") || is_https(url) => {
                if !self.args.is_empty() || !self.env.is_empty() {
                    return Err(format!(
                        "mcp.servers.{name}: `args` and `env` apply to `command` servers only"
                    ));
                }
                Ok(Endpoint::Http {
                    url: url.clone(),
                    ca_file: self.ca_file.clone(),
                })
            }
            (None, Some(_)) => Err(format!(
                "mcp.servers.{name}: `url` must start with http:// or https://"
            )),
            (Some(_), Some(_)) => Err(format!(
                "mcp.servers.{name}: give either `command` (stdio) or `url` (HTTP), not both"
            )),
            _ => Err(format!(
                "mcp.servers.{name}: needs `command` (stdio) or `url` (streamable HTTP)"
            )),
        }
    }
}

/// Whether glob `pattern` matches all of `name`: `*` any run of characters (none included),
/// `?` one character, anything else itself.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    // Iterative matching with one backtrack point (the last `*`): linear in practice, never
    // exponential.
    let (mut i, mut j) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while j < n.len() {
        match p.get(i) {
            Some('*') => {
                star = Some((i, j));
                i += 1;
            }
            Some(&c) if c == '?' || c == n[j] => {
                i += 1;
                j += 1;
            }
            _ => match star {
                Some((si, sj)) => {
                    i = si + 1;
                    j = sj + 1;
                    star = Some((si, sj + 1));
                }
                None => return false,
            },
        }
    }
    p[i..].iter().all(|c| *c == '*')
}

/// Whether `name` can be an environment variable's name (`CARGO_HOME`).
fn is_env_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
        && bytes.all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn is_https(url: &str) -> bool {
    url.starts_with("https://")
}

#[cfg(test)]
mod tests {
    use super::{McpConfig, ServerConfig, glob_matches};

    #[test]
    fn glob_patterns_match_whole_names() {
        for (p, n) in [
            ("delete_*", "delete_file"),
            ("delete_*", "delete_"),
            ("*", "anything"),
            ("d?lete", "delete"),
            ("*_file", "move_file"),
            ("a*b*c", "a-b-b-c"),
            ("exact", "exact"),
        ] {
            assert!(glob_matches(p, n), "{p} ~ {n}");
        }
        for (p, n) in [
            ("delete_*", "undelete_file"),
            ("delete", "delete_file"),
            ("d?lete", "dlete"),
            ("a*b*c", "a-b-b-"),
            ("", "x"),
        ] {
            assert!(!glob_matches(p, n), "{p} !~ {n}");
        }
        // Long runs of stars stay linear.
        assert!(!glob_matches(&"*a".repeat(50), &"a".repeat(40)));
    }

    #[test]
    fn approval_follows_the_section_then_the_serving_server() {
        let mut config = McpConfig {
            require_approval: vec!["drop_*".into()],
            ..McpConfig::default()
        };
        config.servers.insert(
            "files".into(),
            ServerConfig {
                require_approval: vec!["delete_*".into()],
                ..ServerConfig::default()
            },
        );
        config
            .servers
            .insert("search".into(), ServerConfig::default());
        assert!(config.requires_approval(Some("search"), "drop_index"));
        assert!(config.requires_approval(Some("files"), "delete_file"));
        assert!(!config.requires_approval(Some("search"), "delete_file"));
        // Served by no server of the section (a stub script, a tenant's tool): any server's.
        assert!(config.requires_approval(None, "delete_file"));
        assert!(!config.requires_approval(None, "lookup"));
    }
}
