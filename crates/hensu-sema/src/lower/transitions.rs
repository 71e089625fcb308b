//! Transition statements: infix chains (`onSuccess goto "x"`, `onRejection revise "p" retry 3
//! otherwise "x" withFeedback`, `onFailure retry 2 otherwise "x"`), `onScore { }` with upstream's
//! regrouping (upstream-reference §1.9) and `onCondition("v") { }` (§1.10).

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{
    ComparisonOperator, ConditionPredicate, Namespace, ScoreCondition, ScoreRange, TransitionRule,
    canonical_int, canonical_number,
};
use hensu_syntax::ast::{Call, Expr, ExprKind, Ident, Link};

use super::values::Quoted;
use super::{Lowerer, Seen, Shape};
use crate::origins::RuleOrigin;
use crate::schema::{self, BlockKind, ChainForms, StatementKind};
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

    /// The string argument of a chain link (`goto "x"`).
    fn link_string(
        &mut self,
        link: &Link<'_>,
        _ctx: &ChainCtx<'_>,
        needs: &str,
    ) -> Option<(String, Span)> {
        let Some(arg) = &link.arg else {
            self.incomplete(
                link.word.span,
                format!("incomplete chain: `{}` needs `{needs}`", link.word.name),
                format!("write `{} {needs}`", link.word.name),
            );
            return None;
        };
        let s = self.string(arg, &Quoted(link.word.name))?;
        Some((s, arg.span))
    }

    /// The `retry N` budget (E0107 when negative).
    fn link_budget(&mut self, link: &Link<'_>) -> Option<(i64, Span)> {
        let Some(arg) = &link.arg else {
            self.incomplete(
                link.word.span,
                "incomplete chain: `retry` needs a count".to_string(),
                "write `retry N otherwise \"node\"`".to_string(),
            );
            return None;
        };
        let n = self.int(arg, &"`retry`")?;
        if n < 0 {
            self.out_of_range(
                arg.span,
                format!("retry budget {n} is negative"),
                "must be 0 or more",
            );
            if let Some(d) = self.diags.last_mut() {
                d.help.push(
                    "upstream escalates immediately on a negative budget; write `retry 0` for that"
                        .to_string(),
                );
            }
        }
        Some((n, arg.span))
    }

    /// A bare `withFeedback` at `links[i]`, if it is one (reports an argument after it).
    fn is_feedback(&mut self, links: &[Link<'_>], i: usize) -> Option<Span> {
        let link = links.get(i)?;
        if link.word.name != "withFeedback" {
            return None;
        }
        if let Some(arg) = &link.arg {
            self.emit(
                Diagnostic::new(
                    codes::E0101,
                    "`withFeedback` takes no argument",
                    arg.span,
                    "unexpected argument",
                )
                .with_help("`withFeedback` is a bare word at the end of a transition"),
            );
        }
        Some(link.word.span)
    }

    fn feedback_not_here(&mut self, span: Span, ctx: &ChainCtx<'_>) {
        let d = Diagnostic::new(
            codes::E0013,
            format!("`withFeedback` cannot follow `{} …`", ctx.trigger),
            span,
            "a failure transition carries no feedback",
        )
        .with_help("remove `withFeedback`; it applies to `goto` targets of success, approval, consensus, score and condition transitions and to revise escalations");
        self.emit(d);
    }

    /// Reports links after the end of a complete chain.
    fn trailing(&mut self, links: &[Link<'_>], i: usize, ctx: &ChainCtx<'_>) {
        if let Some(link) = links.get(i) {
            let end = links
                .last()
                .map(|l| l.arg.as_ref().map(|a| a.span).unwrap_or(l.word.span))
                .unwrap_or(link.word.span);
            let d = Diagnostic::new(
                codes::E0101,
                format!(
                    "unexpected `{}` after the end of the `{}` transition",
                    link.word.name, ctx.trigger
                ),
                link.word.span.to(end),
                "unexpected here",
            )
            .with_help("write one transition per statement (one per line, or separated by `;`)");
            self.emit(d);
        }
    }

    /// Parses the continuation of a chain (`goto …`, `revise …`, `retry …`).
    pub(crate) fn chain_action(
        &mut self,
        links: &[Link<'_>],
        forms: ChainForms,
        ctx: &ChainCtx<'_>,
    ) -> Option<ChainAction> {
        let Some(first) = links.first() else {
            self.incomplete(
                ctx.end_span,
                format!("incomplete transition: `{}` needs a target", ctx.trigger),
                format!("write {}", forms_syntax(ctx.trigger, forms)),
            );
            return None;
        };
        match first.word.name {
            "goto" => {
                let (target, target_span) = self.link_string(first, ctx, "\"node\"")?;
                let mut i = 1;
                let mut feedback = false;
                if let Some(span) = self.is_feedback(links, i) {
                    if forms.feedback {
                        feedback = true;
                    } else {
                        self.feedback_not_here(span, ctx);
                    }
                    i += 1;
                }
                self.trailing(links, i, ctx);
                Some(ChainAction::Goto {
                    target,
                    target_span,
                    feedback,
                })
            }
            "revise" if forms.revise => {
                let (target, target_span) = self.link_string(first, ctx, "\"node\"")?;
                let mut i = 1;
                if self.is_feedback(links, i).is_some() {
                    // Documented no-op: the inner revise edge never carries feedback.
                    i += 1;
                }
                let (budget, budget_span, otherwise, otherwise_span) = self.retry_otherwise(
                    links,
                    i,
                    ctx,
                    &format_args!("revise \"{target}\""),
                    target_span,
                )?;
                i += 2;
                let mut escalation_feedback = false;
                if self.is_feedback(links, i).is_some() {
                    escalation_feedback = true;
                    i += 1;
                }
                self.trailing(links, i, ctx);
                Some(ChainAction::Revise {
                    target,
                    target_span,
                    budget,
                    budget_span,
                    otherwise,
                    otherwise_span,
                    escalation_feedback,
                })
            }
            "retry" if forms.retry => {
                let (budget, budget_span, otherwise, otherwise_span) =
                    self.retry_otherwise(links, 0, ctx, &ctx.trigger, ctx.end_span)?;
                let mut i = 2;
                if let Some(span) = self.is_feedback(links, i) {
                    self.feedback_not_here(span, ctx);
                    i += 1;
                }
                self.trailing(links, i, ctx);
                Some(ChainAction::Retry {
                    budget,
                    budget_span,
                    otherwise,
                    otherwise_span,
                })
            }
            w @ ("revise" | "retry") => {
                let elsewhere = BlockKind::ALL.iter().any(|k| {
                    schema::lookup(*k, ctx.trigger).is_some_and(|s| match s.kind {
                        StatementKind::Transition(f) | StatementKind::Arm(f) => {
                            (w == "revise" && f.revise) || (w == "retry" && f.retry)
                        }
                        _ => false,
                    })
                });
                let d = Diagnostic::new(
                    if elsewhere {
                        codes::E0102
                    } else {
                        codes::E0101
                    },
                    format!(
                        "`{} {w}` is not accepted on {}",
                        ctx.trigger,
                        ctx.block.describe()
                    ),
                    first.word.span,
                    format!("`{w}` is not available here"),
                )
                .with_help(format!(
                    "{} accepts {}",
                    ctx.block.describe(),
                    forms_syntax(ctx.trigger, forms)
                ));
                self.emit(d);
                None
            }
            other => {
                let mut d = Diagnostic::new(
                    codes::E0101,
                    format!("unexpected `{other}` in a `{}` transition", ctx.trigger),
                    first.word.span,
                    format!(
                        "expected {}",
                        words(forms)
                            .iter()
                            .map(|w| format!("`{w}`"))
                            .collect::<Vec<_>>()
                            .join(" or ")
                    ),
                );
                d = match did_you_mean(other, words(forms)) {
                    Some(s) => replace_with(
                        d.with_help(format!("did you mean `{s}`?")),
                        first.word.span,
                        s,
                    ),
                    None => d.with_help(format!("write {}", forms_syntax(ctx.trigger, forms))),
                };
                self.emit(d);
                None
            }
        }
    }

    /// `retry N otherwise "x"` starting at `links[i]`.
    fn retry_otherwise(
        &mut self,
        links: &[Link<'_>],
        i: usize,
        ctx: &ChainCtx<'_>,
        after: &dyn std::fmt::Display,
        after_span: Span,
    ) -> Option<(i64, Span, String, Span)> {
        let Some(retry) = links.get(i) else {
            self.incomplete(
                match (links.first(), links.last()) {
                    (Some(f), Some(l)) => f.word.span.to(link_end(l)),
                    _ => after_span,
                },
                format!("incomplete chain: `{after}` needs `retry N otherwise \"node\"`"),
                format!("complete it: `{after} retry 3 otherwise \"node\"`"),
            );
            return None;
        };
        if retry.word.name != "retry" {
            self.unexpected_word(retry.word, "retry", ctx);
            return None;
        }
        let (budget, budget_span) = self.link_budget(retry)?;
        let Some(other) = links.get(i + 1) else {
            self.incomplete(
                retry.word.span.to(budget_span),
                format!("incomplete chain: `retry {budget}` needs `otherwise \"node\"`"),
                format!("name the node to escalate to: `retry {budget} otherwise \"node\"`"),
            );
            return None;
        };
        if other.word.name != "otherwise" {
            self.unexpected_word(other.word, "otherwise", ctx);
            return None;
        }
        let (otherwise, otherwise_span) = self.link_string(other, ctx, "\"node\"")?;
        Some((budget, budget_span, otherwise, otherwise_span))
    }

    fn unexpected_word(&mut self, word: Ident<'_>, expected: &str, ctx: &ChainCtx<'_>) {
        let d = Diagnostic::new(
            codes::E0101,
            format!(
                "unexpected `{}` in a `{}` transition, expected `{expected}`",
                word.name, ctx.trigger
            ),
            word.span,
            format!("expected `{expected}`"),
        )
        .with_help("a bounded chain is `revise \"node\" retry N otherwise \"node\"`");
        self.emit(d);
    }

    /// A transition statement of a node (`onSuccess goto "x"`, …).
    pub(crate) fn transition(
        &mut self,
        forms: ChainForms,
        head: Ident<'_>,
        links: &[Link<'_>],
        stmt: Span,
        block: BlockKind,
        out: &mut RuleSink,
    ) {
        let ctx = ChainCtx {
            trigger: head.name,
            end_span: head.span,
            block,
        };
        let Some(action) = self.chain_action(links, forms, &ctx) else {
            return;
        };
        let mut origin = RuleOrigin {
            stmt,
            trigger: Some(head.span),
            ..RuleOrigin::default()
        };
        action.fill(&mut origin);
        let rule = match (head.name, action) {
            (
                "onSuccess" | "onConsensus" | "onComplete",
                ChainAction::Goto {
                    target, feedback, ..
                },
            ) => TransitionRule::Success {
                target_node: target,
                with_feedback: feedback,
            },
            ("onFailure", ChainAction::Goto { target, .. }) => TransitionRule::Failure {
                target_node: Some(target),
            },
            (
                "onFailure",
                ChainAction::Retry {
                    budget, otherwise, ..
                },
            ) => TransitionRule::Bounded {
                namespace: Namespace::Failure,
                budget,
                otherwise,
                escalation_with_feedback: false,
                inner: Box::new(TransitionRule::Failure { target_node: None }),
            },
            (
                "onApproval",
                ChainAction::Goto {
                    target, feedback, ..
                },
            ) => TransitionRule::Approval {
                expected: true,
                target_node: target,
                with_feedback: feedback,
            },
            (
                "onRejection",
                ChainAction::Goto {
                    target, feedback, ..
                },
            ) => TransitionRule::Approval {
                expected: false,
                target_node: target,
                with_feedback: feedback,
            },
            (
                "onRejection",
                ChainAction::Revise {
                    target,
                    budget,
                    otherwise,
                    escalation_feedback,
                    ..
                },
            ) => TransitionRule::Bounded {
                namespace: Namespace::Approval,
                budget,
                otherwise,
                escalation_with_feedback: escalation_feedback,
                inner: Box::new(TransitionRule::Approval {
                    expected: false,
                    target_node: target,
                    with_feedback: false,
                }),
            },
            (
                "onNoConsensus",
                ChainAction::Goto {
                    target, feedback, ..
                },
            ) => TransitionRule::NoConsensus {
                target_node: target,
                with_feedback: feedback,
            },
            (
                "onNoConsensus",
                ChainAction::Revise {
                    target,
                    budget,
                    otherwise,
                    escalation_feedback,
                    ..
                },
            ) => TransitionRule::Bounded {
                namespace: Namespace::Consensus,
                budget,
                otherwise,
                escalation_with_feedback: escalation_feedback,
                inner: Box::new(TransitionRule::NoConsensus {
                    target_node: target,
                    with_feedback: false,
                }),
            },
            // The schema only admits the forms above for each trigger.
            _ => return,
        };
        out.push(rule, origin);
    }

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

    /// `onCondition("var") { … }` — arms in declaration order.
    pub(crate) fn on_condition(&mut self, call: &Call<'_>, out: &mut RuleSink) {
        let Some(args) = self.call_args(call, 1, Some(1), "onCondition(\"variable\") { … }")
        else {
            return;
        };
        let Some(var_expr) = args.first() else { return };
        let Some(variable) = self.string(var_expr, &"`onCondition`") else {
            return;
        };
        let var_span = var_expr.span;
        let Some(body) = &call.block else {
            self.incomplete(
                call.callee.span.to(var_span),
                "incomplete `onCondition`: it needs a block of arms".to_string(),
                format!("write `onCondition(\"{variable}\") {{ whenValue equalTo \"x\" goto \"node\" }}`"),
            );
            return;
        };
        let mut otherwise_span: Option<Span> = None;
        let mut seen = Seen::new();
        for arm in &body.stmts {
            let Some((spec, shape)) = self.accept(BlockKind::OnCondition, arm, &mut seen) else {
                continue;
            };
            let StatementKind::Arm(forms) = spec.kind else {
                continue;
            };
            let Some((head, links)) = chain_parts(&shape) else {
                continue;
            };
            if let Some(first) = otherwise_span {
                self.after_otherwise(arm.span, first, head.name == "otherwise", "onCondition");
                continue;
            }
            if head.name == "otherwise" {
                otherwise_span = Some(head.span);
                if let Some((rule, mut origin)) = self.else_arm(
                    head,
                    links,
                    forms,
                    arm.span,
                    BlockKind::OnCondition,
                    Namespace::Condition,
                ) {
                    origin.variable = Some(var_span);
                    out.push(rule, origin);
                }
                continue;
            }
            let Some((predicate, operand_span, rest)) = self.condition_predicate(head, links)
            else {
                continue;
            };
            let ctx = ChainCtx {
                trigger: "whenValue",
                end_span: links.last().map(link_end).unwrap_or(head.span),
                block: BlockKind::OnCondition,
            };
            let Some(action) = self.chain_action(rest, forms, &ctx) else {
                continue;
            };
            let mut origin = RuleOrigin {
                stmt: arm.span,
                trigger: Some(head.span),
                variable: Some(var_span),
                operand: Some(operand_span),
                ..RuleOrigin::default()
            };
            action.fill(&mut origin);
            let rule = match action {
                ChainAction::Goto {
                    target, feedback, ..
                } => TransitionRule::Condition {
                    variable: variable.clone(),
                    predicate,
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
                    namespace: Namespace::Condition,
                    budget,
                    otherwise,
                    escalation_with_feedback: escalation_feedback,
                    inner: Box::new(TransitionRule::Condition {
                        variable: variable.clone(),
                        predicate,
                        target_node: target,
                        with_feedback: false,
                    }),
                },
                ChainAction::Retry { .. } => continue,
            };
            out.push(rule, origin);
        }
    }

    /// `whenValue <op> <operand>`.
    fn condition_predicate<'t, 's>(
        &mut self,
        head: Ident<'_>,
        links: &'t [Link<'s>],
    ) -> Option<(ConditionPredicate, Span, &'t [Link<'s>])> {
        let Some(op) = links.first() else {
            self.incomplete(
                head.span,
                "incomplete arm: `whenValue` needs a comparison".to_string(),
                "write `whenValue equalTo \"done\" goto \"node\"`".to_string(),
            );
            return None;
        };
        let name = op.word.name;
        if !schema::CONDITION_OPERATORS.contains(&name) {
            if matches!(name, "goto" | "revise") {
                self.incomplete(
                    head.span,
                    "incomplete arm: `whenValue` needs a comparison before the target".to_string(),
                    "write `whenValue equalTo \"done\" goto \"node\"`".to_string(),
                );
            } else {
                self.unknown_operator(op.word, name, schema::CONDITION_OPERATORS, "whenValue");
            }
            return None;
        }
        let Some(arg) = &op.arg else {
            self.incomplete(
                op.word.span,
                format!("incomplete arm: `{name}` needs a value"),
                format!("write `whenValue {name} … goto \"node\"`"),
            );
            return None;
        };
        let predicate = match name {
            "equalTo" | "notEqualTo" => {
                let canonical = self.condition_operand(arg, name)?;
                if name == "equalTo" {
                    ConditionPredicate::Eq(canonical)
                } else {
                    ConditionPredicate::Neq(canonical)
                }
            }
            _ => {
                let v = self.double(arg, &Quoted(name))?;
                match name {
                    "greaterThan" => ConditionPredicate::Gt(v),
                    "greaterThanOrEqual" => ConditionPredicate::Gte(v),
                    "lessThan" => ConditionPredicate::Lt(v),
                    _ => ConditionPredicate::Lte(v),
                }
            }
        };
        Some((predicate, arg.span, &links[1..]))
    }

    /// The canonical form of an `equalTo` / `notEqualTo` operand.
    fn condition_operand(&mut self, e: &Expr<'_>, op: &str) -> Option<String> {
        match &e.kind {
            ExprKind::Str(s) => Some(s.value.to_string()),
            ExprKind::Bool(b) => Some(b.to_string()),
            ExprKind::Int(v) | ExprKind::Long(v) => Some(canonical_int(*v)),
            ExprKind::Double(v) => Some(canonical_number(*v)),
            _ => {
                self.wrong_type(e, "a String, Boolean or number", &Quoted(op));
                None
            }
        }
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
