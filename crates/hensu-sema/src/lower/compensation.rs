//! `compensation("id") { … }` in the graph (docs/language.md, *Saga compensation*): an agent
//! call (`agent` + `prompt`) or actions (`execute`, `send`), nothing else. It is not a node:
//! no transitions, no `writes`, no review, no rubric (E0110), and it cannot name a
//! compensation itself (E0111).

use hensu_diagnostics::{Diagnostic, Span, codes};
use hensu_ir::{Action, Compensation, CompensationBody};
use hensu_syntax::ast::{Call, Stmt};

use super::nodes::Graph;
use super::values::Quoted;
use super::{Lowerer, Seen, Shape};
use crate::origins::NodeOrigin;
use crate::schema::{BlockKind, StatementSpec};

/// Node statements a compensation must not have, with why (E0110).
const NOT_IN_COMPENSATION: &[(&str, &str)] = &[
    (
        "writes",
        "its output is recorded in the run result, never written to the state",
    ),
    (
        "review",
        "it runs after the run has ended, when nobody reviews",
    ),
    (
        "rubric",
        "it runs after the run has ended; nothing is scored",
    ),
    (
        "onSuccess",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onFailure",
        "it has no transitions; a failed compensation is recorded and the rest still run",
    ),
    (
        "onApproval",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onRejection",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onScore",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onCondition",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onConsensus",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onNoConsensus",
        "it has no transitions; compensations run in a fixed order",
    ),
    (
        "onComplete",
        "it has no transitions; compensations run in a fixed order",
    ),
];

impl Lowerer<'_> {
    /// Lowers one `compensation("id") { … }` into `graph.saga`; ids are unique across nodes
    /// and compensations (E0201).
    pub(super) fn compensation_decl(
        &mut self,
        graph: &mut Graph,
        spec: &StatementSpec,
        c: &Call<'_>,
        stmt: &Stmt<'_>,
    ) {
        let Some(args) = self.call_args(c, 1, Some(1), spec.syntax) else {
            return;
        };
        let Some(id_e) = args.first() else { return };
        let Some((id, id_span)) = self.id_arg(id_e, &"compensation id") else {
            return;
        };
        let mut o = NodeOrigin {
            id: id_span,
            decl: stmt.span,
            ..NodeOrigin::default()
        };
        let body: &[Stmt<'_>] = match &c.block {
            Some(b) => &b.stmts,
            None => {
                let d = Diagnostic::new(
                    codes::E0101,
                    format!("`compensation(\"{id}\")` needs a body"),
                    stmt.span,
                    "missing `{ … }`",
                )
                .with_help(format!("write `{}`", spec.syntax));
                self.emit(d);
                &[]
            }
        };
        let compensation = self.compensation_body(&id, body, &mut o);
        let first = self
            .origins
            .nodes
            .get(&id)
            .or_else(|| self.origins.compensations.get(&id));
        if let Some(first) = first {
            let d = Diagnostic::new(
                codes::E0201,
                format!("`{id}` is declared twice"),
                id_span,
                "declared again here",
            )
            .with_label(first.id, "first declared here")
            .with_note("node and compensation ids share one namespace")
            .with_help("rename one of them; the first declaration is kept");
            self.emit(d);
            self.origins.rejected_compensations.push(id);
            return;
        }
        self.origins.compensations.insert(id.clone(), o);
        if let Some(c) = compensation {
            graph.saga.compensations.insert(id, c);
        }
    }

    fn compensation_body(
        &mut self,
        id: &str,
        body: &[Stmt<'_>],
        o: &mut NodeOrigin,
    ) -> Option<Compensation> {
        let mut agent: Option<String> = None;
        let mut prompt: Option<String> = None;
        let mut actions: Vec<Action> = Vec::new();
        let mut seen = Seen::new();
        for stmt in body {
            if let Some(name) = Shape::of(stmt).name() {
                if let Some((_, why)) = NOT_IN_COMPENSATION.iter().find(|(n, _)| *n == name.name) {
                    self.not_in_compensation(id, name.name, name.span, stmt.span, why);
                    continue;
                }
                if name.name == "compensation" {
                    let d = Diagnostic::new(
                        codes::E0111,
                        format!("compensation `{id}` names a compensation"),
                        name.span,
                        "a compensation of a compensation",
                    )
                    .with_label(stmt.span, "this statement is ignored")
                    .with_note("compensations run once the run has ended; nothing undoes them in turn")
                    .with_help("remove it; to do more on compensation, add the actions to this compensation");
                    self.emit(d);
                    continue;
                }
            }
            let Some((spec, shape)) = self.accept(BlockKind::Compensation, stmt, &mut seen) else {
                continue;
            };
            let what = Quoted(spec.name);
            match (spec.name, shape) {
                ("agent", Shape::Assign { value, .. }) => {
                    o.props.insert("agent", value.span);
                    agent = self.string(value, &what);
                }
                ("prompt", Shape::Assign { value, .. }) => {
                    o.props.insert("prompt", value.span);
                    self.assign_prompt(value, &what, &mut prompt, &mut o.placeholders);
                }
                ("send" | "execute", _) => self.action_stmt(spec, shape, stmt, &mut actions, o),
                _ => {}
            }
        }
        let agent_span = o.props.get("agent").copied();
        let prompt_span = o.props.get("prompt").copied();
        if !actions.is_empty() {
            if let Some(span) = agent_span.or(prompt_span) {
                let d = Diagnostic::new(
                    codes::E0110,
                    format!("compensation `{id}` mixes an agent call with actions"),
                    span,
                    "an agent call here",
                )
                .with_label(o.actions.first().copied().unwrap_or(o.id), "an action here")
                .with_help("a compensation holds either `agent` + `prompt` or `execute`/`send` actions; split it in two and name the one that undoes the node");
                self.emit(d);
                return None;
            }
            return Some(Compensation {
                id: id.to_string(),
                body: CompensationBody::Actions(actions),
            });
        }
        match (agent, prompt) {
            (Some(agent_id), Some(prompt)) => Some(Compensation {
                id: id.to_string(),
                body: CompensationBody::Agent { agent_id, prompt },
            }),
            (None, None) if agent_span.is_none() && prompt_span.is_none() => {
                self.emit(
                    Diagnostic::new(
                        codes::E0109,
                        format!("compensation `{id}` does nothing"),
                        o.id,
                        "declared here",
                    )
                    .with_help("add `agent = \"…\"` and `prompt = \"…\"`, or `execute(\"commandId\")` / `send(\"handler\")`"),
                );
                None
            }
            (Some(_), None) if prompt_span.is_none() => {
                self.missing_in_compensation(id, "prompt", agent_span.unwrap_or(o.id));
                None
            }
            (None, Some(_)) if agent_span.is_none() => {
                self.missing_in_compensation(id, "agent", prompt_span.unwrap_or(o.id));
                None
            }
            // A value in error was reported where it is.
            _ => None,
        }
    }

    fn not_in_compensation(&mut self, id: &str, name: &str, span: Span, stmt: Span, why: &str) {
        let d = Diagnostic::new(
            codes::E0110,
            format!("compensation `{id}` cannot have `{name}`"),
            span,
            "not allowed in a compensation",
        )
        .with_label(stmt, "this statement is ignored")
        .with_note(format!("a compensation is not a node: {why}"))
        .with_help(format!(
            "remove `{name}`; a compensation holds `agent` + `prompt`, or `execute`/`send` actions"
        ));
        self.emit(d);
    }

    fn missing_in_compensation(&mut self, id: &str, what: &str, span: Span) {
        let d = Diagnostic::new(
            codes::E0105,
            format!("compensation `{id}` has no `{what}`"),
            span,
            "declared without it",
        )
        .with_help(format!(
            "an agent compensation needs both `agent = \"…\"` and `prompt = \"…\"`; add `{what}`"
        ));
        self.emit(d);
    }
}
