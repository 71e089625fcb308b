//! Shell commands of `execute` actions: the commands of `<working-dir>/commands.yaml`, run
//! through `/bin/sh -c` with every substituted value shell-quoted, a timeout and the entry's
//! env (docs/language.md, *Actions and commands*).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use async_trait::async_trait;
use hensu_runtime::{
    ActionResult, CommandRunner, Context, MAX_OUTPUT_BYTES, java_to_string, render, resolve_with,
};
use indexmap::IndexMap;
use serde_json::Value;

/// One `commands.yaml` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    pub command: String,
    /// Milliseconds (default 30 000).
    pub timeout_ms: u64,
    pub env: IndexMap<String, String>,
}

/// The default command timeout.
pub const DEFAULT_COMMAND_TIMEOUT_MS: u64 = 30_000;

/// The commands of `<working-dir>/commands.yaml`, and the directory they run in.
#[derive(Clone, Debug, Default)]
pub struct CommandRegistry {
    commands: IndexMap<String, CommandSpec>,
    working_dir: Option<PathBuf>,
}

impl CommandRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads `<dir>/commands.yaml` (a missing file is an empty registry) with a maintained YAML
    /// library (`serde_norway`). Format: `commands: { <id>: { command, timeout, env } }`.
    ///
    /// Blocking: a host loads its commands before the run starts, not on the executor.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join("commands.yaml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CommandRegistry {
                    commands: IndexMap::new(),
                    working_dir: Some(dir.to_path_buf()),
                });
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let mut reg = Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        reg.working_dir = Some(dir.to_path_buf());
        Ok(reg)
    }

    /// Parses the YAML text. Entries without `command` are dropped (as upstream).
    pub fn parse(text: &str) -> Result<Self, String> {
        let doc: Value = serde_norway::from_str(text).map_err(|e| e.to_string())?;
        let mut commands = IndexMap::new();
        let entries = match &doc {
            Value::Null => None,
            Value::Object(top) => match top.get("commands") {
                None | Some(Value::Null) => None,
                Some(Value::Object(m)) => Some(m),
                Some(_) => return Err("`commands` must be a mapping of command ids".into()),
            },
            _ => return Err("expected a mapping with a `commands` key".into()),
        };
        for (id, entry) in entries.into_iter().flatten() {
            let Value::Object(fields) = entry else {
                return Err(format!("command '{id}' must be a mapping"));
            };
            let Some(command) = fields.get("command").filter(|c| !c.is_null()) else {
                continue;
            };
            let timeout_ms = match fields.get("timeout") {
                None | Some(Value::Null) => DEFAULT_COMMAND_TIMEOUT_MS,
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| format!("command '{id}': timeout must be milliseconds"))?,
            };
            let mut env = IndexMap::new();
            match fields.get("env") {
                None | Some(Value::Null) => {}
                Some(Value::Object(vars)) => {
                    for (k, v) in vars {
                        env.insert(k.clone(), java_to_string(v));
                    }
                }
                Some(_) => return Err(format!("command '{id}': env must be a mapping")),
            }
            commands.insert(
                id.clone(),
                CommandSpec {
                    command: java_to_string(command),
                    timeout_ms,
                    env,
                },
            );
        }
        Ok(CommandRegistry {
            commands,
            working_dir: None,
        })
    }

    /// Adds or replaces a command.
    pub fn insert(&mut self, id: &str, spec: CommandSpec) {
        self.commands.insert(id.to_string(), spec);
    }

    /// Sets the directory commands run in.
    pub fn with_working_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.working_dir = Some(dir.into());
        self
    }

    pub fn get(&self, id: &str) -> Option<&CommandSpec> {
        self.commands.get(id)
    }

    pub fn ids(&self) -> Vec<&str> {
        self.commands.keys().map(String::as_str).collect()
    }
}

#[async_trait]
impl CommandRunner for CommandRegistry {
    async fn execute(&self, id: &str, ctx: &Context) -> ActionResult {
        match self.commands.get(id) {
            None => ActionResult::failure(format!(
                "Command not found in registry: '{id}'. Available commands: [{}]",
                self.ids().join(", ")
            )),
            Some(spec) => run_command(spec, ctx, self.working_dir.as_deref()).await,
        }
    }
}

/// Runs one command: the template is resolved with shell-quoted values, then run as
/// `/bin/sh -c <line>` with stdout and stderr merged, killed after the timeout.
pub async fn run_command(spec: &CommandSpec, ctx: &Context, dir: Option<&Path>) -> ActionResult {
    let line = resolve_shell(&spec.command, ctx);
    let (reader, writer) = match std::io::pipe() {
        Ok(p) => p,
        Err(e) => return ActionResult::failure(format!("cannot create pipe: {e}")),
    };
    let spawned = {
        let writer2 = match writer.try_clone() {
            Ok(w) => w,
            Err(e) => return ActionResult::failure(format!("cannot create pipe: {e}")),
        };
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg(&line)
            .envs(&spec.env)
            .stdin(Stdio::null())
            .stdout(Stdio::from(writer))
            .stderr(Stdio::from(writer2))
            .kill_on_drop(true);
        if let Some(d) = dir {
            cmd.current_dir(d);
        }
        cmd.spawn()
        // `cmd` (holding the parent's copies of the write ends) is dropped here.
    };
    let mut child = match spawned {
        Ok(c) => c,
        Err(e) => return ActionResult::failure(format!("cannot start /bin/sh: {e}")),
    };
    let read_task = tokio::task::spawn_blocking(move || {
        use std::io::Read;
        let mut buf = Vec::new();
        let _ = reader
            .take(MAX_OUTPUT_BYTES as u64 + 1)
            .read_to_end(&mut buf);
        buf
    });
    let timeout = Duration::from_millis(spec.timeout_ms);
    let status = match tokio::time::timeout(timeout, child.wait()).await {
        Ok(Ok(status)) => status,
        Ok(Err(e)) => return ActionResult::failure(format!("command failed: {e}")),
        Err(_) => {
            let _ = child.kill().await;
            return ActionResult::failure(format!(
                "Command timed out after {} ms",
                spec.timeout_ms
            ));
        }
    };
    // Background processes may keep the pipe open; do not wait for them for long.
    let output = match tokio::time::timeout(Duration::from_secs(2), read_task).await {
        Ok(Ok(buf)) => String::from_utf8_lossy(&buf).into_owned(),
        _ => String::new(),
    };
    let output = output.trim_end_matches(['\n', '\r']).to_string();
    match status.code() {
        Some(0) => ActionResult::success(output),
        Some(code) => ActionResult::failure(format!("Command failed with exit code: {code}")),
        None => ActionResult::failure("Command terminated by a signal"),
    }
}

/// Shell-quotes a value for `/bin/sh` (`shell-escape`: words of safe characters stay as they
/// are, anything else becomes `'…'` with `'` and `!` escaped).
pub fn shell_quote(s: &str) -> String {
    shell_escape::unix::escape(Cow::Borrowed(s)).into_owned()
}

/// Resolves a command line: every substituted value is shell-quoted; absent and null values
/// render as nothing (upstream drops nulls from the quoted copy of the context).
pub fn resolve_shell(template: &str, ctx: &Context) -> String {
    resolve_with(template, |name| match ctx.get(name) {
        None | Some(Value::Null) => Cow::Borrowed(""),
        Some(v) => Cow::Owned(shell_quote(&render(v))),
    })
}
