//! Transition statements, one file per family: infix chains ([`chain`]: `onSuccess goto "x"`,
//! `onRejection revise "p" retry 3 otherwise "x" withFeedback`, `onFailure retry 2 otherwise "x"`),
//! `onScore { }` ([`score`], compiled in the Kotlin DSL's regrouped rule order) and
//! `onCondition("v") { }` ([`condition`]). See docs/language.md, *Transitions*. This file holds
//! what the families share: the rule sink, chain context and the incomplete / else-arm messages.

mod chain;
mod condition;
mod score;

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Namespace, TransitionRule};
use hensu_syntax::ast::{Call, Ident, Link};

use crate::lower::{Lowerer, Shape};
use crate::origins::RuleOrigin;
use crate::schema::{BlockKind, ChainForms};
use crate::suggest::{did_you_mean, replace_with};

/// What a chain continues with after its trigger.
pub(crate) enum ChainAction {
    Goto {
        target: String,
        target_span: Span,
        feedback: bool,
    },
    Revise {
        target: String,
        target_span: Span,
        budget: i64,
        budget_span: Span,
        otherwise: String,
        otherwise_span: Span,
        escalation_feedback: bool,
    },
    Retry {
        budget: i64,
        budget_span: Span,
        otherwise: String,
        otherwise_span: Span,
        /// `backoff 2.seconds` (milliseconds, its span).
        backoff: Option<(i64, Span)>,
    },
}

impl ChainAction {
    /// Fills a rule origin's target / budget / otherwise spans.
    fn fill(&self, o: &mut RuleOrigin) {
        match self {
            ChainAction::Goto { target_span, .. } => o.target = Some(*target_span),
            ChainAction::Revise {
                target_span,
                budget_span,
                otherwise_span,
                ..
            } => {
                o.target = Some(*target_span);
                o.budget = Some(*budget_span);
                o.otherwise = Some(*otherwise_span);
            }
            ChainAction::Retry {
                budget_span,
                otherwise_span,
                ..
            } => {
                o.budget = Some(*budget_span);
                o.otherwise = Some(*otherwise_span);
            }
        }
    }
}

/// The context of one chain, for messages.
pub(crate) struct ChainCtx<'a> {
    /// The trigger as written (`onFailure`, `whenScore … `, `otherwise`).
    pub trigger: &'a str,
    /// Where to point when the chain ends too early.
    pub end_span: Span,
    pub block: BlockKind,
}

/// Expected continuation words of a chain, for did-you-mean.
fn words(forms: ChainForms) -> Vec<&'static str> {
    let mut w = Vec::new();
    if forms.goto {
        w.push("goto");
    }
    if forms.revise {
        w.push("revise");
    }
    if forms.retry {
        w.push("retry");
    }
    w
}

fn forms_syntax(trigger: &str, forms: ChainForms) -> String {
    let mut alts = Vec::new();
    if forms.goto {
        alts.push(format!(
            "`{trigger} goto \"node\"{}`",
            if forms.feedback {
                " [withFeedback]"
            } else {
                ""
            }
        ));
    }
    if forms.revise {
        alts.push(format!(
            "`{trigger} revise \"node\" retry N otherwise \"node\"`"
        ));
    }
    if forms.retry {
        alts.push(format!("`{trigger} retry N otherwise \"node\"`"));
    }
    alts.join(" or ")
}

impl Lowerer<'_> {
    fn incomplete(&mut self, span: Span, message: String, help: String) {
        let d = Diagnostic::new(codes::E0012, message, span, "the chain ends here")
            .with_help(help)
            .with_note("upstream Hensu silently drops an incomplete chain; hensu reports it");
        self.emit(d);
    }

    fn unknown_operator(&mut self, word: Ident<'_>, name: &str, valid: &[&'static str], arm: &str) {
        let mut d = Diagnostic::new(
            codes::E0101,
            format!("unknown `{arm}` operator `{name}`"),
            word.span,
            "unknown operator",
        );
        d = match did_you_mean(name, valid.iter().copied()) {
            Some(s) => replace_with(d.with_help(format!("did you mean `{s}`?")), word.span, s),
            None => d.with_help(format!(
                "`{arm}` accepts {}",
                valid
                    .iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        self.emit(d);
    }

    /// Reports arguments on a block-only call (`onScore(…) { }`).
    pub(crate) fn no_args(&mut self, call: &Call<'_>, syntax: &str) {
        if let Some(args) = &call.args
            && !args.items.is_empty()
        {
            let d = Diagnostic::new(
                codes::E0103,
                format!("`{}` takes no arguments", call.callee.name),
                args.span,
                "unexpected arguments",
            )
            .with_help(format!("write `{syntax}`"));
            self.emit(d);
        }
    }

    /// E0303: an arm after the `otherwise` arm, or a second `otherwise`.
    fn after_otherwise(&mut self, arm: Span, otherwise: Span, second: bool, block: &str) {
        let (msg, label) = if second {
            (
                format!("a second `otherwise` arm in `{block}`"),
                "second `otherwise`",
            )
        } else {
            (
                format!("an arm after the `otherwise` arm in `{block}`"),
                "arm after `otherwise`",
            )
        };
        let mut d = Diagnostic::new(codes::E0303, msg, arm, label)
            .with_label(otherwise, "the `otherwise` arm")
            .with_help("`otherwise` is the else-arm: declare it last, and only once");
        if second {
            d = d.with_note("the second `otherwise` arm is ignored");
        } else if block == "onScore" {
            d = d.with_note("upstream Hensu accepts this arm silently and compiles it before the else-arm; hensu keeps that order");
        } else {
            d = d.with_note("the arm is ignored");
        }
        self.emit(d);
    }

    /// The else-arm `otherwise goto "x" [withFeedback]` / `otherwise revise "p" … retry N otherwise "x"`.
    fn else_arm(
        &mut self,
        head: Ident<'_>,
        links: &[Link<'_>],
        forms: ChainForms,
        stmt: Span,
        block: BlockKind,
        namespace: Namespace,
    ) -> Option<(TransitionRule, RuleOrigin)> {
        let ctx = ChainCtx {
            trigger: "otherwise",
            end_span: head.span,
            block,
        };
        let action = self.chain_action(links, forms, &ctx)?;
        let mut origin = RuleOrigin {
            stmt,
            trigger: Some(head.span),
            ..RuleOrigin::default()
        };
        action.fill(&mut origin);
        let rule = match action {
            ChainAction::Goto {
                target, feedback, ..
            } => TransitionRule::Always {
                target_node: target,
                with_feedback: feedback,
            },
            ChainAction::Revise {
                target,
                budget,
                otherwise,
                escalation_feedback,
                ..
            } => TransitionRule::Bounded {
                namespace,
                budget,
                otherwise,
                escalation_with_feedback: escalation_feedback,
                inner: Box::new(TransitionRule::Always {
                    target_node: target,
                    with_feedback: false,
                }),
            },
            ChainAction::Retry { .. } => return None,
        };
        Some((rule, origin))
    }
}

/// The rules of one node with their origins (kept parallel).
#[derive(Default)]
pub(crate) struct RuleSink {
    pub rules: Vec<TransitionRule>,
    pub origins: Vec<RuleOrigin>,
}

impl RuleSink {
    pub fn push(&mut self, rule: TransitionRule, origin: RuleOrigin) {
        self.rules.push(rule);
        self.origins.push(origin);
    }
}

fn chain_parts<'t, 's>(shape: &Shape<'t, 's>) -> Option<(Ident<'s>, &'t [Link<'s>])> {
    match *shape {
        Shape::Chain { head, links } => Some((head, links)),
        Shape::Name(head) => Some((head, &[])),
        _ => None,
    }
}

fn link_end(l: &Link<'_>) -> Span {
    l.word
        .span
        .to(l.arg.as_ref().map(|a| a.span).unwrap_or(l.word.span))
}

fn fmt_num(v: f64) -> String {
    hensu_ir::java_double_to_string(v)
}
