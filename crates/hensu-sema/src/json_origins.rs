//! Origins for a `.json` workflow: spans into the JSON text, from the wire reader's source map,
//! so diagnostics on JSON input point at the offending value (docs/language.md, *The JSON
//! artifact*).

use hensu_diagnostics::{FileId, Span};
use hensu_ir::SourceMap;
use hensu_ir::{Node, TransitionRule, Workflow};

use crate::origins::{AgentOrigin, BranchOrigin, NodeOrigin, Origins, RuleOrigin, VariableOrigin};

fn conv(span: hensu_ir::Span) -> Span {
    Span::from_range(span.start..span.end)
}

struct Map<'a>(&'a SourceMap);

impl Map<'_> {
    fn value(&self, path: &str) -> Option<Span> {
        self.0.value_span(path).map(conv)
    }

    fn key(&self, path: &str) -> Option<Span> {
        self.0.key_span(path).map(conv)
    }

    /// Spans of the elements of the array at `path`.
    fn list(&self, path: &str, len: usize) -> Vec<Span> {
        (0..len)
            .map(|i| self.value(&format!("{path}[{i}]")).unwrap_or_default())
            .collect()
    }
}

/// Builds [`Origins`] for `wf` read from JSON. `fallback` is used for anything the map lacks.
pub fn origins_from_json(wf: &Workflow, map: &SourceMap, file: FileId) -> Origins {
    let m = Map(map);
    let fallback = m
        .value("id")
        .or_else(|| m.value(""))
        .map(|s| Span::new(s.start, s.start))
        .unwrap_or_default();
    let mut origins = Origins {
        file,
        fallback,
        input: crate::check::InputKind::Json,
        workflow: m.value("id"),
        version: m.value("version"),
        start: m.value("startNode"),
        graph: m.key("nodes"),
        state: m.key("stateSchema"),
        ..Origins::default()
    };
    for id in wf.agents.keys() {
        let base = format!("agents.{id}");
        let mut origin = AgentOrigin {
            id: m.key(&base).unwrap_or(fallback),
            decl: m.value(&base).unwrap_or(fallback),
            ..AgentOrigin::default()
        };
        for prop in [
            "role",
            "model",
            "temperature",
            "maxTokens",
            "topP",
            "frequencyPenalty",
            "presencePenalty",
            "timeout",
        ] {
            if let Some(span) = m.value(&format!("{base}.{prop}")) {
                origin.props.insert(prop, span);
            }
        }
        origins.agents.insert(id.clone(), origin);
    }
    if let Some(schema) = &wf.state_schema {
        for (i, var) in schema.variables.iter().enumerate() {
            let base = format!("stateSchema.variables[{i}]");
            origins
                .variables
                .entry(var.name.clone())
                .or_insert(VariableOrigin {
                    name: m.value(&format!("{base}.name")).unwrap_or(fallback),
                    decl: m.value(&base).unwrap_or(fallback),
                    var_type: m.value(&format!("{base}.type")),
                });
        }
    }
    for (id, node) in &wf.nodes {
        origins
            .nodes
            .insert(id.clone(), node_origin(&m, id, node, fallback));
    }
    origins
}

fn node_origin(m: &Map<'_>, id: &str, node: &Node, fallback: Span) -> NodeOrigin {
    let base = format!("nodes.{id}");
    let mut o = NodeOrigin {
        id: m.key(&base).unwrap_or(fallback),
        decl: m.value(&base).unwrap_or(fallback),
        ..NodeOrigin::default()
    };
    // JSON field → the DSL property name the checks look up.
    for (field, prop) in [
        ("agentId", "agent"),
        ("prompt", "prompt"),
        ("rubric", "rubric"),
        ("executorType", "executorType"),
        ("workflowId", "target"),
        ("targetVersion", "targetVersion"),
        ("mergeStrategy", "mergeStrategy"),
        ("timeoutMs", "timeout"),
        ("nodeTimeoutMs", "timeout"),
        ("retryBackoffMs", "backoff"),
        ("over", "over"),
        ("result", "result"),
        ("maxParallel", "maxParallel"),
        ("maxItems", "maxItems"),
        ("onItemFailure", "onItemFailure"),
    ] {
        if let Some(span) = m.value(&format!("{base}.{field}")) {
            o.props.insert(prop, span);
        }
    }
    o.review = m.value(&format!("{base}.reviewConfig"));
    o.consensus = m.value(&format!("{base}.consensusConfig"));
    for (field, prop) in [
        ("judgeAgentId", "judge"),
        ("strategy", "strategy"),
        ("threshold", "threshold"),
    ] {
        if let Some(span) = m.value(&format!("{base}.consensusConfig.{field}")) {
            o.consensus_props.insert(prop, span);
        }
    }
    match node {
        Node::Standard(n) => o.writes = m.list(&format!("{base}.writes"), n.writes.len()),
        Node::Map(n) => o.writes = m.list(&format!("{base}.writes"), n.writes.len()),
        Node::Join(j) => {
            o.writes = m.list(&format!("{base}.writes"), j.writes.len());
            o.exports = m.list(&format!("{base}.exports"), j.exports.len());
            o.awaits = m.list(&format!("{base}.awaitTargets"), j.await_targets.len());
        }
        Node::Fork(f) => o.targets = m.list(&format!("{base}.targets"), f.targets.len()),
        Node::SubWorkflow(s) => {
            // `inputMapping` is child → parent, `outputMapping` parent → child: the parent-side
            // name is the value of one and the key of the other.
            let decl = o.decl;
            let field = |map: &str, k: &String, key: bool| {
                let path = format!("{base}.{map}.{k}");
                let span = if key { m.key(&path) } else { m.value(&path) };
                span.unwrap_or(decl)
            };
            o.imports = s
                .input_mapping
                .keys()
                .map(|k| field("inputMapping", k, false))
                .collect();
            o.imports_child = s
                .input_mapping
                .keys()
                .map(|k| field("inputMapping", k, true))
                .collect();
            o.writes = s
                .output_mapping
                .keys()
                .map(|k| field("outputMapping", k, true))
                .collect();
            o.writes_child = s
                .output_mapping
                .keys()
                .map(|k| field("outputMapping", k, false))
                .collect();
        }
        Node::Wait(w) => {
            o.writes = m.list(&format!("{base}.writes"), w.writes.len());
            for (field, prop) in [
                ("durationMs", "duration"),
                ("until", "until"),
                ("signal", "signal"),
                ("timeoutMs", "timeout"),
            ] {
                if let Some(span) = m.value(&format!("{base}.{field}")) {
                    o.props.insert(prop, span);
                }
            }
        }
        Node::Action(a) => {
            o.actions = m.list(&format!("{base}.actions"), a.actions.len());
            o.writes = m.list(&format!("{base}.writes"), a.writes.len());
        }
        Node::Parallel(p) => {
            o.branches = p
                .branches
                .iter()
                .enumerate()
                .map(|(i, b)| {
                    let bb = format!("{base}.branches[{i}]");
                    let mut bo = BranchOrigin {
                        id: m.value(&format!("{bb}.id")).unwrap_or(fallback),
                        decl: m.value(&bb).unwrap_or(fallback),
                        yields: m.list(&format!("{bb}.yields"), b.yields.len()),
                        after: m.list(&format!("{bb}.dependsOn"), b.after.len()),
                        run_if: m.value(&format!("{bb}.runIf")),
                        ..BranchOrigin::default()
                    };
                    for (field, prop) in [
                        ("agentId", "agent"),
                        ("prompt", "prompt"),
                        ("weight", "weight"),
                    ] {
                        if let Some(span) = m.value(&format!("{bb}.{field}")) {
                            bo.props.insert(prop, span);
                        }
                    }
                    bo
                })
                .collect();
        }
        Node::Generic(_) | Node::End(_) => {}
    }
    o.rules = node
        .transition_rules()
        .iter()
        .enumerate()
        .map(|(i, rule)| rule_origin(m, &format!("{base}.transitionRules[{i}]"), rule, fallback))
        .collect();
    o
}

fn rule_origin(m: &Map<'_>, path: &str, rule: &TransitionRule, fallback: Span) -> RuleOrigin {
    let stmt = m.value(path).unwrap_or(fallback);
    let mut o = RuleOrigin {
        stmt,
        trigger: m.value(&format!("{path}.type")),
        ..RuleOrigin::default()
    };
    let inner_path = match rule {
        TransitionRule::Bounded { .. } => {
            o.otherwise = m.value(&format!("{path}.otherwise"));
            o.budget = m.value(&format!("{path}.budget"));
            format!("{path}.inner")
        }
        _ => path.to_string(),
    };
    o.target = m.value(&format!("{inner_path}.targetNode"));
    o.variable = m.value(&format!("{inner_path}.variable"));
    o.operand = m.value(&format!("{inner_path}.expected"));
    if let TransitionRule::Score { conditions, .. } = rule.trigger_rule() {
        o.conditions = m.list(&format!("{inner_path}.conditions"), conditions.len());
        o.condition_targets = (0..conditions.len())
            .map(|j| {
                m.value(&format!("{inner_path}.conditions[{j}].targetNode"))
                    .unwrap_or(stmt)
            })
            .collect();
    }
    o
}
