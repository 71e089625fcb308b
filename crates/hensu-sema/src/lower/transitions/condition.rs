//! `onCondition("variable") { … }`: comparisons of a state variable.

use hensu_diagnostics::Span;
use hensu_ir::{ConditionPredicate, Namespace, TransitionRule, canonical_int, canonical_number};
use hensu_syntax::ast::{Call, Expr, ExprKind, Ident, Link};

use super::{ChainAction, ChainCtx, RuleSink, chain_parts, link_end};
use crate::lower::values::Quoted;
use crate::lower::{Lowerer, Seen};
use crate::origins::RuleOrigin;
use crate::schema::{self, BlockKind, StatementKind};

impl Lowerer<'_> {
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
