//! `generic("id") { … }`: an executor type and its free-form `config { }`.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{GenericNode, Node};
use hensu_syntax::ast::{ExprKind, Stmt};
use indexmap::IndexMap;
use serde_json::Value;

use crate::lower::transitions::RuleSink;
use crate::lower::{Lowerer, Shape};
use crate::origins::NodeOrigin;
use crate::schema::BlockKind;

impl Lowerer<'_> {
    pub(super) fn generic(
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
}
