//! Infix chains: `onSuccess goto "x"`, `onRejection revise "p" retry 3 otherwise "x"
//! withFeedback`, `onFailure retry 2 otherwise "x"` and the other single-line transitions.

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Namespace, TransitionRule};
use hensu_syntax::ast::{Ident, Link};

use super::{ChainAction, ChainCtx, RuleSink, forms_syntax, link_end, words};
use crate::lower::Lowerer;
use crate::lower::values::Quoted;
use crate::origins::RuleOrigin;
use crate::schema::{self, BlockKind, ChainForms, StatementKind};
use crate::suggest::{did_you_mean, replace_with};

impl Lowerer<'_> {
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
            if link.word.name == "backoff" {
                self.backoff_without_retry(
                    link.word.span,
                    "`backoff` sets the wait before each retry: write `onFailure retry 3 backoff 2.seconds otherwise \"node\"`",
                );
                return;
            }
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
                let r = self.retry_otherwise(
                    links,
                    i,
                    ctx,
                    &format_args!("revise \"{target}\""),
                    target_span,
                )?;
                if let Some((_, span)) = r.backoff {
                    self.backoff_without_retry(span, "a `revise … retry` sends the flow back to another node at once; `backoff` applies to `onFailure retry N` only");
                }
                let (budget, budget_span, otherwise, otherwise_span) =
                    (r.budget, r.budget_span, r.otherwise, r.otherwise_span);
                i += r.consumed;
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
                let r = self.retry_otherwise(links, 0, ctx, &ctx.trigger, ctx.end_span)?;
                let mut i = r.consumed;
                if let Some(span) = self.is_feedback(links, i) {
                    self.feedback_not_here(span, ctx);
                    i += 1;
                }
                self.trailing(links, i, ctx);
                Some(ChainAction::Retry {
                    budget: r.budget,
                    budget_span: r.budget_span,
                    otherwise: r.otherwise,
                    otherwise_span: r.otherwise_span,
                    backoff: r.backoff,
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
            "backoff" => {
                self.backoff_without_retry(
                    first.word.span,
                    "`backoff` follows the retry count: `onFailure retry 3 backoff 2.seconds otherwise \"node\"`",
                );
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

    /// E0112: `backoff` where no retry waits (docs/language.md, *Timeouts and backoff*).
    fn backoff_without_retry(&mut self, span: Span, help: &str) {
        let d = Diagnostic::new(
            codes::E0112,
            "`backoff` without an `onFailure retry`",
            span,
            "nothing waits for this backoff",
        )
        .with_help(help);
        self.emit(d);
    }

    /// `retry N [backoff D] otherwise "x"` starting at `links[i]`.
    fn retry_otherwise(
        &mut self,
        links: &[Link<'_>],
        i: usize,
        ctx: &ChainCtx<'_>,
        after: &dyn std::fmt::Display,
        after_span: Span,
    ) -> Option<RetryParts> {
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
        let mut next = i + 1;
        let mut backoff = None;
        if let Some(link) = links.get(next).filter(|l| l.word.name == "backoff") {
            next += 1;
            match &link.arg {
                Some(arg) => {
                    if let Some(ms) = self.duration(arg, &"`backoff`") {
                        backoff = Some((ms, arg.span));
                    }
                }
                None => self.incomplete(
                    link.word.span,
                    "incomplete chain: `backoff` needs a duration".to_string(),
                    "write `backoff 2.seconds`".to_string(),
                ),
            }
        }
        let Some(other) = links.get(next) else {
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
        Some(RetryParts {
            budget,
            budget_span,
            otherwise,
            otherwise_span,
            backoff,
            consumed: next + 1 - i,
        })
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
        );
        // `withFeedback` may stand between the parts of a chain, so a misspelled infix word is
        // usually one of the two.
        let d = match did_you_mean(word.name, [expected, "withFeedback"]) {
            Some(s) => replace_with(d.with_help(format!("did you mean `{s}`?")), word.span, s),
            None => d.with_help("a bounded chain is `revise \"node\" retry N otherwise \"node\"`"),
        };
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
                "onSuccess" | "onConsensus" | "onComplete" | "onSignal",
                ChainAction::Goto {
                    target, feedback, ..
                },
            ) => TransitionRule::Success {
                target_node: target,
                with_feedback: feedback,
            },
            ("onTimeout", ChainAction::Goto { target, .. }) if ctx.block == BlockKind::Review => {
                TransitionRule::ReviewTimeout {
                    target_node: target,
                }
            }
            ("onFailure" | "onTimeout", ChainAction::Goto { target, .. }) => {
                TransitionRule::Failure {
                    target_node: Some(target),
                }
            }
            (
                "onFailure",
                ChainAction::Retry {
                    budget,
                    otherwise,
                    backoff,
                    ..
                },
            ) => {
                if let Some((ms, span)) = backoff {
                    self.pending_timing_spans.1 = Some(span);
                    self.pending_timing.backoff_ms = self.positive_duration(ms, span, "backoff");
                }
                TransitionRule::Bounded {
                    namespace: Namespace::Failure,
                    budget,
                    otherwise,
                    escalation_with_feedback: false,
                    inner: Box::new(TransitionRule::Failure { target_node: None }),
                }
            }
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
}

/// The parts of `retry N [backoff D] otherwise "x"`.
struct RetryParts {
    budget: i64,
    budget_span: Span,
    otherwise: String,
    otherwise_span: Span,
    backoff: Option<(i64, Span)>,
    /// How many links the parts took.
    consumed: usize,
}
