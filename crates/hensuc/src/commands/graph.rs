//! `hensuc graph PATH [--format mermaid|dot|json|text]` — the workflow graph. Text and mermaid
//! follow upstream `hensu visualize` (breadth-first from the start node); ANSI colours only on a
//! terminal. `json` is a versioned topology export with the describe fields
//! (`super::describe`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use hensu_ir::{Node, Workflow, bfs_order as bfs, timed_node_details, timed_node_edges};

use crate::args::{ColorFlag, ProjectDir};
use crate::exit;
use crate::output::{self, DiagnosticFormat};
use crate::project;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    #[default]
    Text,
    Mermaid,
    Dot,
    Json,
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc graph examples/workflows/trip-booking.hwf -d examples\n  \
    hensuc graph examples/workflows/fork-join.hwf -d examples --format dot | dot -Tsvg > fork-join.svg")]
pub struct GraphArgs {
    /// The workflow to draw (`.hwf`, `.kt` or `.json`).
    pub path: PathBuf,
    #[command(flatten)]
    pub project: ProjectDir,
    #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
    pub format: GraphFormat,
    #[command(flatten)]
    pub display: ColorFlag,
}

pub fn execute(args: GraphArgs) -> anyhow::Result<ExitCode> {
    let project = project::load(
        std::slice::from_ref(&args.path),
        args.project.dir.as_deref(),
    )?;
    output::emit(
        &project.files,
        &project.diagnostics,
        DiagnosticFormat::Human,
        args.display.color,
    );
    if project.error_count() > 0 {
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let Some((workflow, origins)) = project
        .explicit_units()
        .find_map(|u| u.workflow.as_ref().map(|w| (w, &u.origins)))
    else {
        anyhow::bail!("`{}` did not produce a workflow", args.path.display());
    };
    let inherited = inherited_nodes(workflow, origins);
    let out = match args.format {
        GraphFormat::Text => render_text(
            workflow,
            &inherited,
            args.display.color.enabled_for_stdout(),
        ),
        GraphFormat::Mermaid => render_mermaid(workflow, &inherited),
        GraphFormat::Dot => render_dot(workflow, &inherited),
        GraphFormat::Json => {
            let mut described = super::describe::describe(workflow, origins);
            super::graph_saga::json(workflow, &mut described);
            let mut s = serde_json::to_string_pretty(&described)?;
            s.push('\n');
            s
        }
    };
    print!("{out}");
    Ok(ExitCode::from(exit::SUCCESS))
}

/// Node id → the id of the base workflow that declares it, for the inherited nodes of an
/// extending workflow (docs/language.md, *Workflow extension*); empty otherwise.
pub type Inherited = std::collections::BTreeMap<String, String>;

fn inherited_nodes(workflow: &Workflow, origins: &hensu_sema::origins::Origins) -> Inherited {
    let Some(derived) = origins.derived.as_ref() else {
        return Inherited::new();
    };
    workflow
        .nodes
        .keys()
        .filter_map(|id| Some((id.clone(), derived.declared_in(id)?.id.clone())))
        .collect()
}

/// Upstream's text shape (as `hensu visualize` draws it): boxes in BFS order, indented two spaces
/// per depth. An inherited node says which base declares it.
pub fn render_text(workflow: &Workflow, inherited: &Inherited, color: bool) -> String {
    let (bold, dim, cyan, reset) = if color {
        ("\x1b[1m", "\x1b[2m", "\x1b[36m", "\x1b[0m")
    } else {
        ("", "", "", "")
    };
    let mut out = String::new();
    let _ = writeln!(out, "{bold}Workflow: {}{reset}", workflow.metadata.name);
    let _ = writeln!(out, "{}\n", "─".repeat(50));
    for (node, depth) in bfs(workflow) {
        let pad = "  ".repeat(depth);
        let from = inherited
            .get(node.id())
            .map(|base| format!(", inherited from {base}"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "{pad}┌─ {bold}{}{reset} {dim}({}{from}){reset}",
            node.id(),
            node.kind_name()
        );
        for (key, value) in timed_node_details(workflow, node) {
            if key.is_empty() {
                let _ = writeln!(out, "{pad}│  {value}");
            } else {
                let _ = writeln!(out, "{pad}│  {key:<9} {value}");
            }
        }
        for edge in timed_node_edges(workflow, node) {
            let target = edge.target.unwrap_or_else(|| "(self)".to_string());
            let label = if edge.label.is_empty() {
                "on success".to_string()
            } else {
                edge.label
            };
            let _ = writeln!(out, "{pad}│  {cyan}→{reset} {target:<14} {label}");
        }
        let _ = writeln!(out, "{pad}└─\n");
    }
    super::graph_saga::text(workflow, &mut out, (bold, dim, cyan, reset));
    out
}

fn mermaid_id(id: &str) -> String {
    let s: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    const RESERVED: [&str; 10] = [
        "end",
        "subgraph",
        "graph",
        "flowchart",
        "direction",
        "click",
        "style",
        "classdef",
        "class",
        "linkstyle",
    ];
    if RESERVED.iter().any(|r| r.eq_ignore_ascii_case(&s)) {
        format!("node_{s}")
    } else {
        s
    }
}

fn mermaid_label(s: &str) -> String {
    s.replace('"', "&quot;")
}

/// Upstream's mermaid shape (as `hensu visualize` draws it).
/// Mermaid flowchart; inherited nodes are drawn with a dashed outline.
pub fn render_mermaid(workflow: &Workflow, inherited: &Inherited) -> String {
    let mut out = String::from("```mermaid\nflowchart TD\n");
    let root = mermaid_id(&workflow.id);
    let _ = writeln!(
        out,
        "  subgraph {root}[\"{}\"]",
        mermaid_label(&workflow.metadata.name)
    );
    let order = bfs(workflow);
    let mut styles = Vec::new();
    for (node, _) in &order {
        let id = mermaid_id(node.id());
        let raw = node.id();
        let shape = match node {
            Node::End(e) => format!("{id}([\"{raw} ({})\"])", e.status.as_str()),
            Node::Standard(n) => {
                let mut label = raw.to_string();
                if let Some(a) = &n.agent_id {
                    label.push_str(&format!("\\n[{a}]"));
                }
                if let Some(r) = &n.rubric {
                    label.push_str(&format!("\\n rubric: {} criteria", r.criteria.len()));
                }
                if let Some(r) = n
                    .review_config
                    .as_ref()
                    .filter(|r| r.mode != hensu_ir::ReviewMode::Disabled)
                {
                    label.push_str(&format!("\\n review: {}", r.mode.as_str()));
                }
                format!("{id}([\"{}\"])", mermaid_label(&label))
            }
            Node::Parallel(p) => {
                let mut s = format!("{id}>\"{raw}\\n(parallel: {})\"]", p.branches.len());
                for b in &p.branches {
                    let _ = write!(
                        s,
                        "\n    {id}_{}([\"{}\\n[{}]\"])",
                        mermaid_id(&b.id),
                        b.id,
                        b.agent_id
                    );
                    styles.push(format!("{id}_{}", mermaid_id(&b.id)));
                }
                let join = match &p.consensus_config {
                    Some(c) => format!("(join: {})", c.strategy.as_str()),
                    None => "(join)".to_string(),
                };
                let _ = write!(s, "\n    {id}___join[\"{raw}\\n{join}\"]");
                styles.push(format!("{id}___join"));
                s
            }
            Node::Fork(f) => format!("{id}>\"{raw}\\n(fork: {})\"]", f.targets.len()),
            Node::Join(j) => format!("{id}[\"{raw}\\n(join: {})\"]", j.merge_strategy.as_str()),
            Node::Generic(g) => format!("{id}{{{{\"{raw}\\n[{}]\"}}}}", g.executor_type),
            Node::Action(a) => format!("{id}[/\"{raw}\\n(action: {})\"/]", a.actions.len()),
            Node::SubWorkflow(s) => format!("{id}[(\"{raw}\\n[sub: {}]\")]", s.workflow_id),
            // A durable wait (docs/language.md, *Timers and signals*): a circle like a clock.
            Node::Wait(w) => {
                let what = match w.signal() {
                    Some(name) => format!("signal: {name}"),
                    None => "wait".to_string(),
                };
                format!("{id}((\"{raw}\\n({})\"))", mermaid_label(&what))
            }
            Node::Map(m) => {
                let body = match (&m.target, &m.agent_id) {
                    (Some(t), _) => format!("sub: {t}"),
                    (None, Some(a)) => a.clone(),
                    (None, None) => String::new(),
                };
                let items = m
                    .max_items
                    .map_or("unbounded".to_string(), |n| format!("≤ {n} items"));
                format!(
                    "{id}[[\"{raw}\\n(map over {}: {items})\\n[{body}]\"]]",
                    m.over
                )
            }
        };
        let _ = writeln!(out, "    {shape}");
        styles.push(id);
    }
    super::graph_saga::mermaid_nodes(workflow, &mut out, &mut styles, mermaid_id);
    out.push_str("  end\n\n");
    for (node, _) in &order {
        let id = mermaid_id(node.id());
        let from = match node {
            Node::Parallel(p) => {
                mermaid_branches(&mut out, &id, p);
                format!("{id}___join")
            }
            Node::Join(j) => {
                for a in &j.await_targets {
                    let _ = writeln!(out, "  {} -.->|await| {id}", mermaid_id(a));
                }
                id.clone()
            }
            _ => id.clone(),
        };
        for edge in timed_node_edges(workflow, node) {
            let to = edge
                .target
                .as_deref()
                .map(mermaid_id)
                .unwrap_or_else(|| id.clone());
            let arrow = if edge.dashed { "-.->" } else { "-->" };
            if edge.label.is_empty() {
                let _ = writeln!(out, "  {from} {arrow} {to}");
            } else {
                let _ = writeln!(out, "  {from} {arrow}|{}| {to}", mermaid_label(&edge.label));
            }
        }
    }
    super::graph_saga::mermaid_edges(workflow, &mut out, mermaid_id);
    out.push('\n');
    let _ = writeln!(
        out,
        "  style {root} fill:#2c2c2e, stroke:#3a3a3c, color:#ebebf5, stroke-width:1px"
    );
    for id in styles {
        let _ = writeln!(
            out,
            "  style {id} fill:#2c2c2e, stroke:#48484a, color:#ebebf5, stroke-width:1px"
        );
    }
    for id in inherited.keys() {
        let _ = writeln!(out, "  style {} stroke-dasharray:4 3", mermaid_id(id));
    }
    out.push_str("  linkStyle default stroke:#0A84FF, stroke-width:1px\n```\n");
    out
}

/// The edges of a parallel node's branches: from the node to each branch, from each branch to
/// the join. In a dependency DAG (docs/language.md, *Dependency DAGs*) a branch is entered from
/// the branches it waits for instead (`after`, or `if flag` for a `runIf`), and only the
/// branches nothing waits for lead to the join.
fn mermaid_branches(out: &mut String, id: &str, p: &hensu_ir::ParallelNode) {
    for b in &p.branches {
        let bid = mermaid_id(&b.id);
        let label = match &b.run_if {
            Some(flag) => format!("if {}", mermaid_label(flag)),
            None if b.after.is_empty() => "branch".to_string(),
            None => "after".to_string(),
        };
        if b.after.is_empty() {
            let _ = writeln!(out, "  {id} -->|{label}| {id}_{bid}");
        }
        for dep in &b.after {
            let _ = writeln!(out, "  {id}_{} -->|{label}| {id}_{bid}", mermaid_id(dep));
        }
        if !p.branches.iter().any(|o| o.after.contains(&b.id)) {
            let _ = writeln!(out, "  {id}_{bid} --> {id}___join");
        }
    }
}

/// A DOT quoted string; a line break becomes DOT's `\n` (a centred line), not a raw newline.
fn dot_quote(s: &str) -> String {
    format!(
        "\"{}\"",
        s.replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n")
    )
}

/// Graphviz dot: one box per node (shape by kind), one edge per rule edge; inherited nodes dashed.
pub fn render_dot(workflow: &Workflow, inherited: &Inherited) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "digraph {} {{", dot_quote(&workflow.id));
    let _ = writeln!(
        out,
        "  label={};\n  rankdir=TB;\n  node [fontname=\"Helvetica\"];",
        dot_quote(&workflow.metadata.name)
    );
    for (node, _) in bfs(workflow) {
        let shape = match node {
            Node::End(_) => "doublecircle",
            Node::Standard(_) => "box",
            Node::Parallel(_) | Node::Fork(_) => "trapezium",
            Node::Join(_) => "invtrapezium",
            Node::Generic(_) => "hexagon",
            Node::Action(_) => "parallelogram",
            Node::SubWorkflow(_) => "box3d",
            Node::Wait(_) => "circle",
            Node::Map(_) => "box",
        };
        let label = format!("{}\n({})", node.id(), node.kind_name());
        let start = if node.id() == workflow.start_node {
            ", penwidth=2"
        } else {
            ""
        };
        let dashed = if inherited.contains_key(node.id()) {
            ", style=dashed"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "  {} [shape={shape}, label={}{start}{dashed}];",
            dot_quote(node.id()),
            dot_quote(&label)
        );
    }
    for (node, _) in bfs(workflow) {
        for edge in timed_node_edges(workflow, node) {
            let to = edge.target.unwrap_or_else(|| node.id().to_string());
            let style = if edge.dashed { ", style=dashed" } else { "" };
            let _ = writeln!(
                out,
                "  {} -> {} [label={}{style}];",
                dot_quote(node.id()),
                dot_quote(&to),
                dot_quote(&edge.label)
            );
        }
    }
    super::graph_saga::dot(workflow, &mut out, dot_quote);
    out.push_str("}\n");
    out
}
