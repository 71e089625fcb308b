//! Shell commands of `execute` actions: the commands of `<working-dir>/commands.yaml`, run
//! through `/bin/sh -c` (docs/language.md, *Actions and commands*; docs/security.md, *Action
//! commands*).
//!
//! * Values never become shell text: each `{name}` is rewritten into a variable reference
//!   ([`crate::command_script`]) and the value travels in the environment.
//! * The environment is minimal ([`BASE_ENV`]): the entry's `env` mapping sets variables, its
//!   `pass_env` list passes named variables of hensuc's environment; nothing else (no
//!   `*_API_KEY`) reaches the command.
//! * Each command runs in its own process group, killed as a whole on timeout, on cancel and
//!   when the shell exits ([`crate::command_process`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use hensu_runtime::journal::{
    CallKind, CallPolicy, CallSpec, Declared, Journaled, OnInterrupted, journaled,
};
use hensu_runtime::{ActionResult, CancelToken, CommandRunner, Context, java_to_string, render};
use indexmap::IndexMap;
use serde_json::Value;

use crate::command_process::{Finish, Launch, run_in_group};
use crate::command_script::{CommandScript, VALUE_VAR_PREFIX, rewrite};

/// One `commands.yaml` entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommandSpec {
    pub command: String,
    /// Milliseconds (default 30 000).
    pub timeout_ms: u64,
    /// Variables set for the command (`env:` mapping).
    pub env: IndexMap<String, String>,
    /// Variables of hensuc's own environment passed through by name (`pass_env:` list).
    pub pass_env: Vec<String>,
    /// `policy:` / `on_interrupted:`: whether the command may run again when a run stopped
    /// after it started and before its result was recorded (docs/security.md, *Call
    /// journal*); `None`: not declared (`unsafe`, failing the node).
    pub declared: Option<Declared>,
}

impl CommandSpec {
    /// A command with the default timeout and no extra variables.
    pub fn new(command: impl Into<String>) -> Self {
        CommandSpec {
            command: command.into(),
            timeout_ms: DEFAULT_COMMAND_TIMEOUT_MS,
            env: IndexMap::new(),
            pass_env: Vec::new(),
            declared: None,
        }
    }
}

/// The environment variable holding a command's idempotency key (docs/security.md, *Call
/// journal*): the same when the node runs again after a crash or a takeover.
pub const IDEMPOTENCY_KEY_VAR: &str = "HENSU_IDEMPOTENCY_KEY";

/// The keys of one `commands.yaml` entry; `hensuc check` reports any other (W0322).
pub const COMMAND_KEYS: [&str; 6] = [
    "command",
    "timeout",
    "env",
    "pass_env",
    "policy",
    "on_interrupted",
];

/// The default command timeout.
pub const DEFAULT_COMMAND_TIMEOUT_MS: u64 = 30_000;

/// The variables of hensuc's environment every command gets (when set): the search path,
/// the user, the locale, the time zone and the temporary directory. `LC_*` variables are
/// passed too. Anything else must be named in `pass_env`.
pub const BASE_ENV: &[&str] = &[
    "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TERM",
];

/// `PATH` when hensuc itself has none.
const FALLBACK_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// The longest value a command can receive: Linux's limit on one environment string
/// (`NAME=value` and its terminating NUL).
pub const MAX_VALUE_BYTES: usize = 128 * 1024;

/// The commands of `<working-dir>/commands.yaml`, and the directory they run in.
#[derive(Clone, Debug, Default)]
pub struct CommandRegistry {
    commands: IndexMap<String, CommandSpec>,
    /// Entries dropped for having no `command` (as upstream), with why: an `execute` of one
    /// names the cause instead of only "not found".
    dropped: IndexMap<String, String>,
    working_dir: Option<PathBuf>,
    cancel: Option<CancelToken>,
}

impl CommandRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads `<dir>/commands.yaml` (a missing file is an empty registry) with a maintained YAML
    /// library (`serde_norway`). Format: `commands: { <id>: { command, timeout, env, pass_env } }`.
    ///
    /// Blocking: a host loads its commands before the run starts, not on the executor.
    pub fn load(dir: &Path) -> Result<Self, String> {
        let path = dir.join("commands.yaml");
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Ok(CommandRegistry::new().with_working_dir(dir));
            }
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let reg = Self::parse(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(reg.with_working_dir(dir))
    }

    /// Parses the YAML text. Entries without `command` are dropped (as upstream). A command
    /// whose placeholders stand where no value can be passed safely is an error
    /// ([`crate::command_script`]).
    pub fn parse(text: &str) -> Result<Self, String> {
        let doc = read_commands_yaml(text).map_err(|e| e.to_string())?;
        let mut commands = IndexMap::new();
        let mut dropped = IndexMap::new();
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
                dropped.insert(id.clone(), dropped_reason(fields));
                continue;
            };
            // A list or a mapping would run as its Java `toString` text: refused instead.
            if command.is_array() || command.is_object() {
                return Err(format!(
                    "command '{id}': command must be one string, the shell command line"
                ));
            }
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
                        check_variable_name(id, "env", k)?;
                        env.insert(k.clone(), java_to_string(v));
                    }
                }
                Some(_) => return Err(format!("command '{id}': env must be a mapping")),
            }
            let mut pass_env = Vec::new();
            match fields.get("pass_env") {
                None | Some(Value::Null) => {}
                Some(Value::Array(names)) => {
                    for n in names {
                        let Value::String(name) = n else {
                            return Err(format!(
                                "command '{id}': pass_env must be a list of variable names"
                            ));
                        };
                        check_variable_name(id, "pass_env", name)?;
                        pass_env.push(name.clone());
                    }
                }
                Some(_) => {
                    return Err(format!(
                        "command '{id}': pass_env must be a list of variable names"
                    ));
                }
            }
            let spec = CommandSpec {
                command: java_to_string(command),
                timeout_ms,
                env,
                pass_env,
                declared: declared_policy(id, fields)?,
            };
            rewrite(&spec.command).map_err(|e| format!("command '{id}': {e}"))?;
            commands.insert(id.clone(), spec);
        }
        Ok(CommandRegistry {
            commands,
            dropped,
            ..CommandRegistry::default()
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

    /// Kills a running command (its whole process group) when `cancel` fires.
    pub fn with_cancel(mut self, cancel: CancelToken) -> Self {
        self.cancel = Some(cancel);
        self
    }

    pub fn get(&self, id: &str) -> Option<&CommandSpec> {
        self.commands.get(id)
    }

    pub fn ids(&self) -> Vec<&str> {
        self.commands.keys().map(String::as_str).collect()
    }
}

/// An entry's `policy:` (`idempotent` or `unsafe`) and `on_interrupted:` (`fail` or `pause`).
fn declared_policy(
    id: &str,
    fields: &serde_json::Map<String, Value>,
) -> Result<Option<Declared>, String> {
    let word = |key: &str, allowed: &[&str]| -> Result<Option<String>, String> {
        match fields.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(w)) if allowed.contains(&w.as_str()) => Ok(Some(w.clone())),
            Some(_) => Err(format!(
                "command '{id}': {key} must be one of {}",
                allowed.join(", ")
            )),
        }
    };
    let policy = word("policy", &["idempotent", "unsafe"])?;
    let on_interrupted = word("on_interrupted", &["fail", "pause"])?;
    if policy.is_none() && on_interrupted.is_none() {
        return Ok(None);
    }
    Ok(Some(Declared {
        policy: match policy.as_deref() {
            Some("idempotent") => CallPolicy::Idempotent,
            _ => CallPolicy::Unsafe,
        },
        on_interrupted: match on_interrupted.as_deref() {
            Some("pause") => OnInterrupted::Pause,
            _ => OnInterrupted::Fail,
        },
    }))
}

/// Why an entry without `command` is dropped, naming its unknown keys (`run:` for `command:`).
fn dropped_reason(fields: &serde_json::Map<String, Value>) -> String {
    let unknown: Vec<String> = fields
        .keys()
        .filter(|k| !COMMAND_KEYS.contains(&k.as_str()))
        .map(|k| format!("`{k}`"))
        .collect();
    if unknown.is_empty() {
        "it has no `command:`".to_string()
    } else {
        format!(
            "it has no `command:`, only the unknown key{} {}; the command line goes under `command:`",
            if unknown.len() == 1 { "" } else { "s" },
            unknown.join(", ")
        )
    }
}

/// A command of `commands.yaml` with a placeholder where no value can be passed safely.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnsafeCommand {
    pub id: String,
    /// The command line as written.
    pub command: String,
    /// Why, with the byte offset in `command`.
    pub error: crate::command_script::ScriptError,
}

/// The text of a `commands.yaml` as JSON. A key given twice in one mapping is an error (the
/// YAML value type refuses it), where reading straight into JSON would keep the last one and a
/// run would execute another command than the one an author reads first.
pub fn read_commands_yaml(text: &str) -> Result<Value, serde_norway::Error> {
    let yaml: serde_norway::Value = serde_norway::from_str(text)?;
    serde_norway::from_value(yaml)
}

/// The ids of a `commands.yaml` text (entries with a `command`) and every command whose
/// placeholders cannot all be passed safely — all of them, where [`CommandRegistry::parse`]
/// stops at the first — for `hensuc check` to report before any run. `Err` when the text is
/// not a commands file at all (a run reports that when it loads the file).
pub fn audit_commands(text: &str) -> Result<(Vec<String>, Vec<UnsafeCommand>), String> {
    let doc = read_commands_yaml(text).map_err(|e| e.to_string())?;
    let entries = match &doc {
        Value::Null => return Ok((Vec::new(), Vec::new())),
        Value::Object(top) => match top.get("commands") {
            None | Some(Value::Null) => return Ok((Vec::new(), Vec::new())),
            Some(Value::Object(m)) => m,
            Some(_) => return Err("`commands` must be a mapping of command ids".into()),
        },
        _ => return Err("expected a mapping with a `commands` key".into()),
    };
    let mut ids = Vec::new();
    let mut unsafe_commands = Vec::new();
    for (id, entry) in entries {
        let Some(command) = entry.get("command").filter(|c| !c.is_null()) else {
            continue;
        };
        ids.push(id.clone());
        let command = java_to_string(command);
        if let Err(error) = rewrite(&command) {
            unsafe_commands.push(UnsafeCommand {
                id: id.clone(),
                command,
                error,
            });
        }
    }
    Ok((ids, unsafe_commands))
}

/// A variable name of `env` / `pass_env`: a shell name, not one of hensu's value variables.
fn check_variable_name(id: &str, field: &str, name: &str) -> Result<(), String> {
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return Err(format!(
            "command '{id}': {field}: `{name}` is not a variable name (letters, digits and _)"
        ));
    }
    if name.starts_with(VALUE_VAR_PREFIX) {
        return Err(format!(
            "command '{id}': {field}: `{name}` is reserved: {VALUE_VAR_PREFIX}* variables carry placeholder values"
        ));
    }
    Ok(())
}

#[async_trait]
impl CommandRunner for CommandRegistry {
    async fn execute(&self, id: &str, ctx: &Context) -> ActionResult {
        match self.commands.get(id) {
            None => {
                let why = self
                    .dropped
                    .get(id)
                    .map(|reason| format!(" (commands.yaml drops the entry: {reason})"))
                    .unwrap_or_default();
                ActionResult::failure(format!(
                    "Command not found in registry: '{id}'{why}. Available commands: [{}]",
                    self.ids().join(", ")
                ))
            }
            Some(spec) => {
                // Journaled (docs/security.md, *Call journal*): a node run again replays the
                // result; the key goes to the command as HENSU_IDEMPOTENCY_KEY.
                let call = CallSpec {
                    kind: CallKind::Command,
                    name: id,
                    declared: spec.declared.unwrap_or_default(),
                };
                let (dir, cancel) = (self.working_dir.as_deref(), self.cancel.as_ref());
                let run = journaled(call, |slot| async move {
                    let key = slot.map(|s| s.key);
                    let r = run_keyed(spec, ctx, dir, cancel, key.as_deref()).await;
                    let ok = r.success;
                    Ok::<_, std::convert::Infallible>(((r.success, r.output), ok))
                })
                .await;
                match run {
                    Ok((true, output)) => ActionResult::success(output),
                    Ok((false, output)) => ActionResult::failure(output),
                    Err(Journaled::Call(e)) => ActionResult::failure(e.to_string()),
                    Err(Journaled::Effect(never)) => match never {},
                }
            }
        }
    }
}

/// Runs one command (no cancellation): see [`run_command_with`].
pub async fn run_command(spec: &CommandSpec, ctx: &Context, dir: Option<&Path>) -> ActionResult {
    run_command_with(spec, ctx, dir, None).await
}

/// Runs one command: the placeholders become variable references, the values travel in the
/// environment, `/bin/sh -c <script>` runs in its own process group with stdout and stderr
/// merged, and the group is killed after the timeout or when `cancel` fires.
pub async fn run_command_with(
    spec: &CommandSpec,
    ctx: &Context,
    dir: Option<&Path>,
    cancel: Option<&CancelToken>,
) -> ActionResult {
    run_keyed(spec, ctx, dir, cancel, None).await
}

/// [`run_command_with`], with the call's idempotency key in [`IDEMPOTENCY_KEY_VAR`] (set in
/// the environment, never in the script).
async fn run_keyed(
    spec: &CommandSpec,
    ctx: &Context,
    dir: Option<&Path>,
    cancel: Option<&CancelToken>,
    key: Option<&str>,
) -> ActionResult {
    let script = match rewrite(&spec.command) {
        Ok(s) => s,
        Err(e) => return ActionResult::failure(format!("Command cannot be run: {e}")),
    };
    let mut env = match command_env(spec, &script, ctx, std::env::vars_os()) {
        Ok(env) => env,
        Err(e) => return ActionResult::failure(e),
    };
    if let Some(key) = key {
        env.retain(|(k, _)| k != IDEMPOTENCY_KEY_VAR);
        env.push((OsString::from(IDEMPOTENCY_KEY_VAR), OsString::from(key)));
    }
    let launch = Launch {
        script: &script.script,
        env,
        dir,
        timeout: Duration::from_millis(spec.timeout_ms),
        cancel,
    };
    match run_in_group(launch).await {
        Finish::SpawnFailed(e) => ActionResult::failure(format!("cannot start /bin/sh: {e}")),
        Finish::TimedOut => {
            ActionResult::failure(format!("Command timed out after {} ms", spec.timeout_ms))
        }
        Finish::Cancelled => ActionResult::failure("Command cancelled"),
        Finish::Exited { code, output } => {
            let output = String::from_utf8_lossy(&output);
            let output = output.trim_end_matches(['\n', '\r']).to_string();
            match code {
                Some(0) => ActionResult::success(output),
                Some(code) => ActionResult::failure(exit_message(code, &output)),
                None => ActionResult::failure("Command terminated by a signal"),
            }
        }
    }
}

/// Upstream's message for a failed command, with the last line the command printed (what a
/// failing tool says last is usually why) so the run's failure names its cause.
fn exit_message(code: i32, output: &str) -> String {
    const MAX: usize = 200;
    let last = output.lines().rev().map(str::trim).find(|l| !l.is_empty());
    match last {
        None => format!("Command failed with exit code: {code}"),
        Some(line) => {
            let mut end = line.len().min(MAX);
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            let more = if end < line.len() { "…" } else { "" };
            format!(
                "Command failed with exit code: {code}: {}{more}",
                &line[..end]
            )
        }
    }
}

/// The environment of a command: [`BASE_ENV`] and `LC_*` from `host_env`, the entry's
/// `pass_env` names, its `env` mapping, then one `HENSU_VALUE_<name>` per placeholder whose
/// value is present (absent and null values leave the variable unset).
pub fn command_env(
    spec: &CommandSpec,
    script: &CommandScript,
    ctx: &Context,
    host_env: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<Vec<(OsString, OsString)>, String> {
    let host: IndexMap<OsString, OsString> = host_env.into_iter().collect();
    let var = |name: &str| host.get(std::ffi::OsStr::new(name)).cloned();
    let mut env: IndexMap<OsString, OsString> = IndexMap::new();
    for name in BASE_ENV {
        if let Some(v) = var(name) {
            env.insert(OsString::from(name), v);
        }
    }
    for (k, v) in &host {
        if k.to_str().is_some_and(|k| k.starts_with("LC_")) {
            env.insert(k.clone(), v.clone());
        }
    }
    env.entry(OsString::from("PATH"))
        .or_insert_with(|| OsString::from(FALLBACK_PATH));
    for name in &spec.pass_env {
        if let Some(v) = var(name) {
            env.insert(OsString::from(name), v);
        }
    }
    for (k, v) in &spec.env {
        env.insert(OsString::from(k), OsString::from(v));
    }
    for (placeholder, var_name) in script.variables() {
        let value = match ctx.get(placeholder) {
            None | Some(Value::Null) => continue,
            Some(v) => render(v),
        };
        if value.contains('\0') {
            return Err(format!(
                "Command cannot be run: the value of {{{placeholder}}} contains a NUL character, which a command cannot receive"
            ));
        }
        if var_name.len() + 1 + value.len() + 1 > MAX_VALUE_BYTES {
            return Err(format!(
                "Command cannot be run: the value of {{{placeholder}}} is {} bytes; a command can receive at most {} bytes per value",
                value.len(),
                MAX_VALUE_BYTES - var_name.len() - 2
            ));
        }
        env.insert(OsString::from(var_name), OsString::from(value.into_owned()));
    }
    Ok(env.into_iter().collect())
}
