//! `hensuc test --coverage`: which nodes, transitions and compensations of each workflow the
//! suite exercised, as the union over its tests (docs/testing.md, *Coverage*). Hits are counted
//! from the events a test records, so coverage sees exactly what the engine ran.

use std::collections::BTreeMap;

use hensu_diagnostics::{FileId, Files, Span};
use hensu_ir::{Node, Workflow};
use hensu_sema::origins::Origins;
use serde_json::{Value, json};

/// Version of the `coverage` object of `hensuc test --coverage --format json`.
pub const COVERAGE_FORMAT_VERSION: u32 = 1;

/// A workflow the coverage can describe: its IR and where each part was written.
pub struct Source<'a> {
    pub workflow: &'a Workflow,
    pub origins: &'a Origins,
}

/// Hit counts keyed by workflow id, summed over every test.
#[derive(Default)]
pub struct Hits {
    nodes: BTreeMap<(String, String), u64>,
    transitions: BTreeMap<(String, String, String), u64>,
    compensations: BTreeMap<(String, String), u64>,
    /// Workflows some test ran (as the test's workflow or as a sub-workflow child).
    exercised: BTreeMap<String, u64>,
}

/// The flow an event belongs to: the test's workflow, or a sub-workflow child it runs.
struct Frame {
    workflow: String,
    /// The sub-workflow node of the parent whose `node_completed` ends this frame.
    ended_by: Option<String>,
    /// Fork nodes of this flow that are running, so their targets' starts count as the fork's
    /// edges (a fork starts its targets without a `transition_taken`).
    open_forks: Vec<String>,
}

impl Hits {
    /// Adds the events of one test of `workflow`.
    pub fn add(&mut self, workflow: &str, events: &[Value], sources: &BTreeMap<String, Source>) {
        let mut stack = vec![Frame {
            workflow: workflow.to_string(),
            ended_by: None,
            open_forks: Vec::new(),
        }];
        *self.exercised.entry(workflow.to_string()).or_default() += 1;
        for e in events {
            let Some(frame) = stack.last_mut() else {
                break;
            };
            let wf = frame.workflow.clone();
            let node = e["node_id"].as_str().unwrap_or_default();
            match e["event"].as_str().unwrap_or_default() {
                "node_started" => {
                    *self.nodes.entry((wf.clone(), node.into())).or_default() += 1;
                    let ir = sources.get(&wf).and_then(|s| s.workflow.nodes.get(node));
                    for fork in &frame.open_forks {
                        let is_target = sources
                            .get(&wf)
                            .and_then(|s| s.workflow.nodes.get(fork))
                            .is_some_and(|f| matches!(f, Node::Fork(f) if f.targets.iter().any(|t| t == node)));
                        if is_target {
                            let key = (wf.clone(), fork.clone(), node.to_string());
                            *self.transitions.entry(key).or_default() += 1;
                        }
                    }
                    match ir {
                        Some(Node::Fork(_)) => frame.open_forks.push(node.to_string()),
                        Some(Node::SubWorkflow(s)) => {
                            *self.exercised.entry(s.workflow_id.clone()).or_default() += 1;
                            stack.push(Frame {
                                workflow: s.workflow_id.clone(),
                                ended_by: Some(node.to_string()),
                                open_forks: Vec::new(),
                            });
                        }
                        _ => {}
                    }
                }
                "node_completed" => {
                    frame.open_forks.retain(|f| f != node);
                    if stack.len() > 1
                        && stack.last().and_then(|f| f.ended_by.as_deref()) == Some(node)
                    {
                        stack.pop();
                    }
                }
                "transition_taken" => {
                    let from = e["from"].as_str().unwrap_or_default();
                    let to = e["to"].as_str().unwrap_or_default();
                    let key = (wf.clone(), from.to_string(), to.to_string());
                    *self.transitions.entry(key).or_default() += 1;
                    // End nodes emit no `node_started`: reaching one is the transition to it.
                    let is_end = sources
                        .get(&wf)
                        .and_then(|s| s.workflow.nodes.get(to))
                        .is_some_and(Node::is_end);
                    if is_end {
                        *self.nodes.entry((wf, to.to_string())).or_default() += 1;
                    }
                }
                "compensation_started" => {
                    let id = e["compensation_id"].as_str().unwrap_or_default();
                    *self.compensations.entry((wf, id.to_string())).or_default() += 1;
                }
                _ => {}
            }
        }
    }
}

/// One thing coverage counts, with where it was written.
pub struct Item {
    /// Node id, `from → to`, or compensation id.
    pub name: String,
    pub file: FileId,
    /// 1-based; 0 when the item has no source position (a JSON workflow without one).
    pub line: u32,
    pub hits: u64,
    /// A transition's `(from, to)`.
    pub edge: Option<(String, String)>,
}

/// The coverage of one workflow.
pub struct WorkflowCoverage {
    pub id: String,
    pub file: FileId,
    /// How many test runs (or sub-workflow runs inside them) executed it.
    pub runs: u64,
    pub nodes: Vec<Item>,
    pub transitions: Vec<Item>,
    pub compensations: Vec<Item>,
    /// No test reached any end node of the workflow.
    pub no_end_reached: bool,
}

fn line_of(files: &Files, origins: &Origins, span: Span) -> (FileId, u32) {
    let (file, span) = origins.locate(span);
    let line = files.get(file).map_or(0, |f| f.line_col(span.start).line);
    (file, line)
}

/// The span of the rule of `from` that leads to `to` (a fork target, or the first rule naming
/// it; a self-retry names no target), else the node's declaration.
fn transition_span(node: &Node, origins: &Origins, to: &str) -> Option<Span> {
    let o = origins.node(node.id())?;
    if let Node::Fork(f) = node
        && let Some(i) = f.targets.iter().position(|t| t == to)
    {
        return Some(o.targets.get(i).copied().unwrap_or(o.decl));
    }
    let rules = node.transition_rules();
    let i = rules.iter().position(|r| {
        let targets = r.targets();
        targets.contains(&to) || (to == node.id() && r.bounded().is_some() && targets.len() == 1)
    });
    let Some((i, rule)) = i.and_then(|i| Some((i, rules.get(i)?))) else {
        return Some(o.decl);
    };
    let Some(ro) = o.rules.get(i) else {
        return Some(o.decl);
    };
    // An `onScore { … }` arm has a line of its own.
    if let hensu_ir::TransitionRule::Score { conditions, .. } = rule.trigger_rule()
        && let Some(j) = conditions.iter().position(|c| c.target_node == to)
        && let Some(arm) = ro.conditions.get(j)
    {
        return Some(*arm);
    }
    Some(ro.stmt)
}

impl Hits {
    /// The coverage of every exercised workflow, in workflow id order.
    pub fn report(
        &self,
        sources: &BTreeMap<String, Source>,
        files: &Files,
    ) -> Vec<WorkflowCoverage> {
        let mut out = Vec::new();
        for (id, &runs) in &self.exercised {
            let Some(src) = sources.get(id) else {
                continue;
            };
            let (wf, origins) = (src.workflow, src.origins);
            let at = |span: Option<Span>| line_of(files, origins, span.unwrap_or(origins.fallback));
            let key = |s: &str| (id.clone(), s.to_string());
            let nodes: Vec<Item> = wf
                .nodes
                .keys()
                .map(|n| {
                    let (file, line) = at(origins.node(n).map(|o| o.decl));
                    let hits = self.nodes.get(&key(n)).copied().unwrap_or(0);
                    Item {
                        name: n.clone(),
                        file,
                        line,
                        hits,
                        edge: None,
                    }
                })
                .collect();
            let transitions = hensu_ir::connections(wf)
                .into_iter()
                .map(|c| {
                    let span = wf
                        .nodes
                        .get(&c.from)
                        .and_then(|n| transition_span(n, origins, &c.to));
                    let (file, line) = at(span);
                    let k = (id.clone(), c.from.clone(), c.to.clone());
                    let hits = self.transitions.get(&k).copied().unwrap_or(0);
                    Item {
                        name: format!("{} → {}", c.from, c.to),
                        file,
                        line,
                        hits,
                        edge: Some((c.from, c.to)),
                    }
                })
                .collect();
            let compensations = wf
                .saga
                .compensations
                .keys()
                .map(|c| {
                    let (file, line) = at(origins.compensations.get(c).map(|o| o.decl));
                    let hits = self.compensations.get(&key(c)).copied().unwrap_or(0);
                    Item {
                        name: c.clone(),
                        file,
                        line,
                        hits,
                        edge: None,
                    }
                })
                .collect();
            let ends: Vec<&Item> = nodes
                .iter()
                .filter(|i| wf.nodes.get(&i.name).is_some_and(Node::is_end))
                .collect();
            let no_end_reached = !ends.is_empty() && ends.iter().all(|i| i.hits == 0);
            out.push(WorkflowCoverage {
                id: id.clone(),
                file: origins.file,
                runs,
                nodes,
                transitions,
                compensations,
                no_end_reached,
            });
        }
        out
    }
}

fn covered(items: &[Item]) -> usize {
    items.iter().filter(|i| i.hits > 0).count()
}

fn percent(items: &[Item]) -> String {
    if items.is_empty() {
        return "100%".into();
    }
    format!(
        "{}%",
        (covered(items) * 100 + items.len() / 2) / items.len()
    )
}

/// The text report: per workflow a line per family, then what no test exercised.
pub fn human(report: &[WorkflowCoverage], files: &Files) -> String {
    use std::fmt::Write as _;
    let mut out = String::from("coverage:\n");
    for w in report {
        let _ = writeln!(out, "  {} ({})", w.id, files.name(w.file));
        let families = [
            ("node", &w.nodes),
            ("transition", &w.transitions),
            ("compensation", &w.compensations),
        ];
        for (family, items) in families {
            if items.is_empty() && family == "compensation" {
                continue;
            }
            let _ = writeln!(
                out,
                "    {family} coverage {}/{} ({})",
                covered(items),
                items.len(),
                percent(items)
            );
            for i in items.iter().filter(|i| i.hits == 0) {
                let _ = writeln!(
                    out,
                    "      not {}: {} ({}:{})",
                    if family == "node" {
                        "visited"
                    } else if family == "transition" {
                        "taken"
                    } else {
                        "run"
                    },
                    i.name,
                    files.name(i.file),
                    i.line
                );
            }
        }
        if w.no_end_reached {
            let _ = writeln!(out, "    note: no test reaches an end node of `{}`", w.id);
        }
    }
    out
}

fn items_json(items: &[Item], files: &Files) -> Value {
    Value::Array(
        items
            .iter()
            .map(|i| {
                let mut v = json!({
                    "name": i.name,
                    "file": files.name(i.file),
                    "line": i.line,
                    "hits": i.hits,
                });
                if let (Some((from, to)), Some(obj)) = (&i.edge, v.as_object_mut()) {
                    obj.insert("from".into(), json!(from));
                    obj.insert("to".into(), json!(to));
                }
                v
            })
            .collect(),
    )
}

fn summary_json(items: &[Item]) -> Value {
    json!({ "covered": covered(items), "total": items.len() })
}

/// The `coverage` object of the JSON report (docs/schemas/coverage.schema.json).
pub fn json(report: &[WorkflowCoverage], files: &Files) -> Value {
    let workflows: Vec<Value> = report
        .iter()
        .map(|w| {
            json!({
                "id": w.id,
                "file": files.name(w.file),
                "runs": w.runs,
                "end_reached": !w.no_end_reached,
                "summary": {
                    "nodes": summary_json(&w.nodes),
                    "transitions": summary_json(&w.transitions),
                    "compensations": summary_json(&w.compensations),
                },
                "nodes": items_json(&w.nodes, files),
                "transitions": items_json(&w.transitions, files),
                "compensations": items_json(&w.compensations, files),
            })
        })
        .collect();
    json!({ "format_version": COVERAGE_FORMAT_VERSION, "workflows": workflows })
}

/// An lcov tracefile: one `SF:` record per source file, a `DA:` line per source line that
/// declares a node, a transition or a compensation (the line's count is the smallest of its
/// items', so a line is shown as missed while anything on it is), and a `BRDA:` branch per
/// transition.
pub fn lcov(report: &[WorkflowCoverage], files: &Files) -> String {
    use std::fmt::Write as _;
    // file → line → smallest count; file → branches (line, block, name, hits).
    let mut lines: BTreeMap<FileId, BTreeMap<u32, u64>> = BTreeMap::new();
    let mut branches: BTreeMap<FileId, Vec<(u32, usize, &str, u64)>> = BTreeMap::new();
    for (block, w) in report.iter().enumerate() {
        for i in w.nodes.iter().chain(&w.transitions).chain(&w.compensations) {
            if i.line == 0 {
                continue;
            }
            let count = lines
                .entry(i.file)
                .or_default()
                .entry(i.line)
                .or_insert(i.hits);
            *count = (*count).min(i.hits);
        }
        for i in w.transitions.iter().filter(|i| i.line > 0) {
            branches
                .entry(i.file)
                .or_default()
                .push((i.line, block, &i.name, i.hits));
        }
    }
    let mut out = String::new();
    for (file, da) in &lines {
        let _ = writeln!(out, "TN:\nSF:{}", files.name(*file));
        let brs = branches.get(file).map(Vec::as_slice).unwrap_or_default();
        for (n, (line, block, _, hits)) in brs.iter().enumerate() {
            let taken = if *hits == 0 {
                "-".to_string()
            } else {
                hits.to_string()
            };
            let _ = writeln!(out, "BRDA:{line},{block},{n},{taken}");
        }
        if !brs.is_empty() {
            let _ = writeln!(out, "BRF:{}", brs.len());
            let _ = writeln!(out, "BRH:{}", brs.iter().filter(|b| b.3 > 0).count());
        }
        for (line, hits) in da {
            let _ = writeln!(out, "DA:{line},{hits}");
        }
        let _ = writeln!(out, "LF:{}", da.len());
        let _ = writeln!(out, "LH:{}", da.values().filter(|h| **h > 0).count());
        out.push_str("end_of_record\n");
    }
    out
}
