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
    /// The handler ids `send` accepts (`log`, `webhook`, …).
    pub handlers: &'a [&'a str],
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
            Action::Send { handler_id, .. } => (handler_id, known.handlers, "handler"),
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
                _ => format!("the known handlers are {}", list(candidates)),
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
