//! `action("id") { … }`: `send` and `execute` actions.

use hensu_ir::{Action, ActionNode, Node};
use hensu_syntax::ast::{ExprKind, Stmt};
use indexmap::IndexMap;

use crate::lower::transitions::RuleSink;
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::{BlockKind, StatementKind, StatementSpec};

impl Lowerer<'_> {
    pub(super) fn action(
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
            |this, spec, shape, stmt| match (spec.name, shape) {
                // docs/language.md, *Action node*: the actions' result into state variables.
                ("writes", Shape::Call(c)) => {
                    let names = this.names(c, spec, false);
                    o.writes = names.iter().map(|(_, s)| *s).collect();
                    n.writes = names.into_iter().map(|(s, _)| s).collect();
                }
                (_, shape) => this.action_stmt(spec, shape, stmt, &mut n.actions, o),
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

    /// One `send(…)` / `execute(…)` statement of an action node or a compensation: the action
    /// is appended to `actions`, its spans and payload placeholders to `o`.
    pub(crate) fn action_stmt(
        &mut self,
        spec: &StatementSpec,
        shape: Shape<'_, '_>,
        stmt: &Stmt<'_>,
        actions: &mut Vec<Action>,
        o: &mut NodeOrigin,
    ) {
        let Shape::Call(c) = shape else { return };
        let StatementKind::Call { min, max } = spec.kind else {
            return;
        };
        let Some(args) = self.call_args(c, min, max, spec.syntax) else {
            return;
        };
        let Some(first) = args.first() else { return };
        let what = Quoted(spec.name);
        let Some(target) = self.string(first, &what) else {
            return;
        };
        match spec.name {
            "execute" => {
                actions.push(Action::Execute { command_id: target });
                o.actions.push(stmt.span);
                o.action_ids.push(first.span);
            }
            "send" => {
                let mut payload = IndexMap::new();
                if let Some(p) = args.get(1) {
                    match &p.kind {
                        ExprKind::Call(pc) if pc.callee.name == "mapOf" => {
                            for arg in pc.args.as_ref().map(|a| &a.items[..]).unwrap_or(&[]) {
                                self.no_named_arg(arg);
                                if let ExprKind::Chain { links, .. } = &arg.value.kind
                                    && let Some(v) = links.first().and_then(|l| l.arg.as_ref())
                                {
                                    o.placeholders.extend(Self::string_placeholders(v));
                                }
                                if let Some((k, _, v)) = self.pair(&arg.value, &"a payload entry") {
                                    payload.insert(k, v);
                                }
                            }
                        }
                        _ => {
                            self.wrong_type(p, "a payload `mapOf(\"key\" to value, …)`", &"`send`")
                        }
                    }
                }
                actions.push(Action::Send {
                    handler_id: target,
                    payload,
                    raw_payload: false,
                });
                o.actions.push(stmt.span);
                o.action_ids.push(first.span);
            }
            _ => {}
        }
    }
}
