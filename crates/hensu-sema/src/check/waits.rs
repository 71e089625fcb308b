//! Durable waits against the run's deadline (docs/language.md, *Timers and signals*): W0327.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, WaitFor};

use super::Ctx;

/// W0327: an `awaitSignal` without a `timeout` in a workflow that declares a deadline
/// (`maxExecutionTime` written in its `config { }`): a signal that never comes keeps the run
/// waiting past that deadline, and no `onTimeout` can route it.
pub(crate) fn check(cx: &mut Ctx<'_>) {
    let Some(limit_span) = cx.origins.config.get("maxExecutionTime").copied() else {
        return;
    };
    let mut found = Vec::new();
    for (id, node) in &cx.wf.nodes {
        let Node::Wait(w) = node else { continue };
        let WaitFor::Signal {
            name,
            timeout_ms: None,
        } = &w.wait
        else {
            continue;
        };
        let Some(o) = cx.origins.node(id) else {
            continue;
        };
        let d = Diagnostic::new(
            codes::W0327,
            format!("`{id}` waits for signal `{name}` without a timeout, under a run deadline"),
            o.id,
            "may wait forever",
        )
        .with_label(limit_span, "the workflow's deadline")
        .with_help("add `timeout = …` and an `onTimeout goto \"…\"` transition");
        found.push(d);
    }
    cx.diagnostics.extend(found);
}
