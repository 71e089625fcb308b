//! The summary `hensuc run` and `hensuc resume` print when a run stops: outcome, path (long
//! loops abbreviated), outputs, compensations, and the exit code that goes with it.

use std::io::Write;

use hensu_ir::{ExitStatus, Workflow};
use hensu_runtime::{RunOutcome, RunResult};
use serde_json::Value;

use crate::exit;

fn truncate(s: &str, max: usize) -> String {
    let flat = s.replace('\n', "⏎");
    if flat.chars().count() <= max {
        flat
    } else {
        format!("{}…", flat.chars().take(max).collect::<String>())
    }
}

/// Nodes of a path shown in full by [`abbreviate_path`]; a longer path (a loop up to `maxSteps`) shows its first and
/// last nodes around a count of the ones left out.
const PATH_SHOWN_HEAD: usize = 5;
const PATH_SHOWN_TAIL: usize = 10;

pub fn abbreviate_path(path: &[&str]) -> String {
    if path.is_empty() {
        return "(no node ran)".to_string();
    }
    if path.len() <= PATH_SHOWN_HEAD + PATH_SHOWN_TAIL + 1 {
        return path.join(" → ");
    }
    let left_out = path.len() - PATH_SHOWN_HEAD - PATH_SHOWN_TAIL;
    format!(
        "{} → … ({left_out} more) … → {}",
        path[..PATH_SHOWN_HEAD].join(" → "),
        path[path.len() - PATH_SHOWN_TAIL..].join(" → ")
    )
}

/// Groups of repeated backtracks shown in full by [`backtrack_lines`] (unless `--verbose`); more
/// show the first and last ones around a count of those left out.
const BACKTRACKS_SHOWN_HEAD: usize = 5;
const BACKTRACKS_SHOWN_TAIL: usize = 5;

/// `n` with a comma between thousands (`9,999`).
fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The summary's backtrack lines: consecutive backtracks of the same edge and kind are one line
/// (`write → write Revise(…) ↺ 9,999×`, with the reason of the last one), so a loop of 10,000
/// iterations is not 10,000 lines; more than ten such groups show the first and last five
/// around a count (all of them with `--verbose`). The JSON output keeps every backtrack.
pub(crate) fn backtrack_lines(
    backtracks: &[hensu_runtime::Backtrack],
    verbose: bool,
) -> Vec<String> {
    let mut groups: Vec<(&hensu_runtime::Backtrack, usize)> = Vec::new();
    for b in backtracks {
        match groups.last_mut() {
            Some((last, n)) if last.from == b.from && last.to == b.to && last.kind == b.kind => {
                *last = b;
                *n += 1;
            }
            _ => groups.push((b, 1)),
        }
    }
    let line = |(b, n): &(&hensu_runtime::Backtrack, usize)| {
        let one = format!(
            "{} → {} {:?}({})",
            b.from,
            b.to,
            b.kind,
            truncate(&b.reason, 100)
        );
        if *n == 1 {
            one
        } else {
            format!("{one} ↺ {}×", thousands(*n))
        }
    };
    if verbose || groups.len() <= BACKTRACKS_SHOWN_HEAD + BACKTRACKS_SHOWN_TAIL + 1 {
        return groups.iter().map(line).collect();
    }
    let left_out = groups.len() - BACKTRACKS_SHOWN_HEAD - BACKTRACKS_SHOWN_TAIL;
    let mut lines: Vec<String> = groups[..BACKTRACKS_SHOWN_HEAD].iter().map(line).collect();
    lines.push(format!("… ({} more) …", thousands(left_out)));
    lines.extend(
        groups[groups.len() - BACKTRACKS_SHOWN_TAIL..]
            .iter()
            .map(line),
    );
    lines
}

/// Prints the summary to stdout (to stderr when `--events -` has stdout) and returns the
/// exit code.
pub(crate) fn summarize(
    workflow: &Workflow,
    result: &RunResult,
    verbose: bool,
    redactor: &hensu_providers::Redactor,
    to_stderr: bool,
) -> u8 {
    use std::fmt::Write as _;
    let state = &result.state;
    let (headline, code) = match &result.outcome {
        RunOutcome::Completed {
            exit_status,
            end_node,
        } => (
            format!(
                "{} workflow ended at `{end_node}`: {}",
                if *exit_status == ExitStatus::Success {
                    "✓"
                } else {
                    "✗"
                },
                exit_status.as_str()
            ),
            if *exit_status == ExitStatus::Success {
                exit::SUCCESS
            } else {
                exit::FAILURE
            },
        ),
        RunOutcome::Rejected { reason } => {
            (format!("✗ workflow rejected: {reason}"), exit::FAILURE)
        }
        RunOutcome::Paused => (
            match (hensu_runtime::pending_review(state), &state.phase) {
                // A gated tool call (docs/mcp.md, *Tool approval*).
                (Some((node, _)), _)
                    if let Some(call) = hensu_runtime::reviewed_tool_call(state) =>
                {
                    format!(
                        "⏸ paused at `{node}`, waiting for the approval of a call of tool `{}`",
                        call.tool
                    )
                }
                (Some((node, _)), _) => format!("⏸ paused at `{node}`, waiting for review"),
                (None, hensu_runtime::ExecutionPhase::Awaiting { node_id, .. }) => {
                    format!("⏸ paused at `{node_id}`")
                }
                _ => format!("⏸ paused before `{}`", state.current_node),
            },
            exit::PAUSED,
        ),
        // The node it failed at, as `run --server` names it (docs/cli.md, *Outcomes*).
        RunOutcome::Failed(e) if !state.current_node.is_empty() => (
            format!("✗ workflow failed at `{}`: {e}", state.current_node),
            exit::FAILURE,
        ),
        RunOutcome::Failed(e) => (format!("✗ workflow failed: {e}"), exit::FAILURE),
    };
    let mut out = String::new();
    let _ = writeln!(out, "{headline}");
    if let RunOutcome::Failed(hensu_runtime::RuntimeError::MissingInputs { names }) =
        &result.outcome
    {
        let example: Vec<String> = names.iter().map(|n| format!("\"{n}\": \"…\"")).collect();
        let _ = writeln!(
            out,
            "  help: give them with -c '{{{}}}'",
            example.join(", ")
        );
    }
    let mut path: Vec<&str> = state.path();
    match (&result.outcome, &state.phase) {
        (RunOutcome::Completed { end_node, .. }, _) => path.push(end_node),
        // The node a paused run waits at has not reached its history yet.
        (RunOutcome::Paused, hensu_runtime::ExecutionPhase::Awaiting { node_id, .. }) => {
            path.push(node_id)
        }
        _ => {}
    }
    let _ = writeln!(out, "  path        {}", abbreviate_path(&path));
    let _ = writeln!(out, "  steps       {}", state.steps);
    if !state.backtracks.is_empty() {
        let _ = writeln!(out, "  backtracks  {}", state.backtracks.len());
        for line in backtrack_lines(&state.backtracks, verbose) {
            let _ = writeln!(out, "    {line}");
        }
    }
    if !state.compensations.is_empty() {
        // docs/language.md, *Saga compensation*: in the order they ran.
        let _ = writeln!(out, "  compensated");
        for c in &state.compensations {
            let text = match (&c.output, &c.error) {
                (_, Some(e)) => format!("✗ {e}"),
                (Some(o), None) => hensu_runtime::render(o).into_owned(),
                (None, None) => String::new(),
            };
            let text = if verbose { text } else { truncate(&text, 100) };
            let _ = writeln!(
                out,
                "    {} (step {}) ← {}: {text}",
                c.node_id, c.visit_step, c.compensation_id
            );
        }
    }
    let _ = writeln!(
        out,
        "  time        {:.1} ms",
        result.duration.as_secs_f64() * 1000.0
    );
    // Output variables: the schema's non-input variables, else the node outputs.
    let names: Vec<String> = match &workflow.state_schema {
        Some(schema) => schema
            .variables
            .iter()
            .filter(|v| !v.is_input)
            .map(|v| v.name.clone())
            .collect(),
        None => workflow.nodes.keys().cloned().collect(),
    };
    let shown: Vec<(&String, &Value)> = names
        .iter()
        .filter_map(|n| state.context.get_key_value(n.as_str()))
        .collect();
    if !shown.is_empty() {
        let _ = writeln!(out, "  outputs");
        for (k, v) in shown {
            let text = hensu_runtime::render(v);
            let text = if verbose {
                text.into_owned()
            } else {
                truncate(&text, 100)
            };
            let _ = writeln!(out, "    {k} = {text}");
        }
    }
    // Outputs may echo provider keys; nothing leaves unredacted.
    let text = redactor.redact(&out);
    if to_stderr {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    } else {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;
    use hensu_runtime::{Backtrack, BacktrackKind};

    fn bt(from: &str, to: &str, kind: BacktrackKind, reason: &str) -> Backtrack {
        Backtrack {
            from: from.into(),
            to: to.into(),
            kind,
            reason: reason.into(),
        }
    }

    #[test]
    fn repeated_backtracks_are_one_line_with_a_count() {
        let mut all: Vec<Backtrack> = (0..9_999)
            .map(|i| bt("write", "write", BacktrackKind::Revise, &format!("try {i}")))
            .collect();
        all.push(bt("review", "write", BacktrackKind::Manual, "too long"));
        all.push(bt("write", "write", BacktrackKind::Revise, "again"));
        assert_eq!(
            backtrack_lines(&all, false),
            [
                "write → write Revise(try 9998) ↺ 9,999×",
                "review → write Manual(too long)",
                "write → write Revise(again)",
            ]
        );
    }

    #[test]
    fn many_groups_show_the_first_and_last_around_a_count() {
        let all: Vec<Backtrack> = (0..1_000)
            .map(|i| bt(&format!("n{i}"), "n0", BacktrackKind::Automatic, "low"))
            .collect();
        let lines = backtrack_lines(&all, false);
        assert_eq!(lines.len(), 11);
        assert_eq!(lines[0], "n0 → n0 Automatic(low)");
        assert_eq!(lines[5], "… (990 more) …");
        assert_eq!(lines[10], "n999 → n0 Automatic(low)");
        assert_eq!(backtrack_lines(&all, true).len(), 1_000);
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
    }
}
