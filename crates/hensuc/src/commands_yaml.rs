//! What `hensuc check` finds in a project's `commands.yaml` before any run loads it
//! (docs/language.md, *Actions and commands*): everything a run refuses (E0510, E0211 in
//! `project.rs`), entries a run silently drops or keys it ignores (W0322), and placeholders that
//! name nothing the executing workflow declares (W0323). Every finding points into the file.

use hensu_diagnostics::{Diagnostic, FileId, Span, codes};
use hensu_ir::{Action, CompensationBody, Node, Workflow};
use serde_json::Value;

/// The keys of one command entry: the run's loader's (`CommandRegistry::parse`).
const ENTRY_KEYS: [&str; 6] = hensu_host::COMMAND_KEYS;

/// One command with its `{name}` placeholders and where each stands in the file.
#[derive(Clone, Debug)]
pub struct CommandPlaceholders {
    pub id: String,
    pub placeholders: Vec<(String, Span)>,
}

/// The result of reading `commands.yaml` for `check`.
#[derive(Clone, Debug, Default)]
pub struct CommandsAudit {
    /// The ids `execute` may name: every entry, also one without `command` (W0322 says why a
    /// run would not find it, so no follow-on E0210 hides the cause). `None`: the file is not
    /// a commands file at all (E0510), and ids are not checked.
    pub ids: Option<Vec<String>>,
    pub commands: Vec<CommandPlaceholders>,
    /// E0510 and W0322, without a file (the caller adds it).
    pub diagnostics: Vec<Diagnostic>,
}

/// Reads the text as `hensuc run` would (`hensu_host::CommandRegistry::parse`) and explains
/// what it refuses or drops. `unsafe_reported`: E0211 diagnostics already cover the refusal.
pub fn audit(text: &str, unsafe_reported: bool) -> CommandsAudit {
    let doc: Value = match hensu_host::read_commands_yaml(text) {
        Ok(doc) => doc,
        Err(e) => {
            let mut at = e.location().map_or(0, |l| l.index()).min(text.len());
            // A position inside a character would panic the slicing below.
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let message = e.to_string();
            let span = duplicate_key_span(text, at, &message)
                .unwrap_or_else(|| Span::from_range(at..line_end(text, at)));
            let label = message
                .split(" at line")
                .next()
                .unwrap_or(&message)
                .to_string();
            return CommandsAudit {
                ids: None,
                commands: Vec::new(),
                diagnostics: vec![invalid(span, label)],
            };
        }
    };
    let mut out = CommandsAudit::default();
    let entries = match &doc {
        Value::Object(top) => top.get("commands").and_then(Value::as_object),
        _ => None,
    };
    if let Err(message) = hensu_host::CommandRegistry::parse(text)
        && !unsafe_reported
    {
        let span = locate_error(text, &message);
        out.diagnostics.push(invalid(span, message));
        if entries.is_none() {
            return out;
        }
    }
    let mut ids = Vec::new();
    if let Value::Object(top) = &doc {
        for (key, value) in top.iter().filter(|(k, _)| k.as_str() != "commands") {
            out.diagnostics.push(unknown_top_key(text, key));
            // The ids under a misspelt `commands:` count as declared: W0325 is the cause, an
            // E0210 per `execute` would only echo it.
            if let Value::Object(entries) = value {
                ids.extend(entries.keys().cloned());
            }
        }
    }
    for (id, entry) in entries.into_iter().flatten() {
        ids.push(id.clone());
        let Value::Object(fields) = entry else {
            continue;
        };
        let key = key_span(text, id, None);
        let has_command = fields.get("command").is_some_and(|c| !c.is_null());
        for name in fields.keys().filter(|k| !ENTRY_KEYS.contains(&k.as_str())) {
            let span = field_span(text, id, name, false)
                .or(key)
                .unwrap_or_default();
            out.diagnostics
                .push(unknown_key(id, name, span, has_command));
        }
        if !has_command && fields.keys().all(|k| ENTRY_KEYS.contains(&k.as_str())) {
            out.diagnostics
                .push(no_command(id, key.unwrap_or_default()));
        }
        if let Some(Value::String(command)) = fields.get("command") {
            let at = field_span(text, id, "command", true).and_then(|s| {
                let from = s.start as usize;
                text[from..].find(command.as_str()).map(|p| from + p)
            });
            let placeholders = hensu_runtime::placeholders(command)
                .into_iter()
                .map(|name| {
                    let span = at
                        .and_then(|at| {
                            let needle = format!("{{{name}}}");
                            command.find(&needle).map(|p| at + p..at + p + needle.len())
                        })
                        .map(Span::from_range)
                        .or(key)
                        .unwrap_or_default();
                    (name.to_string(), span)
                })
                .collect();
            out.commands.push(CommandPlaceholders {
                id: id.clone(),
                placeholders,
            });
        }
    }
    out.ids = Some(ids);
    out
}

/// W0323 for each placeholder of a command `wf` executes that names nothing a run can supply:
/// no declared variable, engine variable, node output or compensation value. A workflow
/// without `state { }` declares nothing to check against (as E0403).
pub fn check_placeholders(wf: &Workflow, audit: &CommandsAudit, file: FileId) -> Vec<Diagnostic> {
    let Some(schema) = &wf.state_schema else {
        return Vec::new();
    };
    let executed = executed_commands(wf);
    let known = |name: &str| {
        schema.variable(name).is_some()
            || hensu_ir::is_engine_variable(name)
            || matches!(name, hensu_ir::COMPENSATING | hensu_ir::COMPENSATING_OUTPUT)
            || wf.nodes.contains_key(name)
    };
    let mut out = Vec::new();
    for command in audit
        .commands
        .iter()
        .filter(|c| executed.contains(&c.id.as_str()))
    {
        let mut seen: Vec<&str> = Vec::new();
        for (name, span) in &command.placeholders {
            if known(name) || seen.contains(&name.as_str()) {
                continue;
            }
            seen.push(name);
            let names = schema.variables.iter().map(|v| v.name.as_str());
            let mut d = Diagnostic::new(
                codes::W0323,
                format!(
                    "placeholder `{{{name}}}` of command `{}` names no variable of workflow `{}`",
                    command.id, wf.id
                ),
                *span,
                "not declared in the workflow's `state { }`",
            )
            .with_note("a run passes an empty value for it");
            d = match hensu_sema::did_you_mean(name, names) {
                Some(c) => d.with_help(format!("did you mean `{{{c}}}`?")),
                None => d.with_help(format!(
                    "declare it in `state {{ }}`, e.g. `variable(\"{name}\", VarType.STRING)`"
                )),
            };
            out.push(d.in_file(file));
        }
    }
    out
}

/// The command ids `wf` executes, in its action nodes and its compensations.
fn executed_commands(wf: &Workflow) -> Vec<&str> {
    let node_actions = wf.nodes.values().filter_map(|n| match n {
        Node::Action(a) => Some(a.actions.as_slice()),
        _ => None,
    });
    let compensation_actions = wf
        .saga
        .compensations
        .values()
        .filter_map(|c| match &c.body {
            CompensationBody::Actions(actions) => Some(actions.as_slice()),
            _ => None,
        });
    node_actions
        .chain(compensation_actions)
        .flatten()
        .filter_map(|a| match a {
            Action::Execute { command_id } => Some(command_id.as_str()),
            _ => None,
        })
        .collect()
}

fn invalid(span: Span, message: String) -> Diagnostic {
    Diagnostic::new(
        codes::E0510,
        "invalid `commands.yaml`",
        span,
        message,
    )
    .with_note("a run refuses the whole file")
    .with_help(
        "the format is `commands:` then `<id>:` entries with `command: \"…\"`, `timeout: <ms>`, `env:` and `pass_env:`",
    )
}

fn unknown_key(id: &str, name: &str, span: Span, has_command: bool) -> Diagnostic {
    let mut d = Diagnostic::new(
        codes::W0322,
        format!("command `{id}` has an unknown key `{name}`"),
        span,
        "a run ignores this key",
    );
    if !has_command {
        d = d.with_note(format!(
            "without `command:` a run drops the entry, and `execute(\"{id}\")` fails as an unknown command"
        ));
    }
    let command_like = ["run", "cmd", "shell", "script", "exec", "commands"];
    match hensu_sema::did_you_mean(name, ENTRY_KEYS) {
        Some(c) => d.with_help(format!("did you mean `{c}:`?")),
        None if command_like.contains(&name) && !has_command => {
            d.with_help("the command line goes under `command:`")
        }
        None => d.with_help(format!("the keys of an entry are {}", key_list())),
    }
}

/// W0325: a top-level key other than `commands` (a run reads only `commands:`).
fn unknown_top_key(text: &str, key: &str) -> Diagnostic {
    let span = key_line(text, key, 0, None)
        .map(|(at, _)| Span::from_range(at..at + key.len()))
        .unwrap_or_default();
    let d = Diagnostic::new(
        codes::W0325,
        format!("`commands.yaml` has an unknown top-level key `{key}`"),
        span,
        "a run reads only `commands:`",
    )
    .with_note("a run ignores this key and everything under it");
    match hensu_sema::did_you_mean(key, ["commands"]) {
        Some(c) => d.with_help(format!("did you mean `{c}:`?")),
        None => d.with_help("the commands go under `commands:`, one `<id>:` entry each"),
    }
}

fn no_command(id: &str, span: Span) -> Diagnostic {
    Diagnostic::new(
        codes::W0322,
        format!("command `{id}` has no `command`"),
        span,
        "no `command:` in this entry",
    )
    .with_note(format!(
        "a run drops the entry, and `execute(\"{id}\")` fails as an unknown command"
    ))
    .with_help("add the command line: `command: \"…\"`")
}

fn key_list() -> String {
    ENTRY_KEYS
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Where the loader's message points: `command '<id>': <field> …` at that field's value, else
/// at the entry, else at the start of the file.
fn locate_error(text: &str, message: &str) -> Span {
    let Some(rest) = message.strip_prefix("command '") else {
        return Span::from_range(0..line_end(text, 0));
    };
    let Some((id, detail)) = rest.split_once("': ") else {
        // `command '<id>' must be a mapping`: at the entry.
        return rest
            .split_once('\'')
            .and_then(|(id, _)| key_span(text, id, None))
            .unwrap_or_default();
    };
    let field = detail.split([' ', ':']).next().unwrap_or("");
    ENTRY_KEYS
        .contains(&field)
        .then(|| field_span(text, id, field, true))
        .flatten()
        .or_else(|| key_span(text, id, None))
        .unwrap_or_default()
}

/// A key given twice: the parser points at the mapping; the second key is the one to remove.
fn duplicate_key_span(text: &str, mapping_at: usize, message: &str) -> Option<Span> {
    let key = message
        .split("duplicate entry with key \"")
        .nth(1)?
        .split('"')
        .next()?;
    let line_start = text[..mapping_at].rfind('\n').map_or(0, |p| p + 1);
    let (first, indent) = key_line(text, key, line_start, None)?;
    let (second, again) = key_line(text, key, line_end(text, first), indent.checked_sub(1))?;
    (again == indent).then(|| Span::from_range(second..second + key.len()))
}

fn line_end(text: &str, at: usize) -> usize {
    text[at..].find('\n').map_or(text.len(), |p| at + p)
}

/// The key `name:` on a line of its own (block style), optionally only after byte `from` and
/// indented deeper than `min_indent`.
fn key_line(
    text: &str,
    name: &str,
    from: usize,
    min_indent: Option<usize>,
) -> Option<(usize, usize)> {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        let start = at;
        at += line.len();
        if start < from {
            continue;
        }
        let trimmed = line.trim_start();
        let indent = line.len() - trimmed.len();
        if let Some(min) = min_indent
            && indent <= min
            && !trimmed.trim().is_empty()
            && !trimmed.starts_with('#')
        {
            return None;
        }
        let unquoted = trimmed.trim_start_matches(['"', '\'']);
        let quote = trimmed.len() - unquoted.len();
        if unquoted.starts_with(name)
            && unquoted[name.len()..]
                .trim_start_matches(['"', '\''])
                .starts_with(':')
        {
            return Some((start + indent + quote, indent));
        }
    }
    None
}

/// The entry `id:` under `commands:`.
fn key_span(text: &str, id: &str, _field: Option<&str>) -> Option<Span> {
    let (commands_at, commands_indent) = key_line(text, "commands", 0, None)?;
    let (at, _) = key_line(text, id, line_end(text, commands_at), Some(commands_indent))?;
    Some(Span::from_range(at..at + id.len()))
}

/// The key `field:` of entry `id` (its value when `value`, else the key).
fn field_span(text: &str, id: &str, field: &str, value: bool) -> Option<Span> {
    let (commands_at, commands_indent) = key_line(text, "commands", 0, None)?;
    let (id_at, id_indent) =
        key_line(text, id, line_end(text, commands_at), Some(commands_indent))?;
    let after_id = line_end(text, id_at);
    let (at, _) = key_line(text, field, after_id, Some(id_indent))?;
    if !value {
        return Some(Span::from_range(at..at + field.len()));
    }
    let end = line_end(text, at);
    let colon = text[at..end].find(':').map_or(at, |p| at + p + 1);
    let value_start = colon + (text[colon..end].len() - text[colon..end].trim_start().len());
    let value_end = value_start + text[value_start..end].trim_end().len();
    Some(if value_end > value_start {
        Span::from_range(value_start..value_end)
    } else {
        Span::from_range(at..at + field.len())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_string_timeout_is_e0510_at_its_value() {
        let text = "commands:\n  refund:\n    command: \"echo hi\"\n    timeout: \"5s\"\n";
        let a = audit(text, false);
        let d = &a.diagnostics[0];
        assert_eq!(codes::E0510, d.code);
        assert_eq!(
            &text[d.primary.span.start as usize..d.primary.span.end as usize],
            "\"5s\""
        );
    }

    #[test]
    fn a_command_given_twice_is_e0510_and_a_run_refuses_it_too() {
        let text =
            "commands:\n  deploy:\n    command: \"true\"\n  deploy:\n    command: \"false\"\n";
        let a = audit(text, false);
        assert!(a.ids.is_none());
        let d = &a.diagnostics[0];
        assert_eq!(codes::E0510, d.code);
        assert!(
            d.primary.message.contains("duplicate"),
            "{}",
            d.primary.message
        );
        let line = text[..d.primary.span.start as usize].matches('\n').count() + 1;
        assert_eq!(line, 4);
        assert!(hensu_host::CommandRegistry::parse(text).is_err());
    }

    #[test]
    fn bad_indentation_is_e0510_on_its_line() {
        let text = "commands:\n  refund:\n    command: \"echo hi\"\n   timeout: 5000\n";
        let a = audit(text, false);
        assert!(a.ids.is_none());
        let d = &a.diagnostics[0];
        assert_eq!(codes::E0510, d.code);
        let line = text[..d.primary.span.start as usize].matches('\n').count() + 1;
        assert_eq!(line, 4);
    }

    #[test]
    fn run_instead_of_command_is_w0322_and_keeps_the_id() {
        let text = "commands:\n  refund:\n    run: \"echo hi\"\n";
        let a = audit(text, false);
        assert_eq!(a.ids.as_deref(), Some(&["refund".to_string()][..]));
        assert_eq!(a.diagnostics.len(), 1);
        let d = &a.diagnostics[0];
        assert_eq!(codes::W0322, d.code);
        assert_eq!(
            &text[d.primary.span.start as usize..d.primary.span.end as usize],
            "run"
        );
        assert!(d.help.iter().any(|h| h.contains("command:")));
    }

    #[test]
    fn an_entry_that_is_not_a_mapping_is_e0510_at_the_entry() {
        let text = "commands:\n  refund: \"echo hi\"\n";
        let d = &audit(text, false).diagnostics[0];
        assert_eq!(codes::E0510, d.code);
        assert_eq!(
            &text[d.primary.span.start as usize..d.primary.span.end as usize],
            "refund"
        );
    }

    #[test]
    fn a_list_as_command_is_e0510_at_its_value() {
        let text = "commands:\n  refund:\n    command: [\"echo\", \"hi\"]\n";
        let d = &audit(text, false).diagnostics[0];
        assert_eq!(codes::E0510, d.code);
        assert!(d.primary.message.contains("one string"), "{d:?}");
        assert_eq!(
            &text[d.primary.span.start as usize..d.primary.span.end as usize],
            "[\"echo\", \"hi\"]"
        );
    }

    #[test]
    fn placeholders_point_into_the_command() {
        let text = "commands:\n  refund:\n    command: \"echo {flight_ref}\"\n";
        let a = audit(text, false);
        let (name, span) = &a.commands[0].placeholders[0];
        assert_eq!(name, "flight_ref");
        assert_eq!(
            &text[span.start as usize..span.end as usize],
            "{flight_ref}"
        );
    }
}
