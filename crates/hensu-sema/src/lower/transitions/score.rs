//! `onScore { whenScore … goto "x" }`: score arms, ranges and the `otherwise` arm.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{ComparisonOperator, Namespace, ScoreCondition, ScoreRange, TransitionRule};
use hensu_syntax::ast::{Call, ExprKind, Ident, Link};

use super::{ChainAction, ChainCtx, RuleSink, chain_parts, fmt_num, link_end};
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Seen};
use crate::origins::RuleOrigin;
use crate::schema::{self, BlockKind, StatementKind};

impl Lowerer<'_> {
    /// `onScore { … }` — compiled in upstream's regrouped order: one score rule with every plain
    /// `goto` arm, one with every `goto … withFeedback` arm, each bounded `revise` arm, then the
    /// else-arm.
    pub(crate) fn on_score(&mut self, call: &Call<'_>, stmt: Span, out: &mut RuleSink) {
        self.no_args(call, "onScore { … }");
        let Some(body) = &call.block else { return };
        let mut plain: Vec<(ScoreCondition, Span, Span)> = Vec::new();
        let mut feedback: Vec<(ScoreCondition, Span, Span)> = Vec::new();
        let mut bounded: Vec<(TransitionRule, RuleOrigin)> = Vec::new();
        let mut else_arm: Option<(TransitionRule, RuleOrigin)> = None;
        let mut otherwise_span: Option<Span> = None;
        let mut seen = Seen::new();
        for arm in &body.stmts {
            let Some((spec, shape)) = self.accept(BlockKind::OnScore, arm, &mut seen) else {
                continue;
            };
            let StatementKind::Arm(forms) = spec.kind else {
                continue;
            };
            let Some((head, links)) = chain_parts(&shape) else {
                continue;
            };
            if let Some(first) = otherwise_span {
                self.after_otherwise(arm.span, first, head.name == "otherwise", "onScore");
                if head.name == "otherwise" {
                    continue;
                }
            }
            if head.name == "otherwise" {
                otherwise_span = Some(head.span);
                else_arm = self.else_arm(
                    head,
                    links,
                    forms,
                    arm.span,
                    BlockKind::OnScore,
                    Namespace::Score,
                );
                continue;
            }
            let Some((cond, rest)) = self.score_condition(head, links) else {
                continue;
            };
            let ctx = ChainCtx {
                trigger: "whenScore",
                end_span: links.last().map(link_end).unwrap_or(head.span),
                block: BlockKind::OnScore,
            };
            let Some(action) = self.chain_action(rest, forms, &ctx) else {
                continue;
            };
            let mut origin = RuleOrigin {
                stmt: arm.span,
                trigger: Some(head.span),
                conditions: vec![arm.span],
                ..RuleOrigin::default()
            };
            action.fill(&mut origin);
            let target_span = origin.target.unwrap_or(arm.span);
            origin.condition_targets = vec![target_span];
            match action {
                ChainAction::Goto {
                    target,
                    feedback: fb,
                    ..
                } => {
                    let c = ScoreCondition {
                        target_node: target,
                        ..cond
                    };
                    if fb {
                        feedback.push((c, arm.span, target_span));
                    } else {
                        plain.push((c, arm.span, target_span));
                    }
                }
                ChainAction::Revise {
                    target,
                    budget,
                    otherwise,
                    escalation_feedback,
                    ..
                } => {
                    let rule = TransitionRule::Bounded {
                        namespace: Namespace::Score,
                        budget,
                        otherwise,
                        escalation_with_feedback: escalation_feedback,
                        inner: Box::new(TransitionRule::Score {
                            conditions: vec![ScoreCondition {
                                target_node: target,
                                ..cond
                            }],
                            with_feedback: false,
                        }),
                    };
                    bounded.push((rule, origin));
                }
                ChainAction::Retry { .. } => {}
            }
        }
        for (group, with_feedback) in [(plain, false), (feedback, true)] {
            if group.is_empty() {
                continue;
            }
            let origin = RuleOrigin {
                stmt,
                trigger: Some(call.callee.span),
                target: group.first().map(|(_, _, t)| *t),
                conditions: group.iter().map(|(_, s, _)| *s).collect(),
                condition_targets: group.iter().map(|(_, _, t)| *t).collect(),
                ..RuleOrigin::default()
            };
            let rule = TransitionRule::Score {
                conditions: group.into_iter().map(|(c, _, _)| c).collect(),
                with_feedback,
            };
            out.push(rule, origin);
        }
        for (rule, origin) in bounded {
            out.push(rule, origin);
        }
        if let Some((rule, origin)) = else_arm {
            out.push(rule, origin);
        }
    }

    /// `whenScore <op> <value>`: the condition (target still empty) and the remaining links.
    fn score_condition<'t, 's>(
        &mut self,
        head: Ident<'_>,
        links: &'t [Link<'s>],
    ) -> Option<(ScoreCondition, &'t [Link<'s>])> {
        let Some(op) = links.first() else {
            self.incomplete(
                head.span,
                "incomplete arm: `whenScore` needs a comparison".to_string(),
                "write `whenScore greaterThanOrEqual 80.0 goto \"node\"`".to_string(),
            );
            return None;
        };
        let operator = match op.word.name {
            "greaterThan" => ComparisonOperator::Gt,
            "greaterThanOrEqual" => ComparisonOperator::Gte,
            "lessThan" => ComparisonOperator::Lt,
            "lessThanOrEqual" => ComparisonOperator::Lte,
            "in" => ComparisonOperator::Range,
            "goto" | "revise" => {
                self.incomplete(
                    head.span,
                    "incomplete arm: `whenScore` needs a comparison before the target".to_string(),
                    "write `whenScore greaterThanOrEqual 80.0 goto \"node\"`".to_string(),
                );
                return None;
            }
            other => {
                self.unknown_operator(op.word, other, schema::SCORE_OPERATORS, "whenScore");
                return None;
            }
        };
        let Some(arg) = &op.arg else {
            self.incomplete(
                op.word.span,
                format!("incomplete arm: `{}` needs a value", op.word.name),
                if operator == ComparisonOperator::Range {
                    "write ``whenScore `in` 50.0..79.0 goto \"node\"``".to_string()
                } else {
                    format!("write `whenScore {} 80.0 goto \"node\"`", op.word.name)
                },
            );
            return None;
        };
        let cond = if operator == ComparisonOperator::Range {
            let ExprKind::Range { start, end } = &arg.kind else {
                self.wrong_type(arg, "a range `a..b`", &"`in`");
                return None;
            };
            let s = self.double(start, &"a score range bound")?;
            let e = self.double(end, &"a score range bound")?;
            if s > e {
                let d = Diagnostic::new(
                    codes::E0307,
                    format!(
                        "empty score range: start {} is greater than end {}",
                        fmt_num(s),
                        fmt_num(e)
                    ),
                    arg.span,
                    "start > end",
                )
                .with_help(format!(
                    "write the bounds in increasing order: `{}..{}`",
                    fmt_num(e),
                    fmt_num(s)
                ));
                self.emit(d);
                return None;
            }
            ScoreCondition {
                operator,
                value: Some(0.0),
                range: Some(ScoreRange { start: s, end: e }),
                target_node: String::new(),
            }
        } else {
            let v = self.double(arg, &Quoted(op.word.name))?;
            ScoreCondition {
                operator,
                value: Some(v),
                range: None,
                target_node: String::new(),
            }
        };
        Some((cond, &links[1..]))
    }
}
