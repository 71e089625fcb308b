//! The merge of a resolved base into the workflow that extends it (docs/language.md, *Workflow
//! extension*): the base's state variables, agents and nodes first, the derived file's appended
//! after them (a collision is E0508 and keeps the base's); `routes` replace an inherited node's
//! transitions (E0509 when there is no such node); `start at`, `config { }` and `description`
//! of the derived file replace the base's when given.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Node, StateSchema, TransitionRule};
use indexmap::IndexMap;

use super::shift::shift_origins;
use super::{BaseRef, Derivation, Extension, Merged, Part, Routes, Segment};
use crate::origins::Damage;
use crate::schema::{self, BlockKind, StatementKind};
use crate::suggest::help_and_fix;

/// The tag recording each base of a merged workflow in its `metadata.tags`, nearest first
/// (`extends:greeting@1.0.0`): the built artifact stays upstream's shape and the derivation
/// stays auditable.
pub const EXTENDS_TAG: &str = "extends:";

pub(super) fn merge(
    part: Part<'_>,
    ext: &Extension,
    extends_span: Span,
    base: Merged,
    base_len: u32,
    diagnostics: &mut Vec<Diagnostic>,
) -> (Merged, u32) {
    let Merged {
        workflow: base_wf,
        origins: mut base_o,
    } = base;
    // The base's spans move past the derived text (one byte apart, so an empty span at the end
    // of the derived file is not taken for the base's first byte).
    let by = part.len.saturating_add(1);
    shift_origins(&mut base_o, by);
    let base_derived = base_o.derived.take();
    let mut segments = vec![Segment {
        file: part.file,
        start: 0,
        len: part.len,
    }];
    match &base_derived {
        Some(d) => segments.extend(d.segments.iter().map(|s| Segment {
            start: s.start.saturating_add(by),
            ..*s
        })),
        None => segments.push(Segment {
            file: base_o.file,
            start: by,
            len: base_len,
        }),
    }
    let mut bases = vec![BaseRef {
        id: base_wf.id.clone(),
        version: base_wf.version.clone(),
        file: base_o.file,
    }];
    let mut inherited = indexmap::IndexMap::new();
    for id in base_wf.nodes.keys() {
        let from = base_derived
            .as_ref()
            .and_then(|d| d.inherited.get(id))
            .map_or(0, |i| i + 1);
        inherited.insert(id.clone(), from);
    }
    if let Some(d) = &base_derived {
        bases.extend(d.bases.iter().cloned());
    }

    let own = part.workflow;
    let own_o = part.origins;
    let mut found = Vec::new();
    let mut wf = base_wf;
    let mut o = base_o;

    // Identity and settings: the derived file's, the base's where the derived file is silent.
    wf.id = own.id.clone();
    wf.version = own.version.clone();
    wf.metadata.name = own.metadata.name.clone();
    if own.metadata.description.is_some() {
        wf.metadata.description = own.metadata.description.clone();
    }
    let mut tags: Vec<String> = own.metadata.tags.clone();
    tags.extend(
        bases
            .iter()
            .map(|b| format!("{EXTENDS_TAG}{}@{}", b.id, b.version)),
    );
    wf.metadata.tags = tags;
    if own.config.is_some() {
        wf.config = own.config.clone();
        o.config = own_o.config.clone();
    }
    if !own.start_node.is_empty() {
        wf.start_node = own.start_node.clone();
        o.start = own_o.start;
    }
    o.file = own_o.file;
    o.fallback = own_o.fallback;
    o.workflow = own_o.workflow;
    o.version = own_o.version;
    o.graph = own_o.graph.or(o.graph);
    o.state = own_o.state.or(o.state);
    o.damage = o.damage.max(own_o.damage);
    o.error_spans.extend(own_o.error_spans.iter().copied());
    o.input = own_o.input;
    // The base's annotations were shifted with its spans; the derived file's keep theirs.
    o.suppressions.extend(own_o.suppressions.iter().cloned());

    // Appended state variables.
    if let Some(own_state) = &own.state_schema {
        let state = wf.state_schema.get_or_insert_with(StateSchema::default);
        for v in &own_state.variables {
            let here = own_o.variables.get(&v.name);
            if let Some(first) = o.variables.get(&v.name) {
                found.push(collision(
                    "state variable",
                    &v.name,
                    here.map_or(own_o.fallback, |h| h.name),
                    first.name,
                    &wf.id,
                    &bases[0].id,
                ));
                continue;
            }
            if let Some(h) = here {
                o.variables.insert(v.name.clone(), h.clone());
            }
            state.variables.push(v.clone());
        }
    }
    // Appended agents, nodes and compensations (docs/language.md, *Saga compensation*:
    // compensation ids share the node namespace, so an inherited node's id is taken too).
    let mut cx = Appending {
        derived: &wf.id,
        base: &bases[0].id,
        fallback: own_o.fallback,
        found: &mut found,
    };
    cx.append(
        "agent",
        (&own.agents, &own_o.agents),
        (&mut wf.agents, &mut o.agents),
        |_| None,
        |h| h.id,
    );
    cx.append(
        "node",
        (&own.nodes, &own_o.nodes),
        (&mut wf.nodes, &mut o.nodes),
        |_| None,
        |h| h.id,
    );
    let inherited_nodes = &o.nodes;
    cx.append(
        "compensation",
        (&own.saga.compensations, &own_o.compensations),
        (&mut wf.saga.compensations, &mut o.compensations),
        |id| inherited_nodes.get(id).map(|n| n.id),
        |h| h.id,
    );
    // The appended nodes' `compensation = "…"` (an inherited node keeps the base's).
    for (node, c) in &own.saga.node_compensations {
        if own.nodes.contains_key(node) && !wf.saga.node_compensations.contains_key(node) {
            wf.saga.node_compensations.insert(node.clone(), c.clone());
        }
    }
    // The appended nodes' timeouts and backoffs (an inherited node keeps the base's).
    for (node, t) in &own.timing.nodes {
        if own.nodes.contains_key(node) && !wf.timing.nodes.contains_key(node) {
            wf.timing.nodes.insert(node.clone(), *t);
        }
    }
    // Replaced transitions.
    for (i, r) in ext.routes.iter().enumerate() {
        if let Some(first) = ext.routes[..i].iter().find(|f| f.node == r.node) {
            let d = Diagnostic::new(
                codes::E0509,
                format!("`routes(\"{}\")` is given twice", r.node),
                r.node_span,
                "routed again here",
            )
            .with_label(first.node_span, "first routed here")
            .with_help("merge the two blocks into one; the first one is kept");
            found.push(d);
            continue;
        }
        if own.nodes.contains_key(&r.node) {
            let d = Diagnostic::new(
                codes::E0509,
                format!(
                    "`routes(\"{}\")` names a node declared in this file",
                    r.node
                ),
                r.node_span,
                "not inherited",
            )
            .with_label(own_o.node_id(&r.node), "declared here")
            .with_help(format!(
                "write the transitions in the declaration of `{}` itself",
                r.node
            ));
            found.push(d);
            continue;
        }
        let Some(node) = wf.nodes.get_mut(&r.node) else {
            let d = Diagnostic::new(
                codes::E0509,
                format!(
                    "`routes(\"{}\")` names no node of the base workflow `{}`",
                    r.node, bases[0].id
                ),
                r.node_span,
                "unknown node",
            );
            let (d, _) = help_and_fix(
                d,
                &r.node,
                r.node_span,
                inherited.keys().map(String::as_str),
            );
            found.push(d);
            continue;
        };
        let Some(kind) = block_kind(node) else {
            let first = o.node_id(&r.node);
            let d = Diagnostic::new(
                codes::E0509,
                format!("`routes(\"{}\")` names an end node", r.node),
                r.node_span,
                "an end node has no transitions",
            )
            .with_label(first, "the end node")
            .with_help("route the nodes that lead to it instead");
            found.push(d);
            continue;
        };
        let (rules, rule_origins) = accepted_rules(r, kind, &mut found);
        if let Some(slot) = node.transition_rules_mut() {
            *slot = rules;
        }
        // The retry's backoff goes with the rules it belongs to; the timeout stays.
        let timing = wf.timing.nodes.entry(r.node.clone()).or_default();
        timing.backoff_ms = r.backoff_ms;
        if timing.is_empty() {
            wf.timing.nodes.shift_remove(&r.node);
        }
        if let Some(n) = o.nodes.get_mut(&r.node) {
            n.rules = rule_origins;
        }
    }

    o.derived = Some(Box::new(Derivation {
        workflow: own.id.clone(),
        extends: extends_span,
        segments,
        bases,
        inherited,
    }));
    if o.damage == Damage::None && found.iter().any(Diagnostic::is_error) {
        // A dropped declaration may be the missing edge or use: the warnings that need the
        // whole graph would be echoes (see `crate::cascade`).
        o.damage = Damage::Lowering;
    }
    diagnostics.extend(found.into_iter().map(|d| o.place(d.in_file(part.file))));
    let len = by.saturating_add(base_len);
    let merged = Merged {
        workflow: wf,
        origins: o,
    };
    (merged, len)
}

/// Where the derived file's declarations are appended to the merged workflow, and the E0508
/// collisions found on the way.
struct Appending<'a> {
    derived: &'a str,
    base: &'a str,
    fallback: Span,
    found: &'a mut Vec<Diagnostic>,
}

impl Appending<'_> {
    /// Appends the derived file's declarations of one kind (`what`) with their origins; an id the
    /// merged workflow already has (or that `taken` reports) is an E0508 collision, and the
    /// base's declaration is kept.
    fn append<T: Clone, O: Clone, S: std::hash::BuildHasher>(
        &mut self,
        what: &str,
        (own, own_o): (&IndexMap<String, T>, &IndexMap<String, O, S>),
        (merged, merged_o): (&mut IndexMap<String, T>, &mut IndexMap<String, O, S>),
        taken: impl Fn(&str) -> Option<Span>,
        id_span: impl Fn(&O) -> Span,
    ) {
        for (id, item) in own {
            let here = own_o.get(id);
            if let Some(first) = merged_o.get(id).map(&id_span).or_else(|| taken(id)) {
                self.found.push(collision(
                    what,
                    id,
                    here.map_or(self.fallback, &id_span),
                    first,
                    self.derived,
                    self.base,
                ));
                continue;
            }
            if let Some(h) = here {
                merged_o.insert(id.clone(), h.clone());
            }
            merged.insert(id.clone(), item.clone());
        }
    }
}

fn block_kind(node: &Node) -> Option<BlockKind> {
    Some(match node {
        Node::Standard(_) => BlockKind::StandardNode,
        Node::Parallel(_) => BlockKind::ParallelNode,
        Node::Fork(_) => BlockKind::ForkNode,
        Node::Join(_) => BlockKind::JoinNode,
        Node::Generic(_) => BlockKind::GenericNode,
        Node::Action(_) => BlockKind::ActionNode,
        Node::SubWorkflow(_) => BlockKind::SubWorkflowNode,
        Node::Wait(w) if w.signal().is_some() => BlockKind::SignalNode,
        Node::Wait(_) => BlockKind::WaitNode,
        Node::Map(_) => BlockKind::MapNode,
        Node::End(_) => return None,
    })
}

/// The rules of a `routes` block that the inherited node's kind accepts; E0102 for the others.
fn accepted_rules(
    r: &Routes,
    kind: BlockKind,
    found: &mut Vec<Diagnostic>,
) -> (Vec<TransitionRule>, Vec<crate::origins::RuleOrigin>) {
    let mut rules = Vec::with_capacity(r.rules.len());
    let mut origins = Vec::with_capacity(r.rules.len());
    let mut reported: Vec<Span> = Vec::new();
    for (i, rule) in r.rules.iter().enumerate() {
        let Some(&(trigger, stmt)) = r.triggers.get(i) else {
            continue;
        };
        let spec = schema::lookup(kind, trigger);
        let retry = matches!(rule, TransitionRule::Bounded { inner, .. }
            if matches!(inner.as_ref(), TransitionRule::Failure { target_node: None }));
        let form_ok = match spec.map(|s| s.kind) {
            Some(StatementKind::Transition(forms)) => !retry || forms.retry,
            Some(_) => true,
            None => false,
        };
        if form_ok {
            rules.push(rule.clone());
            origins.push(r.origins.get(i).cloned().unwrap_or_default());
            continue;
        }
        if reported.contains(&stmt) {
            continue;
        }
        reported.push(stmt);
        let what = if spec.is_some() {
            format!("`{trigger} retry`")
        } else {
            format!("`{trigger}`")
        };
        let d = Diagnostic::new(
            codes::E0102,
            format!(
                "{what} is not accepted on `{}`, {}",
                r.node,
                kind.describe()
            ),
            stmt,
            format!("not valid on {}", kind.describe()),
        )
        .with_note("the statement is ignored")
        .with_help(format!(
            "{} accepts {}",
            kind.describe(),
            transitions_of(kind)
        ));
        found.push(d);
    }
    (rules, origins)
}

/// `onSuccess`, `onFailure`, … of a node kind, for help texts.
fn transitions_of(kind: BlockKind) -> String {
    let names: Vec<String> = schema::block_schema(kind)
        .iter()
        .filter(|s| {
            matches!(s.kind, StatementKind::Transition(_))
                || matches!(s.name, "onScore" | "onCondition")
        })
        .map(|s| format!("`{}`", s.name))
        .collect();
    if names.is_empty() {
        "no transitions".to_string()
    } else {
        names.join(", ")
    }
}

fn collision(
    what: &str,
    id: &str,
    here: Span,
    base: Span,
    derived: &str,
    base_id: &str,
) -> Diagnostic {
    Diagnostic::new(
        codes::E0508,
        format!("{what} `{id}` of `{derived}` is already declared by its base `{base_id}`"),
        here,
        "declared again here",
    )
    .with_label(base, "inherited from the base here")
    .with_help(match what {
        "node" => format!(
            "give the new node another id; to change where `{id}` goes next, write `routes(\"{id}\") {{ … }}`"
        ),
        _ => format!("give the new {what} another id, or use the inherited `{id}`"),
    })
    .with_note("an extending workflow appends to its base and never redefines it; the base's declaration is kept")
}
