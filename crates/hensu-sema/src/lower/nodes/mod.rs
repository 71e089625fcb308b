//! The `graph { }` block: `start at`, the node declarations and what every node body shares
//! (transitions, `writes`-like name lists); one file per node kind lowers its own statements
//! (an `end(…)` node has no body and is lowered here).

mod action;
mod fork;
mod generic;
mod join;
mod map;
mod parallel;
mod standard;
mod sub_workflow;
mod wait;

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{EndNode, ExitStatus, Node, Saga, Timing};
use hensu_syntax::ast::{Block, Call, Ident, Link, Stmt};
use indexmap::IndexMap;

use crate::lower::transitions::RuleSink;
use crate::lower::values::Quoted;
use crate::lower::{BlockStmts, Lowerer, Seen, Shape};
use crate::origins::NodeOrigin;
use crate::schema::{BlockKind, EnumType, StatementKind, StatementSpec};

/// The lowered graph block.
#[derive(Default)]
pub(crate) struct Graph {
    pub nodes: IndexMap<String, Node>,
    pub start: Option<String>,
    /// The `compensation("id") { … }` statements and the nodes naming them.
    pub saga: Saga,
    /// Node timeouts and retry backoff (docs/language.md, *Timeouts and backoff*).
    pub timing: Timing,
}

fn node_kind(name: &str) -> Option<BlockKind> {
    Some(match name {
        "node" => BlockKind::StandardNode,
        "parallel" => BlockKind::ParallelNode,
        "fork" => BlockKind::ForkNode,
        "join" => BlockKind::JoinNode,
        "generic" => BlockKind::GenericNode,
        "action" => BlockKind::ActionNode,
        "subWorkflow" => BlockKind::SubWorkflowNode,
        "map" => BlockKind::MapNode,
        "end" => BlockKind::EndNode,
        "wait" => BlockKind::WaitNode,
        "awaitSignal" => BlockKind::SignalNode,
        _ => return None,
    })
}

impl Lowerer<'_> {
    pub(crate) fn graph<'s>(
        &mut self,
        block: Option<&Block<'s>>,
        detached: &mut super::Detached<'s>,
    ) -> Graph {
        let mut graph = Graph::default();
        let Some(block) = block else { return graph };
        // The statements detached from the tree by `lower_owned` (each dropped as soon as it is
        // lowered, so the tree shrinks while the IR grows) or deferred by the parser (parsed one
        // at a time from the file's tokens).
        let owned = super::take_detached(detached, block.span);
        let count = match &owned {
            Some(BlockStmts::Owned(stmts)) => stmts.len(),
            Some(BlockStmts::Deferred { graph, .. }) => graph.stmts.len(),
            None => block.stmts.len(),
        };
        // At most one node per statement: sized once instead of doubling (which leaves up to
        // half of these large tables unused at the peak), and exactly: `reserve` rounds the
        // entries up to the hash table's capacity (28,672 entries for 17,858 nodes, 9 MB of
        // unused `Node`s and `NodeOrigin`s at 10 MB: docs/performance.md, *Round 3, fourth
        // sitting*).
        graph.nodes.reserve_exact(count);
        self.origins.nodes.reserve_exact(count);
        let mut seen = Seen::new();
        match owned {
            Some(BlockStmts::Owned(stmts)) => {
                for stmt in stmts {
                    self.graph_stmt(&mut graph, &mut seen, &stmt);
                }
            }
            Some(BlockStmts::Deferred {
                src,
                graph: deferred,
            }) => {
                self.each_deferred(src, deferred, |l, stmt| {
                    l.graph_stmt(&mut graph, &mut seen, stmt);
                });
            }
            None => {
                for stmt in &block.stmts {
                    self.graph_stmt(&mut graph, &mut seen, stmt);
                }
            }
        }
        graph
    }

    pub(super) fn graph_stmt(&mut self, graph: &mut Graph, seen: &mut Seen, stmt: &Stmt<'_>) {
        let Some((spec, shape)) = self.accept(BlockKind::Graph, stmt, seen) else {
            return;
        };
        match (spec.kind, shape) {
            (StatementKind::StartAt, Shape::Chain { head, links }) => {
                if let Some((s, span)) = self.start_at(head, links) {
                    graph.start = Some(s);
                    self.origins.start = Some(span);
                }
            }
            (StatementKind::StartAt, Shape::Name(head)) => {
                self.start_at(head, &[]);
            }
            (_, Shape::Call(c)) if spec.name == "routes" => self.routes(spec, c, stmt),
            (_, Shape::Call(c)) if spec.name == "compensation" => {
                self.compensation_decl(graph, spec, c, stmt);
            }
            (_, Shape::Call(c)) => {
                let Some(kind) = node_kind(spec.name) else {
                    return;
                };
                // What an earlier statement (a `routes` block) left must not reach this node.
                self.pending_timing = hensu_ir::NodeTiming::default();
                self.pending_timing_spans = (None, None, None);
                let Some((node, origin)) = self.node(kind, spec, c, stmt) else {
                    self.pending_compensation = None;
                    self.pending_timing = hensu_ir::NodeTiming::default();
                    return;
                };
                let id = node.id().to_string();
                let named = self.pending_compensation.take();
                let timing = std::mem::take(&mut self.pending_timing);
                let first = self
                    .origins
                    .nodes
                    .get(&id)
                    .or_else(|| self.origins.compensations.get(&id));
                if let Some(first) = first {
                    let d = Diagnostic::new(
                        codes::E0201,
                        format!("node `{id}` is declared twice"),
                        origin.id,
                        "declared again here",
                    )
                    .with_label(first.id, "first declared here")
                    .with_help("rename one of them; hensu keeps the first declaration (upstream silently replaced it with the last)");
                    self.emit(d);
                    return;
                }
                if let Some((name, _)) = named {
                    graph.saga.node_compensations.insert(id.clone(), name);
                }
                if !timing.is_empty() {
                    graph.timing.nodes.insert(id.clone(), timing);
                }
                self.origins.nodes.insert(id.clone(), origin);
                graph.nodes.insert(id, node);
            }
            _ => {}
        }
    }

    fn start_at(&mut self, head: Ident<'_>, links: &[Link<'_>]) -> Option<(String, Span)> {
        let Some(at) = links.first() else {
            let d = Diagnostic::new(
                codes::E0012,
                "incomplete `start`: it needs `at \"node\"`",
                head.span,
                "the chain ends here",
            )
            .with_help("write `start at \"node\"`");
            self.emit(d);
            return None;
        };
        if at.word.name != "at" {
            let d = Diagnostic::new(
                codes::E0101,
                format!("unexpected `{}` after `start`", at.word.name),
                at.word.span,
                "expected `at`",
            )
            .with_help("write `start at \"node\"`");
            self.emit(d);
            return None;
        }
        let Some(arg) = &at.arg else {
            let d = Diagnostic::new(
                codes::E0012,
                "incomplete `start at`: it needs a node id",
                at.word.span,
                "the chain ends here",
            )
            .with_help("write `start at \"node\"`");
            self.emit(d);
            return None;
        };
        let s = self.string(arg, &"`start at`")?;
        if let Some(extra) = links.get(1) {
            let d = Diagnostic::new(
                codes::E0101,
                format!("unexpected `{}` after `start at`", extra.word.name),
                extra.word.span,
                "unexpected",
            )
            .with_help("write `start at \"node\"` on its own line");
            self.emit(d);
        }
        Some((s, arg.span))
    }

    fn node(
        &mut self,
        kind: BlockKind,
        spec: &StatementSpec,
        c: &Call<'_>,
        stmt: &Stmt<'_>,
    ) -> Option<(Node, NodeOrigin)> {
        let (min, max) = match spec.kind {
            StatementKind::Call { min, max } => (min, max),
            StatementKind::CallBlock { min, max, .. } => (min, Some(max)),
            _ => (1, Some(1)),
        };
        let args = self.call_args(c, min, max, spec.syntax)?;
        let id_e = args.first()?;
        let (id, id_span) = self.id_arg(id_e, &"node id")?;
        let mut o = NodeOrigin {
            id: id_span,
            decl: stmt.span,
            ..NodeOrigin::default()
        };
        if kind == BlockKind::EndNode {
            let mut status = ExitStatus::Success;
            if let Some(e) = args.get(1) {
                o.props.insert("status", e.span);
                if let Some(s) = self
                    .enum_constant(e, EnumType::ExitStatus, &"the end status")
                    .and_then(ExitStatus::parse)
                {
                    status = s;
                }
            }
            if let Some(b) = &c.block {
                let d = Diagnostic::new(
                    codes::E0101,
                    "an end node has no body",
                    b.span,
                    "unexpected body",
                )
                .with_help("write `end(\"id\")` or `end(\"id\", ExitStatus.FAILURE)`");
                self.emit(d);
            }
            return Some((Node::End(EndNode { id, status }), o));
        }
        let body: &[Stmt<'_>] = match &c.block {
            Some(b) => &b.stmts,
            None => {
                let d = Diagnostic::new(
                    codes::E0101,
                    format!("`{}(\"{id}\")` needs a body", c.callee.name),
                    stmt.span,
                    "missing `{ … }`",
                )
                .with_help(format!("write `{}`", spec.syntax));
                self.emit(d);
                &[]
            }
        };
        // A reused scratch sink: the rules are moved out into exactly-sized vectors (a growing
        // vector per node over-allocates its 88/128-byte elements up to 4x).
        let mut sink = std::mem::take(&mut self.rule_sink);
        sink.rules.clear();
        sink.origins.clear();
        let node = match kind {
            BlockKind::StandardNode => self.standard(&id, body, &mut o, &mut sink),
            BlockKind::ParallelNode => self.parallel(&id, body, &mut o, &mut sink),
            BlockKind::ForkNode => self.fork(&id, body, &mut o, &mut sink),
            BlockKind::JoinNode => self.join(&id, body, &mut o, &mut sink),
            BlockKind::GenericNode => self.generic(&id, body, &mut o, &mut sink),
            BlockKind::ActionNode => self.action(&id, body, &mut o, &mut sink),
            BlockKind::WaitNode | BlockKind::SignalNode => {
                self.wait(kind, &id, body, &mut o, &mut sink)
            }
            BlockKind::MapNode => self.map(&id, body, &mut o, &mut sink),
            _ => self.sub_workflow(&id, body, &mut o, &mut sink),
        };
        let mut node = node;
        if let Some((_, span)) = &self.pending_compensation {
            o.props.insert("compensation", *span);
        }
        let (timeout, backoff, deadline) = std::mem::take(&mut self.pending_timing_spans);
        if let Some(span) = timeout {
            o.props.insert("timeout", span);
        }
        if let Some(span) = deadline {
            o.props.insert("deadline", span);
        }
        if let Some(span) = backoff {
            o.props.insert("backoff", span);
        }
        if let Some(rules) = node.transition_rules_mut() {
            *rules = sink.rules.drain(..).collect();
        }
        o.rules = sink.origins.drain(..).collect();
        o.placeholders.shrink_to_fit();
        self.rule_sink = sink;
        Some((node, o))
    }

    /// Transitions, `onScore` and `onCondition`, shared by every node kind. True when handled.
    pub(super) fn node_transition(
        &mut self,
        kind: BlockKind,
        spec: &StatementSpec,
        shape: Shape<'_, '_>,
        stmt: &Stmt<'_>,
        sink: &mut RuleSink,
    ) -> bool {
        match (spec.kind, shape) {
            (StatementKind::Transition(forms), Shape::Chain { head, links }) => {
                self.transition(forms, head, links, stmt.span, kind, sink);
                true
            }
            (StatementKind::Transition(forms), Shape::Name(head)) => {
                self.transition(forms, head, &[], stmt.span, kind, sink);
                true
            }
            (_, Shape::Call(c)) if spec.name == "onScore" => {
                self.on_score(c, stmt.span, sink);
                true
            }
            (_, Shape::Call(c)) if spec.name == "onCondition" => {
                self.on_condition(c, sink);
                true
            }
            _ => false,
        }
    }

    /// Walks the statements of a node body in source order: each is checked against the schema
    /// of `kind` ([`Lowerer::accept`]); transitions, `onScore` and `onCondition` are lowered into
    /// `sink`; every other accepted statement is handed to `each` (the kind's own statements).
    fn node_body<'t, 's>(
        &mut self,
        kind: BlockKind,
        body: &'t [Stmt<'s>],
        sink: &mut RuleSink,
        mut each: impl FnMut(&mut Self, &'static StatementSpec, Shape<'t, 's>, &'t Stmt<'s>),
    ) {
        let mut seen = Seen::new();
        for stmt in body {
            let Some((spec, shape)) = self.accept(kind, stmt, &mut seen) else {
                continue;
            };
            if self.node_transition(kind, spec, shape, stmt, sink) {
                continue;
            }
            // A join's `timeout` is upstream's own field, lowered by the join; an awaitSignal's
            // is how long it waits (docs/language.md, *Timers and signals*).
            if spec.name == "timeout"
                && !matches!(kind, BlockKind::JoinNode | BlockKind::SignalNode)
            {
                if let Shape::Assign { value, .. } = shape {
                    self.node_timeout(value);
                }
                continue;
            }
            if spec.name == "compensation" {
                if let Shape::Assign { value, .. } = shape
                    && let Some(name) = self.string(value, &Quoted("compensation"))
                {
                    self.pending_compensation = Some((name, value.span));
                }
                continue;
            }
            each(self, spec, shape, stmt);
        }
    }

    /// `timeout = 30.seconds` of any node but a join (docs/language.md, *Timeouts and
    /// backoff*).
    fn node_timeout(&mut self, value: &hensu_syntax::ast::Expr<'_>) {
        self.pending_timing_spans.0 = Some(value.span);
        if let Some(ms) = self.duration(value, &"`timeout`") {
            self.pending_timing.timeout_ms = self.positive_duration(ms, value.span, "timeout");
        }
    }

    /// E0113: a timeout or backoff of zero or less. `None` then, so nothing waits on it.
    pub(crate) fn positive_duration(&mut self, ms: i64, span: Span, what: &str) -> Option<u64> {
        if ms > 0 {
            return u64::try_from(ms).ok();
        }
        let d = Diagnostic::new(
            codes::E0113,
            format!("{what} of {ms} ms is not positive"),
            span,
            "must be more than zero",
        )
        .with_help(match what {
            "backoff" => {
                "write a positive duration such as `2.seconds`, or leave `backoff` out to retry at once"
            }
            "timeout" => {
                "write a positive duration such as `30.seconds`, or leave `timeout` out for no limit"
            }
            "deadline" => {
                "write a positive duration such as `48.hours`, or leave `deadline` out for no limit"
            }
            _ => "write a positive duration such as `30.minutes`",
        });
        self.emit(d);
        None
    }

    fn missing(&mut self, what: String, span: Span, help: &str) {
        self.emit(Diagnostic::new(codes::E0105, what, span, "declared here").with_help(help));
    }

    fn empty(&mut self, what: String, span: Span, help: &str) {
        self.emit(Diagnostic::new(codes::E0109, what, span, "declared here").with_help(help));
    }

    /// Names of a `writes(…)`-like call, with spans.
    fn names(&mut self, c: &Call<'_>, spec: &StatementSpec, lists: bool) -> Vec<(String, Span)> {
        let Some(args) = self.call_args(c, 0, None, spec.syntax) else {
            return Vec::new();
        };
        self.string_args(&args, &Quoted(spec.name), lists)
    }
}
