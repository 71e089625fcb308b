//! `routes("node") { … }` in the graph of an extending workflow (docs/language.md, *Workflow
//! extension*): the transitions are lowered like a node's, but kept aside in
//! [`crate::extend::Routes`]; the merge puts them on the inherited node.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_syntax::ast::{Call, Stmt};

use super::{Lowerer, Seen};
use crate::extend::Routes;
use crate::schema::{BlockKind, StatementSpec};

impl Lowerer<'_> {
    pub(super) fn routes(&mut self, spec: &StatementSpec, c: &Call<'_>, stmt: &Stmt<'_>) {
        let Some(args) = self.call_args(c, 1, Some(1), spec.syntax) else {
            return;
        };
        let Some(id_e) = args.first() else { return };
        let Some((node, node_span)) = self.id_arg(id_e, &"node id") else {
            return;
        };
        let mut routes = Routes {
            node,
            node_span,
            decl: stmt.span,
            ..Routes::default()
        };
        let Some(block) = &c.block else {
            let d = Diagnostic::new(
                codes::E0101,
                format!("`routes(\"{}\")` needs a body", routes.node),
                stmt.span,
                "missing `{ … }`",
            )
            .with_help(format!("write `{}`", spec.syntax));
            self.emit(d);
            return;
        };
        let mut sink = std::mem::take(&mut self.rule_sink);
        sink.rules.clear();
        sink.origins.clear();
        let mut seen = Seen::new();
        for s in &block.stmts {
            let Some((spec, shape)) = self.accept(BlockKind::Routes, s, &mut seen) else {
                continue;
            };
            let before = sink.rules.len();
            self.node_transition(BlockKind::Routes, spec, shape, s, &mut sink);
            let trigger = s.span;
            routes
                .triggers
                .extend((before..sink.rules.len()).map(|_| (spec.name, trigger)));
        }
        routes.rules = sink.rules.drain(..).collect();
        // An `onFailure retry … backoff D` of the block belongs to the routed node.
        routes.backoff_ms = std::mem::take(&mut self.pending_timing).backoff_ms;
        self.pending_timing_spans = (None, None, None);
        routes.origins = sink.origins.drain(..).collect();
        self.rule_sink = sink;
        self.extension.routes.push(routes);
    }

    /// E0509 for each `routes` of a workflow that extends nothing: there is no inherited node
    /// whose transitions it could replace.
    pub(super) fn routes_without_extends(&mut self) {
        let found: Vec<_> = self
            .extension
            .routes
            .iter()
            .map(|r| (r.node.clone(), r.node_span))
            .collect();
        for (node, span) in found {
            let d = Diagnostic::new(
                codes::E0509,
                format!("`routes(\"{node}\")` in a workflow that extends no other"),
                span,
                "nothing is inherited here",
            )
            .with_help(format!(
                "write the transitions inside `node(\"{node}\") {{ … }}`, or add `extends(\"base-id\")` to the workflow"
            ));
            self.emit(d);
        }
    }
}
