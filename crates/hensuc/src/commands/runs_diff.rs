//! `hensuc runs diff A B` (docs/cli.md, *Comparing two runs*): two runs of one store side by
//! side, step by step — the node each step ran, its status, output and error — then the final
//! contexts, with the first step where they part. Exit 0 when they are the same, 1 when they
//! differ (as `diff` does), 2 for an unknown run.
//!
//! Steps are compared by position in each run's history (a backtrack or a retry is a step of
//! its own), so two runs that take different paths differ at the first step whose node differs.

use std::io::Write;
use std::process::ExitCode;

use hensu_runtime::{HistoryStep, RunState};
use hensu_store::{RunRecord, StateStore};
use serde_json::{Value, json};

use crate::commands::session::wait;
use crate::exit;

/// `runs diff --json`: raised when the shape changes (docs/schemas/runs-diff.schema.json).
pub(crate) const RUNS_DIFF_FORMAT_VERSION: u32 = 1;

/// A run as the diff reads it: its record and its final state.
struct Side {
    record: RunRecord,
    state: RunState,
}

fn side(store: &dyn StateStore, id: &str) -> anyhow::Result<Side> {
    let stored = wait(store.load(id))?;
    let state = hensu_host::restore(id, &stored.snapshot).map_err(anyhow::Error::msg)?;
    Ok(Side {
        record: stored.record,
        state,
    })
}

/// Which part of a step differs first.
fn step_difference(a: Option<&HistoryStep>, b: Option<&HistoryStep>) -> Option<&'static str> {
    let (a, b) = match (a, b) {
        (Some(a), Some(b)) => (a, b),
        (None, None) => return None,
        _ => return Some("missing"),
    };
    if a.node_id != b.node_id {
        Some("node")
    } else if a.status != b.status {
        Some("status")
    } else if a.output != b.output {
        Some("output")
    } else if a.error != b.error {
        Some("error")
    } else {
        None
    }
}

/// The public keys (not `_`-prefixed) whose final values differ, in key order.
fn context_differences(a: &RunState, b: &RunState) -> Vec<(String, Option<Value>, Option<Value>)> {
    let mut keys: Vec<&String> = a.context.keys().chain(b.context.keys()).collect();
    keys.sort();
    keys.dedup();
    keys.into_iter()
        .filter(|k| !k.starts_with('_'))
        .filter_map(|k| {
            let (va, vb) = (a.context.get(k.as_str()), b.context.get(k.as_str()));
            (va != vb).then(|| (k.clone(), va.cloned(), vb.cloned()))
        })
        .collect()
}

fn step_json(s: Option<&HistoryStep>) -> Value {
    s.map_or(Value::Null, |s| {
        json!({
            "node": s.node_id,
            "status": s.status.as_str(),
            "output": s.output,
            "error": s.error,
        })
    })
}

fn run_json(s: &Side) -> Value {
    json!({
        "run_id": s.record.run_id,
        "workflow": s.record.workflow_id,
        "workflow_version": s.record.workflow_version,
        "status": s.record.status.as_str(),
        "exit_status": s.record.exit_status,
        "path": s.state.path(),
    })
}

pub fn diff(store: &dyn StateStore, a: &str, b: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let (a, b) = (side(store, a)?, side(store, b)?);
    let (ha, hb) = (&a.state.history, &b.state.history);
    let rows: Vec<Row<'_>> = (0..ha.len().max(hb.len()))
        .map(|i| {
            let (sa, sb) = (ha.get(i), hb.get(i));
            (i + 1, sa, sb, step_difference(sa, sb))
        })
        .collect();
    let context = context_differences(&a.state, &b.state);
    let first = rows.iter().find(|r| r.3.is_some());
    let same = first.is_none() && context.is_empty() && a.record.status == b.record.status;
    let mut out = std::io::stdout().lock();
    if as_json {
        let v = json!({
            "format_version": RUNS_DIFF_FORMAT_VERSION,
            "a": run_json(&a),
            "b": run_json(&b),
            "same": same,
            "first_difference": first.map(|(step, sa, sb, what)| json!({
                "step": step,
                "node_a": sa.map(|s| &s.node_id),
                "node_b": sb.map(|s| &s.node_id),
                "differs_in": what,
            })),
            "steps": rows.iter().map(|(step, sa, sb, what)| json!({
                "step": step,
                "a": step_json(*sa),
                "b": step_json(*sb),
                "differs_in": what,
            })).collect::<Vec<_>>(),
            "context": context.iter().map(|(k, va, vb)| json!({"key": k, "a": va, "b": vb})).collect::<Vec<_>>(),
        });
        let _ = writeln!(out, "{v}");
    } else {
        print_human(&mut out, &a, &b, &rows, &context);
    }
    Ok(ExitCode::from(if same {
        exit::SUCCESS
    } else {
        exit::FAILURE
    }))
}

fn headline(s: &Side) -> String {
    let r = &s.record;
    let mut status = r.status.to_string();
    if let Some(e) = &r.exit_status {
        status.push_str(&format!(" ({e})"));
    }
    format!(
        "{} {} v{}  {status}",
        r.run_id, r.workflow_id, r.workflow_version
    )
}

/// A step's cell: node, status mark and output, cut to `width` characters.
fn cell(s: Option<&HistoryStep>, width: usize) -> String {
    let Some(s) = s else {
        return "—".to_string();
    };
    let mark = match s.status.as_str() {
        "SUCCESS" | "END" => "✓",
        "PENDING" => "⏸",
        _ => "✗",
    };
    let shown = match (&s.output, &s.error) {
        (_, Some(e)) => e.clone(),
        (Some(o), None) => hensu_runtime::render(o).into_owned(),
        (None, None) => String::new(),
    };
    let text = format!("{} {mark} {}", s.node_id, shown.replace('\n', " "));
    shorten(&text, width)
}

fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

type Row<'a> = (
    usize,
    Option<&'a HistoryStep>,
    Option<&'a HistoryStep>,
    Option<&'a str>,
);

fn print_human(
    out: &mut impl Write,
    a: &Side,
    b: &Side,
    rows: &[Row<'_>],
    context: &[(String, Option<Value>, Option<Value>)],
) {
    const W: usize = 36;
    let _ = writeln!(out, "A  {}", headline(a));
    let _ = writeln!(out, "B  {}", headline(b));
    let _ = writeln!(out, "step  {:<W$}  {:<W$}", "A", "B");
    for (step, sa, sb, what) in rows {
        let mark = what.map_or(String::new(), |w| format!("  ≠ {w}"));
        let (ca, cb) = (cell(*sa, W), cell(*sb, W));
        let _ = writeln!(out, "{step:>4}  {ca:<W$}  {cb:<W$}{mark}");
    }
    if !context.is_empty() {
        let _ = writeln!(out, "context");
        let shown = |v: &Option<Value>| {
            v.as_ref()
                .map_or("(absent)".to_string(), |v| shorten(&v.to_string(), W))
        };
        for (k, va, vb) in context {
            let _ = writeln!(out, "  {k}  {}  |  {}", shown(va), shown(vb));
        }
    }
    match rows.iter().find(|r| r.3.is_some()) {
        Some((step, sa, sb, what)) => {
            let node = sa.or(*sb).map_or("", |s| s.node_id.as_str());
            let why = match *what {
                Some("node") => format!(
                    "A ran `{}`, B ran `{}`",
                    sa.map_or("", |s| s.node_id.as_str()),
                    sb.map_or("", |s| s.node_id.as_str())
                ),
                Some("missing") => "one run ended before it".to_string(),
                Some(w) => format!("the {w}s differ"),
                None => String::new(),
            };
            let _ = writeln!(out, "first difference: step {step} at `{node}`: {why}");
        }
        None if context.is_empty() && a.record.status == b.record.status => {
            let _ = writeln!(out, "same path, outputs and context");
        }
        None => {
            let _ = writeln!(out, "same steps; the final context or status differs");
        }
    }
}
