//! `map("id") { … }`: an agent run once per item of a list variable (docs/language.md, *Map
//! over a list*). What the checks need of its values (a LIST_STRING `over` and `writes`, a
//! body, `maxParallel` ≥ 1) is checked on the IR in `check/map.rs`, so JSON input gets the
//! same checks; only a missing `over` is reported here (E0120), as the JSON reader does.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{ItemFailure, MapNode, Node};
use hensu_syntax::ast::Stmt;

use crate::lower::transitions::RuleSink;
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::{BlockKind, EnumType};

impl Lowerer<'_> {
    pub(super) fn map(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
        sink: &mut RuleSink,
    ) -> Node {
        let mut n = MapNode {
            id: id.to_string(),
            ..MapNode::default()
        };
        self.node_body(BlockKind::MapNode, body, sink, |this, spec, shape, _| {
            let what = Quoted(spec.name);
            match (spec.name, shape) {
                ("over", Shape::Assign { value, .. }) => {
                    o.props.insert("over", value.span);
                    if let Some(v) = this.string(value, &what) {
                        n.over = v;
                    }
                }
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
                ("target", Shape::Assign { value, .. }) => {
                    o.props.insert("target", value.span);
                    if let Ok(v) = this.opt_string(value, &what) {
                        n.target = v;
                    }
                }
                ("result", Shape::Assign { value, .. }) => {
                    o.props.insert("result", value.span);
                    if let Ok(v) = this.opt_string(value, &what) {
                        n.result = v;
                    }
                }
                ("maxParallel", Shape::Assign { value, .. }) => {
                    o.props.insert("maxParallel", value.span);
                    if let Some(v) = this.int(value, &what) {
                        n.max_parallel = v;
                    }
                }
                ("maxItems", Shape::Assign { value, .. }) => {
                    o.props.insert("maxItems", value.span);
                    n.max_items = this.int(value, &what);
                }
                ("onItemFailure", Shape::Assign { value, .. }) => {
                    o.props.insert("onItemFailure", value.span);
                    if let Some(p) = this
                        .enum_constant(value, EnumType::ItemFailure, &what)
                        .and_then(ItemFailure::parse)
                    {
                        n.on_item_failure = p;
                    }
                }
                ("writes", Shape::Call(c)) => {
                    let names = this.names(c, spec, false);
                    o.writes = names.iter().map(|(_, s)| *s).collect();
                    n.writes = names.into_iter().map(|(s, _)| s).collect();
                }
                _ => {}
            }
        });
        if !o.props.contains_key("over") {
            let d = Diagnostic::new(
                codes::E0120,
                format!("map node `{id}` has no `over`"),
                o.id,
                "no list to run over",
            )
            .with_help("add `over = \"list\"`, naming a `VarType.LIST_STRING` state variable");
            self.emit(d);
        }
        Node::Map(n)
    }
}
