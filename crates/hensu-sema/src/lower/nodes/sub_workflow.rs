//! `subWorkflow("id") { … }`: the child workflow, its imports and writes.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, SubWorkflowNode};
use hensu_syntax::ast::Stmt;

use crate::lower::transitions::RuleSink;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::BlockKind;

impl Lowerer<'_> {
    pub(super) fn sub_workflow(
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
