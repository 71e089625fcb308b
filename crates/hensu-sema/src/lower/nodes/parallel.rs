//! `parallel("id") { … }`: branches and the consensus block.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Branch, ConsensusConfig, ConsensusStrategy, Node, ParallelNode};
use hensu_syntax::ast::{Block, ExprKind, Stmt};

use crate::lower::transitions::RuleSink;
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Seen, Shape};
use crate::origins::{BranchOrigin, NodeOrigin};
use crate::schema::{BlockKind, EnumType};

impl Lowerer<'_> {
    pub(super) fn parallel(
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
                ("after", Shape::Call(c)) => {
                    for (name, span) in self.names(c, spec, false) {
                        b.after.push(name);
                        o.after.push(span);
                    }
                }
                ("runIf", Shape::Call(c)) => {
                    if let Some((name, span)) = self.names(c, spec, false).into_iter().next() {
                        b.run_if = Some(name);
                        o.run_if = Some(span);
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
}
