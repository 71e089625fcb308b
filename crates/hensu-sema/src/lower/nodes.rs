//! The `graph { }` block: `start at`, the eight node kinds and their bodies.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{
    Action, ActionNode, Branch, ConsensusConfig, ConsensusStrategy, EndNode, ExitStatus, ForkNode,
    GenericNode, JoinNode, MergeStrategy, Node, ParallelNode, ReviewConfig, ReviewMode,
    StandardNode, SubWorkflowNode,
};
use hensu_syntax::ast::{Block, Call, ExprKind, Ident, Link, Stmt};
use indexmap::IndexMap;
use serde_json::Value;

use super::transitions::RuleSink;
use super::values::Quoted;
use super::{Lowerer, Seen, Shape};
use crate::origins::{BranchOrigin, NodeOrigin};
use crate::schema::{BlockKind, EnumType, StatementKind, StatementSpec};

/// The lowered graph block.
#[derive(Default)]
pub(crate) struct Graph {
    pub nodes: IndexMap<String, Node>,
    pub start: Option<String>,
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
        "end" => BlockKind::EndNode,
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
        // The statements detached from the tree by `lower_owned`: each is dropped as soon as it
        // is lowered, so the tree shrinks while the IR grows.
        let owned = detached
            .iter()
            .position(|(span, _)| *span == block.span)
            .map(|i| detached.swap_remove(i).1);
        let count = owned.as_ref().map_or(block.stmts.len(), Vec::len);
        // At most one node per statement: sized once instead of doubling (which leaves up to
        // half of these large tables unused at the peak).
        graph.nodes.reserve(count);
        self.origins.nodes.reserve(count);
        let mut seen = Seen::new();
        match owned {
            Some(stmts) => {
                for stmt in stmts {
                    self.graph_stmt(&mut graph, &mut seen, &stmt);
                }
            }
            None => {
                for stmt in &block.stmts {
                    self.graph_stmt(&mut graph, &mut seen, stmt);
                }
            }
        }
        graph
    }

    fn graph_stmt(&mut self, graph: &mut Graph, seen: &mut Seen, stmt: &Stmt<'_>) {
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
            (_, Shape::Call(c)) => {
                let Some(kind) = node_kind(spec.name) else {
                    return;
                };
                let Some((node, origin)) = self.node(kind, spec, c, stmt) else {
                    return;
                };
                let id = node.id().to_string();
                if let Some(first) = self.origins.nodes.get(&id) {
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
            _ => self.sub_workflow(&id, body, &mut o, &mut sink),
        };
        let mut node = node;
        if let Some(rules) = node.transition_rules_mut() {
            *rules = sink.rules.drain(..).collect();
        }
        o.rules = sink.origins.drain(..).collect();
        o.placeholders.shrink_to_fit();
        self.rule_sink = sink;
        Some((node, o))
    }

    /// Transitions, `onScore` and `onCondition`, shared by every node kind. True when handled.
    fn node_transition(
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
            each(self, spec, shape, stmt);
        }
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

    fn standard(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = StandardNode {
            id: id.to_string(),
            ..StandardNode::default()
        };
        self.node_body(
            BlockKind::StandardNode,
            body,
            sink,
            |this, spec, shape, stmt| {
                let what = Quoted(spec.name);
                match (spec.name, shape) {
                    ("agent", Shape::Assign { value, .. }) => {
                        o.props.insert("agent", value.span);
                        if let Ok(v) = this.opt_string(value, &what) {
                            n.agent_id = v;
                        }
                    }
                    ("prompt", Shape::Assign { value, .. }) => {
                        o.props.insert("prompt", value.span);
                        this.assign_prompt(value, &what, &mut n.prompt, &mut o.placeholders);
                    }
                    ("rubric", Shape::Assign { value, .. }) => {
                        o.props.insert("rubric", value.span);
                        n.rubric = this.assign_rubric(value, id, &what);
                    }
                    ("writes", Shape::Call(c)) => {
                        let names = this.names(c, spec, false);
                        o.writes = names.iter().map(|(_, s)| *s).collect();
                        n.writes = names.into_iter().map(|(s, _)| s).collect();
                    }
                    ("review", Shape::Call(c)) => {
                        o.review = Some(stmt.span);
                        if let Some(r) = this.review(c, spec) {
                            n.review_config = Some(r);
                        }
                    }
                    _ => {}
                }
            },
        );
        Node::Standard(n)
    }

    fn review(&mut self, c: &Call<'_>, spec: &StatementSpec) -> Option<ReviewConfig> {
        let has_args = c.args.as_ref().is_some_and(|a| !a.items.is_empty());
        match (&c.block, has_args) {
            (Some(b), false) => {
                let mut r = ReviewConfig {
                    mode: ReviewMode::Required,
                    allow_backtrack: false,
                    allow_edit: false,
                };
                let mut seen = Seen::new();
                for s in &b.stmts {
                    let Some((spec, Shape::Assign { value, .. })) =
                        self.accept(BlockKind::Review, s, &mut seen)
                    else {
                        continue;
                    };
                    match spec.name {
                        "mode" => {
                            if let Some(m) = self
                                .enum_constant(value, EnumType::ReviewMode, &"`mode`")
                                .and_then(ReviewMode::parse)
                            {
                                r.mode = m;
                            }
                        }
                        "allowBacktrack" => {
                            r.allow_backtrack = self
                                .boolean(value, &"`allowBacktrack`")
                                .unwrap_or(r.allow_backtrack)
                        }
                        "allowEdit" => {
                            r.allow_edit =
                                self.boolean(value, &"`allowEdit`").unwrap_or(r.allow_edit)
                        }
                        _ => {}
                    }
                }
                Some(r)
            }
            (Some(b), true) => {
                let d = Diagnostic::new(codes::E0101, "`review` takes either a mode or a block, not both", b.span, "unexpected block")
                    .with_help("write `review(ReviewMode.REQUIRED)` or `review { mode = …; allowBacktrack = … }`");
                self.emit(d);
                None
            }
            (None, _) => {
                let args = self.call_args(c, 1, Some(1), spec.syntax)?;
                let mode = self
                    .enum_constant(args.first()?, EnumType::ReviewMode, &"`review`")
                    .and_then(ReviewMode::parse)?;
                Some(ReviewConfig {
                    mode,
                    allow_backtrack: false,
                    allow_edit: false,
                })
            }
        }
    }

    fn parallel(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = ParallelNode {
            id: id.to_string(),
            ..ParallelNode::default()
        };
        self.node_body(
            BlockKind::ParallelNode,
            body,
            sink,
            |this, spec, shape, stmt| match (spec.name, shape) {
                ("branch", Shape::Call(c)) => {
                    let Some(args) = this.call_args(c, 1, Some(1), spec.syntax) else {
                        return;
                    };
                    let Some(id_e) = args.first() else { return };
                    let Some((bid, bid_span)) = this.id_arg(id_e, &"branch id") else {
                        return;
                    };
                    let (branch, bo) = this.branch(&bid, bid_span, stmt.span, c.block.as_deref());
                    if let Some(i) = n.branches.iter().position(|b| b.id == bid) {
                        let first = o.branches.get(i).map(|b| b.id).unwrap_or(bid_span);
                        let d = Diagnostic::new(
                            codes::E0206,
                            format!("branch `{bid}` is declared twice in parallel node `{id}`"),
                            bid_span,
                            "declared again here",
                        )
                        .with_label(first, "first declared here")
                        .with_help("rename one of the branches; the first one is kept");
                        this.emit(d);
                        return;
                    }
                    n.branches.push(branch);
                    o.branches.push(bo);
                }
                ("consensus", Shape::Call(c)) => {
                    o.consensus = Some(stmt.span);
                    o.consensus_props.clear();
                    n.consensus_config = Some(this.consensus(c.block.as_deref(), o));
                }
                _ => {}
            },
        );
        if n.branches.is_empty() {
            self.empty(
                format!("parallel node `{id}` has no branches"),
                o.id,
                "add at least one `branch(\"id\") { agent = \"…\" }`",
            );
        }
        Node::Parallel(n)
    }

    fn branch(
        &mut self,
        id: &str,
        id_span: Span,
        decl: Span,
        block: Option<&Block<'_>>,
    ) -> (Branch, BranchOrigin) {
        let mut b = Branch::new(id, "");
        let mut o = BranchOrigin {
            id: id_span,
            decl,
            ..BranchOrigin::default()
        };
        let mut has_agent = false;
        let mut seen = Seen::new();
        for stmt in block.map(|b| b.stmts.as_slice()).unwrap_or(&[]) {
            let Some((spec, shape)) = self.accept(BlockKind::Branch, stmt, &mut seen) else {
                continue;
            };
            let what = Quoted(spec.name);
            match (spec.name, shape) {
                ("agent", Shape::Assign { value, .. }) => {
                    o.props.insert("agent", value.span);
                    if let Some(v) = self.string(value, &what) {
                        has_agent = !v.trim().is_empty();
                        b.agent_id = v;
                    }
                }
                ("prompt", Shape::Assign { value, .. }) => {
                    o.props.insert("prompt", value.span);
                    self.assign_prompt(value, &what, &mut b.prompt, &mut o.placeholders);
                }
                ("rubric", Shape::Assign { value, .. }) => {
                    o.props.insert("rubric", value.span);
                    b.rubric = self.assign_rubric(value, id, &what);
                }
                ("weight", Shape::Assign { value, .. }) => {
                    o.props.insert("weight", value.span);
                    if let Some(w) = self.double(value, &what) {
                        if w <= 0.0 || w.is_nan() {
                            self.out_of_range(
                                value.span,
                                format!(
                                    "branch weight {} is out of range",
                                    hensu_ir::java_double_to_string(w)
                                ),
                                "must be greater than 0",
                            );
                        }
                        b.weight = w;
                    }
                }
                ("yields", Shape::Call(c)) => {
                    for (name, span) in self.names(c, spec, false) {
                        b.yields.push(name);
                        o.yields.push(span);
                    }
                }
                _ => {}
            }
        }
        if !has_agent && !o.props.contains_key("agent") {
            self.missing(
                format!("branch `{id}` has no `agent`"),
                id_span,
                "add `agent = \"agentId\"` to the branch",
            );
        } else if !has_agent
            && let Some(span) = o.props.get("agent").copied()
            && b.agent_id.trim().is_empty()
        {
            self.emit(
                Diagnostic::new(
                    codes::E0105,
                    format!("branch `{id}` has a blank `agent`"),
                    span,
                    "blank",
                )
                .with_help("name the agent of the branch"),
            );
        }
        (b, o)
    }

    fn consensus(&mut self, block: Option<&Block<'_>>, o: &mut NodeOrigin) -> ConsensusConfig {
        let mut c = ConsensusConfig::default();
        let mut seen = Seen::new();
        for stmt in block.map(|b| b.stmts.as_slice()).unwrap_or(&[]) {
            let Some((spec, Shape::Assign { value, .. })) =
                self.accept(BlockKind::Consensus, stmt, &mut seen)
            else {
                continue;
            };
            o.consensus_props.insert(spec.name, value.span);
            match spec.name {
                "strategy" => {
                    if let Some(s) = self
                        .enum_constant(value, EnumType::ConsensusStrategy, &"`strategy`")
                        .and_then(ConsensusStrategy::parse)
                    {
                        c.strategy = s;
                    }
                }
                "judge" => {
                    if let Ok(v) = self.opt_string(value, &"`judge`") {
                        c.judge_agent_id = v;
                    }
                }
                "threshold" => {
                    if matches!(value.kind, ExprKind::Null) {
                        c.threshold = None;
                    } else if let Some(t) = self.double(value, &"`threshold`") {
                        if !(t > 0.0 && t <= 1.0) {
                            self.out_of_range(
                                value.span,
                                format!(
                                    "consensus threshold {} is out of range",
                                    hensu_ir::java_double_to_string(t)
                                ),
                                "must be in (0, 1]",
                            );
                        }
                        c.threshold = Some(t);
                    }
                }
                _ => {}
            }
        }
        c
    }

    fn fork(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = ForkNode {
            id: id.to_string(),
            ..ForkNode::default()
        };
        self.node_body(
            BlockKind::ForkNode,
            body,
            sink,
            |this, spec, shape, _| match (spec.name, shape) {
                ("targets", Shape::Call(c)) => {
                    for (t, span) in this.names(c, spec, true) {
                        n.targets.push(t);
                        o.targets.push(span);
                    }
                }
                ("waitAll", Shape::Assign { value, .. }) => {
                    o.props.insert("waitAll", value.span);
                    n.wait_for_all = this.boolean(value, &"`waitAll`").unwrap_or(n.wait_for_all);
                }
                _ => {}
            },
        );
        if n.targets.is_empty() {
            self.empty(
                format!("fork `{id}` has no targets"),
                o.id,
                "add `targets(\"a\", \"b\")`",
            );
        }
        Node::Fork(n)
    }

    fn join(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = JoinNode {
            id: id.to_string(),
            ..JoinNode::default()
        };
        self.node_body(
            BlockKind::JoinNode,
            body,
            sink,
            |this, spec, shape, _| match (spec.name, shape) {
                ("await", Shape::Call(c)) => {
                    for (t, span) in this.names(c, spec, true) {
                        n.await_targets.push(t);
                        o.awaits.push(span);
                    }
                }
                ("writes", Shape::Call(c)) => {
                    for (t, span) in this.names(c, spec, false) {
                        n.writes.push(t);
                        o.writes.push(span);
                    }
                }
                ("exports", Shape::Call(c)) => {
                    for (t, span) in this.names(c, spec, false) {
                        n.exports.push(t);
                        o.exports.push(span);
                    }
                }
                ("mergeStrategy", Shape::Assign { value, .. }) => {
                    o.props.insert("mergeStrategy", value.span);
                    if let Some(m) = this
                        .enum_constant(value, EnumType::MergeStrategy, &"`mergeStrategy`")
                        .and_then(MergeStrategy::parse)
                    {
                        n.merge_strategy = m;
                    }
                }
                ("timeout", Shape::Assign { value, .. }) => {
                    o.props.insert("timeout", value.span);
                    if let Some(t) = this.long(value, &"`timeout`") {
                        if t < 0 {
                            this.out_of_range(
                                value.span,
                                format!("join timeout {t} is negative"),
                                "must be 0 (none) or more milliseconds",
                            );
                        }
                        n.timeout_ms = t;
                    }
                }
                ("failOnError", Shape::Assign { value, .. }) => {
                    o.props.insert("failOnError", value.span);
                    n.fail_on_any_error = this
                        .boolean(value, &"`failOnError`")
                        .unwrap_or(n.fail_on_any_error);
                }
                _ => {}
            },
        );
        if n.await_targets.is_empty() {
            self.empty(
                format!("join `{id}` awaits no fork"),
                o.id,
                "add `await(\"forkId\")`",
            );
        }
        if n.writes.is_empty() {
            self.empty(
                format!("join `{id}` declares no `writes`"),
                o.id,
                "add `writes(\"merged\")`: the variable receiving the merged result",
            );
        }
        Node::Join(n)
    }

    fn generic(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = GenericNode {
            id: id.to_string(),
            ..GenericNode::default()
        };
        let mut keys: IndexMap<String, Span> = IndexMap::new();
        self.node_body(
            BlockKind::GenericNode,
            body,
            sink,
            |this, spec, shape, _| match (spec.name, shape) {
                ("executorType", Shape::Assign { value, .. }) => {
                    o.props.insert("executorType", value.span);
                    if let Some(v) = this.string(value, &"`executorType`") {
                        n.executor_type = v;
                    }
                }
                ("rubric", Shape::Assign { value, .. }) => {
                    o.props.insert("rubric", value.span);
                    n.rubric = if matches!(value.kind, ExprKind::Null) {
                        None
                    } else {
                        this.rubric(value, id, &"`rubric`")
                    };
                }
                ("config", Shape::Call(c)) => {
                    for s in c
                        .block
                        .as_deref()
                        .map(|b| b.stmts.as_slice())
                        .unwrap_or(&[])
                    {
                        if let Some((k, span, v)) = this.config_entry(s) {
                            if let Some(first) = keys.get(&k) {
                                let d = Diagnostic::new(
                                    codes::E0104,
                                    format!("config key `{k}` is given twice"),
                                    span,
                                    "given again here",
                                )
                                .with_label(*first, "first given here")
                                .with_help(
                                    "upstream silently keeps the last value; remove one of them",
                                );
                                this.emit(d);
                            } else {
                                keys.insert(k.clone(), span);
                            }
                            n.config.insert(k, v);
                        }
                    }
                }
                _ => {}
            },
        );
        match o.props.get("executorType").copied() {
            None => self.missing(
                format!("generic node `{id}` has no `executorType`"),
                o.id,
                "add `executorType = \"handler-id\"`",
            ),
            Some(span) if n.executor_type.trim().is_empty() => {
                self.emit(
                    Diagnostic::new(
                        codes::E0105,
                        format!("generic node `{id}` has a blank `executorType`"),
                        span,
                        "blank",
                    )
                    .with_help("name the registered handler"),
                );
            }
            Some(_) => {}
        }
        Node::Generic(n)
    }

    /// One `"key" to value` statement of a generic node's `config { }`.
    fn config_entry(&mut self, stmt: &Stmt<'_>) -> Option<(String, Span, Value)> {
        match Shape::of(stmt) {
            Shape::Error => None,
            Shape::Entry { key, links } if links.len() == 1 && links[0].word.name == "to" => {
                let k = self.string(key, &"a config key")?;
                let Some(arg) = &links[0].arg else {
                    let d = Diagnostic::new(
                        codes::E0012,
                        format!("incomplete entry: `\"{k}\" to` needs a value"),
                        links[0].word.span,
                        "value missing",
                    )
                    .with_help("write `\"key\" to value`");
                    self.emit(d);
                    return None;
                };
                let v = self.json_value(arg, &format_args!("config `{k}`"))?;
                Some((k, key.span, v))
            }
            shape => {
                if let Some(name) = shape.name()
                    && self.removed(name, stmt.span)
                {
                    return None;
                }
                let d = Diagnostic::new(
                    codes::E0101,
                    "expected a config entry `\"key\" to value`",
                    stmt.span,
                    "not a config entry",
                )
                .with_help(
                    "a generic node's `config { }` holds entries like `\"field\" to \"input\"`",
                );
                self.emit(d);
                None
            }
        }
    }

    fn action(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = ActionNode {
            id: id.to_string(),
            ..ActionNode::default()
        };
        self.node_body(
            BlockKind::ActionNode,
            body,
            sink,
            |this, spec, shape, stmt| {
                let Shape::Call(c) = shape else { return };
                let StatementKind::Call { min, max } = spec.kind else {
                    return;
                };
                let Some(args) = this.call_args(c, min, max, spec.syntax) else {
                    return;
                };
                let Some(first) = args.first() else { return };
                let what = Quoted(spec.name);
                let Some(target) = this.string(first, &what) else {
                    return;
                };
                match spec.name {
                    "execute" => {
                        n.actions.push(Action::Execute { command_id: target });
                        o.actions.push(stmt.span);
                    }
                    "send" => {
                        let mut payload = IndexMap::new();
                        if let Some(p) = args.get(1) {
                            match &p.kind {
                                ExprKind::Call(pc) if pc.callee.name == "mapOf" => {
                                    for arg in pc.args.as_ref().map(|a| &a.items[..]).unwrap_or(&[])
                                    {
                                        this.no_named_arg(arg);
                                        if let ExprKind::Chain { links, .. } = &arg.value.kind
                                            && let Some(v) =
                                                links.first().and_then(|l| l.arg.as_ref())
                                        {
                                            o.placeholders.extend(Self::string_placeholders(v));
                                        }
                                        if let Some((k, _, v)) =
                                            this.pair(&arg.value, &"a payload entry")
                                        {
                                            payload.insert(k, v);
                                        }
                                    }
                                }
                                _ => this.wrong_type(
                                    p,
                                    "a payload `mapOf(\"key\" to value, …)`",
                                    &"`send`",
                                ),
                            }
                        }
                        n.actions.push(Action::Send {
                            handler_id: target,
                            payload,
                            raw_payload: false,
                        });
                        o.actions.push(stmt.span);
                    }
                    _ => {}
                }
            },
        );
        if n.actions.is_empty() {
            self.empty(
                format!("action node `{id}` has no actions"),
                o.id,
                "add `send(\"handler\")` or `execute(\"commandId\")`",
            );
        }
        Node::Action(n)
    }

    fn sub_workflow(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = SubWorkflowNode {
            id: id.to_string(),
            ..SubWorkflowNode::default()
        };
        self.node_body(
            BlockKind::SubWorkflowNode,
            body,
            sink,
            |this, spec, shape, _| match (spec.name, shape) {
                ("target", Shape::Assign { value, .. }) => {
                    o.props.insert("target", value.span);
                    if let Some(v) = this.string(value, &"`target`") {
                        n.workflow_id = v;
                    }
                }
                ("targetVersion", Shape::Assign { value, .. }) => {
                    o.props.insert("targetVersion", value.span);
                    if let Ok(v) = this.opt_string(value, &"`targetVersion`") {
                        n.target_version = v;
                    }
                }
                ("imports", Shape::Call(c)) => {
                    let names = this.names(c, spec, false);
                    n.input_mapping.clear();
                    o.imports.clear();
                    o.repeated_names.retain(|(kind, _, _)| kind != "imports");
                    for (name, span) in names {
                        if n.input_mapping.contains_key(&name) {
                            o.repeated_names.push(("imports".to_string(), name, span));
                            continue;
                        }
                        n.input_mapping.insert(name.clone(), name);
                        o.imports.push(span);
                    }
                }
                ("writes", Shape::Call(c)) => {
                    let names = this.names(c, spec, false);
                    n.output_mapping.clear();
                    o.writes.clear();
                    o.repeated_names.retain(|(kind, _, _)| kind != "writes");
                    for (name, span) in names {
                        if n.output_mapping.contains_key(&name) {
                            o.repeated_names.push(("writes".to_string(), name, span));
                            continue;
                        }
                        n.output_mapping.insert(name.clone(), name);
                        o.writes.push(span);
                    }
                }
                _ => {}
            },
        );
        match o.props.get("target").copied() {
            None => self.missing(
                format!("subWorkflow node `{id}` has no `target`"),
                o.id,
                "add `target = \"workflow-id\"` (the id of the child workflow)",
            ),
            Some(span) if n.workflow_id.trim().is_empty() => {
                self.emit(
                    Diagnostic::new(
                        codes::E0105,
                        format!("subWorkflow node `{id}` has a blank `target`"),
                        span,
                        "blank",
                    )
                    .with_help("name the child workflow id"),
                );
            }
            Some(_) => {}
        }
        Node::SubWorkflow(n)
    }
}
