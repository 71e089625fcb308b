//! Node timeouts against the run limit (docs/language.md, *Timeouts and backoff*): W0326.

use hensu_diagnostics::{Diagnostic, codes};

use super::Ctx;

/// W0326: a node timeout at or above `maxExecutionTime` never fires — the run limit ends the
/// run first, so the node's `onFailure` never sees the timeout.
pub(crate) fn check(cx: &mut Ctx<'_>) {
    let limit = cx.wf.effective_config().max_execution_time;
    let Ok(limit) = u64::try_from(limit) else {
        return;
    };
    if limit == 0 {
        return;
    }
    let mut found = Vec::new();
    for (id, t) in &cx.wf.timing.nodes {
        let Some(timeout) = t.timeout_ms.filter(|t| *t >= limit) else {
            continue;
        };
        let Some(o) = cx.origins.node(id) else {
            continue;
        };
        let span = o.props.get("timeout").copied().unwrap_or(o.id);
        let mut d = Diagnostic::new(
            codes::W0326,
            format!(
                "the timeout of `{id}` ({timeout} ms) is not shorter than the run limit ({limit} ms)"
            ),
            span,
            "the run limit ends the run first",
        )
        .with_help("shorten the timeout, or raise `maxExecutionTime` in `config { }`");
        if let Some(limit_span) = cx.origins.config.get("maxExecutionTime") {
            d = d.with_label(*limit_span, "the run limit");
        }
        found.push(d);
    }
    cx.diagnostics.extend(found);
}
