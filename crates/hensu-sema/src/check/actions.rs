//! E0210: `execute("id")` naming no command of the project's `commands.yaml`, or `send("id")`
//! naming no registered handler (docs/language.md, *Actions and commands*). The caller passes
//! the known ids (the CLI reads `commands.yaml`; the check itself does no I/O), so an unknown id
//! is found at check time and not only when the action runs.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Action, CompensationBody, Node, Workflow};

use crate::origins::{NodeOrigin, Origins};
use crate::suggest::help_and_fix;

/// The ids actions may name.
#[derive(Clone, Copy, Debug)]
pub struct KnownActions<'a> {
    /// The command ids of `commands.yaml`; `None` when the project has none (the host may
    /// provide commands some other way), and `execute` ids are then not checked.
    pub commands: Option<&'a [&'a str]>,
    /// The handler ids `send` accepts (`log`, `webhook`, `mcp`, the project's `[handlers]`);
    /// `None` when every id is accepted (a project served by `hensuc serve` forwards an
    /// unknown one to the tenant's MCP tools), and `send` ids are then not checked.
    pub handlers: Option<&'a [&'a str]>,
}

/// E0210 for every action of `wf` whose id is not in `known`.
pub fn check_actions(wf: &Workflow, origins: &Origins, known: KnownActions<'_>) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    for (id, node) in &wf.nodes {
        let Node::Action(a) = node else { continue };
        let fallback = origins.node_id(id);
        check_list(&a.actions, origins.node(id), fallback, known, &mut out);
    }
    // The actions of compensations (docs/language.md, *Saga compensation*).
    for (id, c) in &wf.saga.compensations {
        let CompensationBody::Actions(actions) = &c.body else {
            continue;
        };
        let origin = origins.compensations.get(id);
        let fallback = origin.map_or(origins.fallback, |o| o.id);
        check_list(actions, origin, fallback, known, &mut out);
    }
    out.into_iter()
        .map(|d| origins.place(d.in_file(origins.file)))
        .collect()
}

fn check_list(
    actions: &[Action],
    origin: Option<&NodeOrigin>,
    fallback: Span,
    known: KnownActions<'_>,
    out: &mut Vec<Diagnostic>,
) {
    for (k, action) in actions.iter().enumerate() {
        let (name, candidates, what) = match action {
            Action::Execute { command_id } => match known.commands {
                Some(commands) => (command_id, commands, "command"),
                None => continue,
            },
            Action::Send { handler_id, .. } => match known.handlers {
                Some(handlers) => (handler_id, handlers, "handler"),
                None => continue,
            },
        };
        if candidates.contains(&name.as_str()) {
            continue;
        }
        let span = origin
            .and_then(|o| o.action_ids.get(k).or(o.actions.get(k)).copied())
            .unwrap_or(fallback);
        let d = Diagnostic::new(
            codes::E0210,
            format!("unknown {what} `{name}`"),
            span,
            match what {
                "command" => "no command with this id in `commands.yaml`",
                _ => "no action handler with this id",
            },
        );
        let (mut d, suggested) = help_and_fix(d, name, span, candidates.iter().copied());
        if !suggested {
            d = d.with_help(match what {
                "command" => format!(
                    "declare it in `commands.yaml` under `commands:` as `{name}: {{ command: \"…\" }}`"
                ),
                _ => format!(
                    "the known handlers are {}; declare others as `[handlers.{name}]` in `hensu.toml`",
                    list(candidates)
                ),
            });
        }
        if !candidates.is_empty() && what == "command" {
            d = d.with_note(format!("the known commands are {}", list(candidates)));
        }
        out.push(d);
    }
}

fn list(ids: &[&str]) -> String {
    if ids.is_empty() {
        return "none".to_string();
    }
    ids.iter()
        .map(|i| format!("`{i}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether an action hands a result to its node (docs/language.md, *Action node*): a command's
/// stdout, a handler's answer (an MCP tool's result, a webhook's response body). `log` only
/// reports an event.
pub(super) fn produces_result(action: &Action) -> bool {
    match action {
        Action::Execute { .. } => true,
        Action::Send { handler_id, .. } => handler_id != "log",
    }
}

/// E0407: an action node with `writes` none of whose actions produces a result, so the
/// variables could never be written.
pub(super) fn writes_without_result(cx: &mut super::Ctx<'_>) {
    let wf = cx.wf;
    for (id, node) in &wf.nodes {
        let Node::Action(a) = node else { continue };
        if a.writes.is_empty() || a.actions.iter().any(produces_result) {
            continue;
        }
        let span = cx.list_span(id, |o| &o.writes, 0);
        let d = Diagnostic::new(
            codes::E0407,
            format!("action node `{id}` writes what none of its actions produces"),
            span,
            "no action of this node has a result to write",
        )
        .with_note("`send(\"log\", …)` only reports an event; its text is no result")
        .with_help(
            "add the action that produces the value (`execute(\"id\")`, `send(\"mcp\", …)`, \
             `send(\"webhook\", …)`), or remove `writes`",
        );
        cx.emit(d);
    }
}

/// E0213: `send("mcp", payload)` without a `tool` string — the MCP handler fails every such
/// call (crates/hensu-mcp/src/source.rs, `McpActionHandler`), so it is reported statically. A
/// raw payload (one JSON string) is not looked into.
pub(super) fn mcp_payloads(cx: &mut super::Ctx<'_>) {
    let wf = cx.wf;
    let nodes = wf.nodes.iter().filter_map(|(id, n)| match n {
        Node::Action(a) => Some((cx.origins.node(id), a.actions.as_slice())),
        _ => None,
    });
    let compensations = wf
        .saga
        .compensations
        .iter()
        .filter_map(|(id, c)| match &c.body {
            CompensationBody::Actions(actions) => {
                Some((cx.origins.compensations.get(id), actions.as_slice()))
            }
            _ => None,
        });
    let mut found = Vec::new();
    for (origin, actions) in nodes.chain(compensations) {
        for (k, action) in actions.iter().enumerate() {
            let Action::Send {
                handler_id,
                payload,
                raw_payload: false,
            } = action
            else {
                continue;
            };
            let has_tool = payload
                .get("tool")
                .and_then(|t| t.as_str())
                .is_some_and(|t| !t.trim().is_empty());
            if handler_id != "mcp" || has_tool {
                continue;
            }
            let span = origin
                .and_then(|o| o.actions.get(k).copied())
                .unwrap_or_else(|| cx.fallback());
            let named = ["name", "tool_name", "toolName", "method"]
                .into_iter()
                .find(|k| payload.contains_key(*k));
            let mut d = Diagnostic::new(
                codes::E0213,
                "`send(\"mcp\")` names no tool",
                span,
                "no `\"tool\"` key in this payload",
            )
            .with_note("the MCP handler fails every call without one");
            d = match named {
                Some(key) => d.with_help(format!(
                    "the tool name goes under `\"tool\"`, not `\"{key}\"`: `mapOf(\"tool\" to …)`"
                )),
                None => d.with_help(
                    "name the tool: `send(\"mcp\", mapOf(\"tool\" to \"name\", …arguments))`",
                ),
            };
            found.push(d);
        }
    }
    for d in found {
        cx.emit(d);
    }
}
