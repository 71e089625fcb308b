//! Which state variables a node reads and writes, from the IR alone: the one listing the
//! dataflow check (W0316) and the describe export (`hensuc graph --format json`, docs/language.md,
//! *Describe*) share.
//!
//! Writes: a standard node's `writes`, a join's `writes` and `exports`, the `yields` of a
//! parallel node's branches, the parent keys of a sub-workflow's output mapping, and a generic
//! node's config values that name a declared variable (stock handlers write their
//! `outputField`). Reads: the `{placeholders}` of prompts and `send` payload strings, the
//! variable of each `onCondition`, the parent keys of a sub-workflow's input mapping, and a
//! generic node's config placeholders and variable-naming values.

use hensu_ir::{Action, Node, StateSchema, TransitionRule};

use super::text::{json_strings, placeholders};

fn push<'a>(out: &mut Vec<&'a str>, name: &'a str) {
    if !out.contains(&name) {
        out.push(name);
    }
}

/// The variables `node` writes, in declaration order, each once.
pub fn node_writes<'a>(node: &'a Node, schema: Option<&'a StateSchema>) -> Vec<&'a str> {
    let mut out = Vec::new();
    match node {
        Node::Standard(n) => n.writes.iter().for_each(|w| push(&mut out, w)),
        Node::Action(a) => {
            // Its result is stored under its id too (docs/language.md, *Action node*).
            if a.actions.iter().any(super::actions::produces_result) && declared(schema, &a.id) {
                push(&mut out, &a.id);
            }
            a.writes.iter().for_each(|w| push(&mut out, w));
        }
        Node::Join(j) => j
            .writes
            .iter()
            .chain(&j.exports)
            .for_each(|w| push(&mut out, w)),
        Node::Parallel(p) => p
            .branches
            .iter()
            .flat_map(|b| &b.yields)
            .for_each(|w| push(&mut out, w)),
        Node::SubWorkflow(s) => s.output_mapping.keys().for_each(|w| push(&mut out, w)),
        Node::Map(m) => m.writes.iter().for_each(|w| push(&mut out, w)),
        Node::Generic(g) => {
            let mut strings = Vec::new();
            g.config
                .values()
                .for_each(|v| json_strings(v, &mut strings));
            for s in strings {
                if declared(schema, s) {
                    push(&mut out, s);
                }
            }
        }
        Node::Wait(w) => w.writes.iter().for_each(|v| push(&mut out, v)),
        Node::Fork(_) | Node::End(_) => {}
    }
    out
}

/// The variables `node` reads, in order of appearance, each once (engine variables included:
/// they are part of what the node needs).
pub fn node_reads<'a>(node: &'a Node, schema: Option<&'a StateSchema>) -> Vec<&'a str> {
    let mut out = Vec::new();
    let text = |t: &'a str, out: &mut Vec<&'a str>| {
        for (name, _) in placeholders(t) {
            push(out, name);
        }
    };
    match node {
        Node::Standard(n) => {
            if let Some(p) = &n.prompt {
                text(p, &mut out);
            }
        }
        Node::Parallel(p) => {
            for (i, b) in p.branches.iter().enumerate() {
                // In a dependency DAG, what the branches a branch waits for produce (their
                // outputs under their ids, their yields) is the node's own, not a read.
                let upstream = super::dag::ancestors(p, i);
                let internal = |name: &str| {
                    upstream.contains(&name)
                        || p.branches.iter().any(|o| {
                            upstream.contains(&o.id.as_str()) && o.yields.iter().any(|y| y == name)
                        })
                };
                let mut own = Vec::new();
                if let Some(prompt) = &b.prompt {
                    text(prompt, &mut own);
                }
                if let Some(flag) = &b.run_if {
                    push(&mut own, flag);
                }
                for name in own.into_iter().filter(|n| !internal(n)) {
                    push(&mut out, name);
                }
            }
        }
        Node::Action(a) => {
            for action in &a.actions {
                if let Action::Send { payload, .. } = action {
                    let mut strings = Vec::new();
                    payload.values().for_each(|v| json_strings(v, &mut strings));
                    strings.into_iter().for_each(|s| text(s, &mut out));
                }
            }
        }
        Node::Generic(g) => {
            let mut strings = Vec::new();
            g.config
                .values()
                .for_each(|v| json_strings(v, &mut strings));
            for s in strings {
                text(s, &mut out);
                if declared(schema, s) {
                    push(&mut out, s);
                }
            }
        }
        Node::SubWorkflow(s) => s.input_mapping.values().for_each(|v| push(&mut out, v)),
        Node::Wait(w) => {
            if let hensu_ir::WaitFor::Until { template } = &w.wait {
                text(template, &mut out);
            }
        }
        Node::Map(m) => {
            push(&mut out, &m.over);
            // `{item}` and `{index}` are the item's own (docs/language.md, *Map over a list*).
            let mut own = Vec::new();
            if let Some(p) = &m.prompt {
                text(p, &mut own);
            }
            own.into_iter()
                .filter(|n| !matches!(*n, "item" | "index"))
                .for_each(|n| push(&mut out, n));
        }
        Node::Fork(_) | Node::Join(_) | Node::End(_) => {}
    }
    for rule in node.transition_rules() {
        condition_variable(rule, &mut out);
    }
    out
}

fn condition_variable<'a>(rule: &'a TransitionRule, out: &mut Vec<&'a str>) {
    match rule {
        TransitionRule::Condition { variable, .. } => push(out, variable),
        TransitionRule::Bounded { inner, .. } => condition_variable(inner, out),
        _ => {}
    }
}

fn declared(schema: Option<&StateSchema>, name: &str) -> bool {
    schema.is_some_and(|s| s.variables.iter().any(|v| v.name == name))
}
