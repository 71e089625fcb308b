//! `fork("id") { … }`: the targets started concurrently.

use hensu_ir::{ForkNode, Node};
use hensu_syntax::ast::Stmt;

use crate::lower::transitions::RuleSink;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::BlockKind;

impl Lowerer<'_> {
    pub(super) fn fork(
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
}
