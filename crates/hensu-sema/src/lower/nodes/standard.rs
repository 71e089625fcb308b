//! `node("id") { … }`: the standard (agent) node and its `review(…)`.

use hensu_diagnostics::{Diagnostic, codes};
use hensu_ir::{Node, ReviewConfig, ReviewMode, StandardNode};
use hensu_syntax::ast::{Call, Stmt};

use crate::lower::transitions::RuleSink;
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Seen, Shape};
use crate::origins::NodeOrigin;
use crate::schema::{BlockKind, EnumType, StatementKind, StatementSpec};

impl Lowerer<'_> {
    pub(super) fn standard(
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
        let review_rules = std::mem::take(&mut self.pending_review_rules);
        for (rule, origin) in review_rules.rules.into_iter().zip(review_rules.origins) {
            sink.push(rule, origin);
        }
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
                let mut deadline = false;
                let mut on_timeout = None;
                for s in &b.stmts {
                    let Some((spec, shape)) = self.accept(BlockKind::Review, s, &mut seen) else {
                        continue;
                    };
                    let (head, links) = match shape {
                        Shape::Assign { value, .. } => {
                            self.review_prop(spec.name, value, &mut r, &mut deadline);
                            continue;
                        }
                        Shape::Chain { head, links } => (head, links),
                        // A bare `onTimeout`: the chain lowering says what is missing.
                        Shape::Name(head) => (head, &[][..]),
                        _ => continue,
                    };
                    // `onTimeout goto "x"`: kept aside, it joins the node's rules.
                    if let StatementKind::Transition(forms) = spec.kind {
                        on_timeout = Some(s.span);
                        let mut sink = std::mem::take(&mut self.pending_review_rules);
                        self.transition(forms, head, links, s.span, BlockKind::Review, &mut sink);
                        self.pending_review_rules = sink;
                    }
                }
                if let (Some(span), false) = (on_timeout, deadline) {
                    let d = Diagnostic::new(
                        codes::E0124,
                        "`onTimeout` in a review without a `deadline` never fires",
                        span,
                        "no deadline to pass",
                    )
                    .with_help("add `deadline = 48.hours` (any positive duration) to the review block, or remove `onTimeout`");
                    self.emit(d);
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

    /// One `name = value` of a review block.
    fn review_prop(
        &mut self,
        name: &str,
        value: &hensu_syntax::ast::Expr<'_>,
        r: &mut ReviewConfig,
        deadline: &mut bool,
    ) {
        match name {
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
                r.allow_edit = self.boolean(value, &"`allowEdit`").unwrap_or(r.allow_edit)
            }
            // A hensu extension kept with the node's timing (docs/language.md, *Review*).
            "deadline" => {
                *deadline = true;
                self.pending_timing_spans.2 = Some(value.span);
                if let Some(ms) = self.duration(value, &"`deadline`") {
                    self.pending_timing.review_deadline_ms =
                        self.positive_duration(ms, value.span, "deadline");
                }
            }
            _ => {}
        }
    }
}
