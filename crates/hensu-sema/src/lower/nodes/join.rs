//! `join("id") { … }`: the forks awaited and how their results merge.

use hensu_ir::{JoinNode, MergeStrategy, Node};
use hensu_syntax::ast::Stmt;

use crate::lower::transitions::RuleSink;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::{BlockKind, EnumType};

impl Lowerer<'_> {
    pub(super) fn join(
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
                    // `30.seconds` or upstream's Long of milliseconds.
                    let t = match value.kind {
                        hensu_syntax::ast::ExprKind::Duration(ms) => Some(ms),
                        _ => this.long(value, &"`timeout`"),
                    };
                    if let Some(t) = t {
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
}
