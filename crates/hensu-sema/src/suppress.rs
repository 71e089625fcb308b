//! `@Suppress("W0307", …)` on a statement (docs/language.md, *Suppressing a warning*): the
//! listed warnings are not reported when their primary span lies inside the annotated statement
//! (annotations included). It is Kotlin's own annotation, so a file stays valid for the Kotlin
//! DSL. Errors cannot be suppressed, and a code that names no warning is itself a warning
//! (W0317), as an unknown code in `[lints]` is (W0315). Any other annotation is an E0101.

use hensu_diagnostics::{Code, Diagnostic, FileId, Severity, Span, codes};
use hensu_syntax::ast::{Annotation, Expr, ExprKind, FunBody, SourceFile, Stmt, StmtKind};

use crate::suggest::{did_you_mean, replace_with};

/// The warnings one annotated statement suppresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Suppression {
    /// The annotated statement, annotations included.
    pub scope: Span,
    /// The suppressed warning codes, as written (each one catalogued).
    pub codes: Vec<Code>,
}

/// The suppressions of a file and the diagnostics about its annotations (E0101 for an
/// annotation other than `@Suppress`, E0103 for an argument that is not a string, W0317 for a
/// code that is not a warning). Walks every statement, however deep, without recursion.
pub(crate) fn collect(file: &SourceFile<'_>) -> (Vec<Suppression>, Vec<Diagnostic>) {
    let mut suppressions = Vec::new();
    let mut diagnostics = Vec::new();
    let mut stmts: Vec<&Stmt<'_>> = file.items.iter().collect();
    let mut exprs: Vec<&Expr<'_>> = Vec::new();
    loop {
        if let Some(stmt) = stmts.pop() {
            if !stmt.annotations.is_empty() {
                let codes = suppressed_codes(&stmt.annotations, &mut diagnostics);
                if !codes.is_empty() {
                    suppressions.push(Suppression {
                        scope: stmt.span,
                        codes,
                    });
                }
            }
            match &stmt.kind {
                StmtKind::Assign { value: e, .. }
                | StmtKind::Expr(e)
                | StmtKind::Return(Some(e))
                | StmtKind::Fun {
                    body: FunBody::Expr(e),
                    ..
                } => exprs.push(e),
                StmtKind::Fun {
                    body: FunBody::Block(b),
                    ..
                } => stmts.extend(&b.stmts),
                StmtKind::Package(_)
                | StmtKind::Import { .. }
                | StmtKind::Return(None)
                | StmtKind::Error => {}
            }
        } else if let Some(expr) = exprs.pop() {
            match &expr.kind {
                ExprKind::Call(call) => {
                    if let Some(args) = &call.args {
                        exprs.extend(args.items.iter().map(|a| &a.value));
                    }
                    if let Some(block) = &call.block {
                        stmts.extend(&block.stmts);
                    }
                }
                ExprKind::MethodCall(m) => {
                    exprs.push(&m.receiver);
                    exprs.extend(m.args.iter().map(|a| &a.value));
                }
                ExprKind::Chain { head, links } => {
                    exprs.push(head);
                    exprs.extend(links.iter().filter_map(|l| l.arg.as_ref()));
                }
                ExprKind::Range { start: a, end: b } | ExprKind::Add { lhs: a, rhs: b } => {
                    exprs.push(a);
                    exprs.push(b);
                }
                ExprKind::Name(_)
                | ExprKind::Path(_)
                | ExprKind::Str(_)
                | ExprKind::Int(_)
                | ExprKind::Long(_)
                | ExprKind::Duration(_)
                | ExprKind::Double(_)
                | ExprKind::Bool(_)
                | ExprKind::Null
                | ExprKind::Error => {}
            }
        } else {
            break;
        }
    }
    suppressions.sort_by_key(|s| (s.scope.start, s.scope.end));
    diagnostics.sort_by_key(|d| (d.primary.span.start, d.primary.span.end));
    (suppressions, diagnostics)
}

/// The warning codes the annotations of one statement name; reports everything else.
fn suppressed_codes(
    annotations: &[Annotation<'_>],
    diagnostics: &mut Vec<Diagnostic>,
) -> Vec<Code> {
    let mut found = Vec::new();
    for annotation in annotations {
        if annotation.name.name != "Suppress" {
            diagnostics.push(unknown_annotation(annotation));
            continue;
        }
        let items = annotation.args.as_ref().map_or(&[][..], |a| &a.items[..]);
        if items.is_empty() {
            let span = annotation.args.as_ref().map_or(annotation.span, |a| a.span);
            diagnostics.push(
                Diagnostic::new(
                    codes::W0317,
                    "`@Suppress` names no warning",
                    span,
                    "no code given",
                )
                .with_help("name the warnings to suppress: `@Suppress(\"W0307\")`"),
            );
            continue;
        }
        for arg in items {
            let (Some(text), None) = (arg.value.as_str(), arg.name) else {
                diagnostics.push(
                    Diagnostic::new(
                        codes::E0103,
                        "`@Suppress` takes warning codes as strings",
                        arg.value.span,
                        "expected a string such as \"W0307\"",
                    )
                    .with_help("write each code as a string: `@Suppress(\"W0307\", \"W0303\")`"),
                );
                continue;
            };
            match checked_code(text, arg.value.span) {
                Ok(code) => {
                    if !found.contains(&code) {
                        found.push(code);
                    }
                }
                Err(d) => diagnostics.push(*d),
            }
        }
    }
    found
}

/// The catalogued warning `text` names, or the W0317 saying why it names none.
fn checked_code(text: &str, span: Span) -> Result<Code, Box<Diagnostic>> {
    if let Some(code) = codes::ALL.iter().copied().find(|c| c.as_str() == text) {
        if code.is_warning() {
            return Ok(code);
        }
        return Err(Box::new(
            Diagnostic::new(
                codes::W0317,
                format!("`{text}` is an error and cannot be suppressed"),
                span,
                "only warnings can be suppressed",
            )
            .with_help("remove the code and fix the error instead"),
        ));
    }
    let mut d = Diagnostic::new(
        codes::W0317,
        format!("unknown diagnostic code `{text}` in `@Suppress`"),
        span,
        "no warning has this code",
    );
    let warnings = codes::ALL
        .iter()
        .filter(|c| c.is_warning())
        .map(|c| c.as_str());
    match did_you_mean(text, warnings) {
        Some(s) => {
            d = d.with_help(format!("did you mean `{s}`?"));
            // The suggestion replaces the text inside the quotes.
            if span.len() as usize == text.len() + 2 {
                d = replace_with(d, Span::new(span.start + 1, span.end - 1), s);
            }
        }
        None => {
            d = d.with_help(
                "name a warning code such as `W0307`; `hensuc explain CODE` lists what each means",
            )
        }
    }
    Err(Box::new(d))
}

fn unknown_annotation(annotation: &Annotation<'_>) -> Diagnostic {
    let name = annotation.name;
    let mut d = Diagnostic::new(
        codes::E0101,
        format!("unknown annotation `@{}`", name.name),
        annotation.span,
        "not an annotation of the language",
    );
    match did_you_mean(name.name, ["Suppress"]) {
        Some(s) => d = replace_with(d.with_help(format!("did you mean `@{s}`?")), name.span, s),
        None => {
            d = d.with_help(
                "the only annotation is `@Suppress(\"W0307\")`, which turns warnings off",
            )
        }
    }
    d
}

/// Drops the warnings of `file` that a suppression covers: the code is listed and the primary
/// span lies inside the annotated statement. Errors and other files' diagnostics are kept.
pub fn apply(
    suppressions: &[Suppression],
    file: FileId,
    diagnostics: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    if suppressions.is_empty() {
        return diagnostics;
    }
    diagnostics
        .into_iter()
        .filter(|d| {
            !(d.severity == Severity::Warning
                && d.primary.file == file
                && suppressions.iter().any(|s| {
                    s.scope.start <= d.primary.span.start
                        && d.primary.span.end <= s.scope.end
                        && s.codes.iter().any(|c| *c == d.code)
                }))
        })
        .collect()
}
