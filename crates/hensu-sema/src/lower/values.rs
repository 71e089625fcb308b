//! Typed values: strings, numbers, booleans, enum constants, models, lists and JSON values,
//! with E0103 (wrong type), E0108 (unknown constant) and E0107 (out of range) diagnostics.

use hensu_diagnostics::{Applicability, Diagnostic, Span, Suggestion, codes};
use hensu_syntax::ast::{Arg, Call, Expr, ExprKind, StrExpr};
use serde_json::Value;

use super::{Lowerer, is_valid_identifier};
use crate::schema::{self, EnumType};
use crate::suggest::{did_you_mean, replace_with};

/// What an expression is, for "found …" in messages.
pub(crate) fn describe(e: &Expr<'_>) -> String {
    match &e.kind {
        ExprKind::Name(id) => format!("the name `{}`", id.name),
        ExprKind::Path(p) => format!(
            "`{}`",
            p.segments
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(".")
        ),
        ExprKind::Str(_) => "String".to_string(),
        ExprKind::Int(_) => "Int".to_string(),
        ExprKind::Long(_) => "Long".to_string(),
        ExprKind::Duration(_) => "a Duration".to_string(),
        ExprKind::Double(_) => "Double".to_string(),
        ExprKind::Bool(_) => "Boolean".to_string(),
        ExprKind::Null => "null".to_string(),
        ExprKind::Call(c) => format!("a call to `{}`", c.callee.name),
        ExprKind::MethodCall(m) => format!("a method call `.{}()`", m.method.name),
        ExprKind::Chain { .. } => "an infix expression".to_string(),
        ExprKind::Range { .. } => "a range".to_string(),
        ExprKind::Add { .. } => "an addition".to_string(),
        ExprKind::Error => "an invalid expression".to_string(),
    }
}

impl Lowerer<'_> {
    /// E0103: `what` expected `expected`, found `e`. Nothing for error nodes (already reported).
    pub fn wrong_type(&mut self, e: &Expr<'_>, expected: &str, what: &dyn std::fmt::Display) {
        if matches!(e.kind, ExprKind::Error) {
            return;
        }
        let found = describe(e);
        let mut d = Diagnostic::new(
            codes::E0103,
            format!("{what} expects {expected}, found {found}"),
            e.span,
            format!("expected {expected}"),
        );
        match &e.kind {
            ExprKind::MethodCall(m) => {
                d = d.with_help(format!(
                    "`.{}()` is not supported: only `.trimIndent()` and `.trimMargin()` can be applied to a string",
                    m.method.name
                ));
            }
            ExprKind::Add { .. } => {
                d = d.with_help("only string literals can be joined with `+`; the result is folded at compile time");
            }
            ExprKind::Name(id) if expected.starts_with("String") => {
                d = d.with_help(format!("strings are quoted: `\"{}\"`", id.name));
            }
            ExprKind::Int(_) | ExprKind::Long(_) if expected == "Int" => {
                d = d.with_help("a Long does not fit an Int; drop the `L` suffix");
            }
            _ => {}
        }
        self.emit(d);
    }

    /// E0107: value out of range.
    pub fn out_of_range(&mut self, span: Span, message: String, label: &str) {
        self.emit(Diagnostic::new(codes::E0107, message, span, label));
    }

    pub fn str_expr<'a, 's>(
        &mut self,
        e: &'a Expr<'s>,
        what: &dyn std::fmt::Display,
    ) -> Option<&'a StrExpr<'s>> {
        match &e.kind {
            ExprKind::Str(s) => Some(s),
            _ => {
                self.wrong_type(e, "String", what);
                None
            }
        }
    }

    pub fn string(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<String> {
        self.str_expr(e, what).map(|s| s.value.to_string())
    }

    /// A string, or `None` for `null` (`Ok(None)`).
    pub fn opt_string(
        &mut self,
        e: &Expr<'_>,
        what: &dyn std::fmt::Display,
    ) -> Result<Option<String>, ()> {
        if matches!(e.kind, ExprKind::Null) {
            return Ok(None);
        }
        self.string(e, what).map(Some).ok_or(())
    }

    pub fn int(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<i64> {
        match e.kind {
            ExprKind::Int(v) if i32::try_from(v).is_err() => {
                self.int_literal_too_big(e.span, v, what);
                None
            }
            ExprKind::Int(v) => Some(v),
            _ => {
                self.wrong_type(e, "Int", what);
                None
            }
        }
    }

    /// E0006: an integer literal beyond the 32-bit range where an Int is expected. Kotlin types
    /// such a literal as Long and rejects it for an Int parameter; upstream cannot read it.
    fn int_literal_too_big(&mut self, span: Span, v: i64, what: &dyn std::fmt::Display) {
        self.emit(
            Diagnostic::new(
                codes::E0006,
                format!("{what} is an Int; {v} does not fit in 32 bits"),
                span,
                "out of the Int range",
            )
            .with_note(format!("an Int is between {} and {}", i32::MIN, i32::MAX)),
        );
    }

    pub fn long(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<i64> {
        match e.kind {
            ExprKind::Int(v) | ExprKind::Long(v) => Some(v),
            _ => {
                self.wrong_type(e, "Long", what);
                None
            }
        }
    }

    /// A Kotlin duration (`30.seconds`) in milliseconds. A bare number is E0103 with the
    /// duration to write instead: a number alone would leave its unit to guess.
    pub fn duration(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<i64> {
        match e.kind {
            ExprKind::Duration(ms) => Some(ms),
            ExprKind::Int(v) | ExprKind::Long(v) => {
                let d = Diagnostic::new(
                    codes::E0103,
                    format!("{what} expects a Duration, found a number"),
                    e.span,
                    "expected a Duration",
                )
                .with_help(format!(
                    "give the unit: `{v}.seconds`, `{v}.milliseconds` or `{v}.minutes`"
                ));
                self.emit(d);
                None
            }
            _ => {
                self.wrong_type(e, "a Duration (`30.seconds`)", what);
                None
            }
        }
    }

    pub fn double(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<f64> {
        match e.kind {
            ExprKind::Int(v) | ExprKind::Long(v) => Some(v as f64),
            ExprKind::Double(v) => Some(v),
            _ => {
                self.wrong_type(e, "Double", what);
                None
            }
        }
    }

    pub fn boolean(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<bool> {
        match e.kind {
            ExprKind::Bool(v) => Some(v),
            _ => {
                self.wrong_type(e, "Boolean", what);
                None
            }
        }
    }

    /// An enum constant (`VarType.STRING` or bare `STRING`); the returned string is the wire
    /// spelling of a valid constant.
    pub fn enum_constant(
        &mut self,
        e: &Expr<'_>,
        ty: EnumType,
        what: &dyn std::fmt::Display,
    ) -> Option<&'static str> {
        let constants = ty.constants();
        let (qualifier, constant, span) = match &e.kind {
            ExprKind::Name(id) => (None, id.name, id.span),
            ExprKind::Path(p) if p.segments.len() >= 2 => {
                let n = p.segments.len();
                (
                    Some(p.segments[n - 2]),
                    p.segments[n - 1].name,
                    p.segments[n - 1].span,
                )
            }
            ExprKind::Str(s) => {
                self.wrong_type(e, ty.name(), what);
                if let Some(c) = constants.iter().find(|c| **c == s.value)
                    && let Some(last) = self.diags.last_mut()
                {
                    let constant = format!("{}.{c}", ty.name());
                    last.help.push(format!("write the constant: `{constant}`"));
                    last.suggestions.push(Suggestion {
                        file: last.primary.file,
                        span: e.span,
                        message: format!("replace with `{constant}`"),
                        replacement: constant,
                        applicability: Applicability::MachineApplicable,
                    });
                }
                return None;
            }
            _ => {
                self.wrong_type(e, ty.name(), what);
                return None;
            }
        };
        if let Some(q) = qualifier
            && q.name != ty.name()
        {
            let other = EnumType::ALL.iter().find(|t| t.name() == q.name);
            let mut d = if other.is_some() || q.name == "Models" {
                Diagnostic::new(
                    codes::E0103,
                    format!(
                        "{what} expects {}, found a `{}` constant",
                        ty.name(),
                        q.name
                    ),
                    e.span,
                    format!("expected {}", ty.name()),
                )
            } else {
                Diagnostic::new(
                    codes::E0108,
                    format!("unknown enum `{}`", q.name),
                    q.span,
                    format!("expected {}", ty.name()),
                )
            };
            let suggestion = constants
                .iter()
                .find(|c| **c == constant)
                .map(|c| format!("{}.{c}", ty.name()));
            if let Some(s) = &suggestion {
                d = d.with_suggestion(
                    e.span,
                    s.as_str(),
                    format!("replace with `{s}`"),
                    Applicability::MachineApplicable,
                );
            }
            d = d.with_help(match suggestion {
                Some(s) => format!("did you mean `{s}`?"),
                None => format!(
                    "{} is one of {}",
                    ty.name(),
                    constants
                        .iter()
                        .map(|c| format!("`{c}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
            self.emit(d);
            return None;
        }
        if let Some(c) = constants.iter().find(|c| **c == constant) {
            return Some(c);
        }
        let mut d = Diagnostic::new(
            codes::E0108,
            format!("unknown {} constant `{constant}`", ty.name()),
            span,
            format!("not a {}", ty.name()),
        );
        d = match did_you_mean(constant, constants.iter().copied()) {
            Some(s) => replace_with(
                d.with_help(format!("did you mean `{}.{s}`?", ty.name())),
                span,
                s,
            ),
            None => d.with_help(format!(
                "{} is one of {}",
                ty.name(),
                constants
                    .iter()
                    .map(|c| format!("`{c}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        };
        self.emit(d);
        None
    }

    /// A model: any string, or a `Models.*` constant mapped to its id string.
    pub fn model(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<String> {
        let (constant, span) = match &e.kind {
            ExprKind::Str(s) => return Some(s.value.to_string()),
            ExprKind::Path(p) if p.segments.len() >= 2 => {
                let n = p.segments.len();
                let q = p.segments[n - 2];
                if q.name != "Models" {
                    let d = Diagnostic::new(
                        codes::E0108,
                        format!(
                            "unknown model constant `{}.{}`",
                            q.name,
                            p.segments[n - 1].name
                        ),
                        e.span,
                        "not a model",
                    )
                    .with_help("a model is a string (`\"gpt-4o\"`) or a `Models.*` constant");
                    self.emit(d);
                    return None;
                }
                (p.segments[n - 1].name, p.segments[n - 1].span)
            }
            ExprKind::Name(id) => (id.name, id.span),
            _ => {
                self.wrong_type(e, "String or `Models.*`", what);
                return None;
            }
        };
        if let Some(id) = schema::model_id(constant) {
            return Some(id.to_string());
        }
        let mut d = Diagnostic::new(
            codes::E0108,
            format!("unknown model constant `Models.{constant}`"),
            span,
            "not a `Models` constant",
        );
        d = match did_you_mean(constant, schema::MODELS.iter().map(|(c, _)| *c)) {
            Some(s) => replace_with(d.with_help(format!("did you mean `Models.{s}`?")), span, s),
            None => d.with_help("any model id string is accepted too, e.g. `model = \"my-model\"`"),
        };
        self.emit(d);
        None
    }

    /// `listOf("a", "b")` → the strings with their spans.
    pub fn string_list(
        &mut self,
        e: &Expr<'_>,
        what: &dyn std::fmt::Display,
    ) -> Option<Vec<(String, Span)>> {
        match &e.kind {
            ExprKind::Call(c) if c.callee.name == "listOf" && c.block.is_none() => {
                let items = c.args.as_ref().map(|a| &a.items[..]).unwrap_or(&[]);
                let mut out = Vec::new();
                for arg in items {
                    self.no_named_arg(arg);
                    if let Some(s) = self.string(&arg.value, what) {
                        out.push((s, arg.value.span));
                    }
                }
                Some(out)
            }
            _ => {
                self.wrong_type(e, "List<String> (`listOf(\"a\", …)`)", what);
                None
            }
        }
    }

    /// Reports a named argument (`name = value`), which the language does not support.
    pub fn no_named_arg(&mut self, arg: &Arg<'_>) {
        if let Some(name) = arg.name {
            let d = Diagnostic::new(
                codes::E0101,
                format!("named argument `{}` is not supported", name.name),
                name.span,
                "named argument",
            )
            .with_help("pass the arguments positionally, in order");
            self.emit(d);
        }
    }

    /// The positional arguments of a call, arity-checked (E0103 on a wrong count). `None` when
    /// fewer than `min` were given.
    pub fn call_args<'t, 's>(
        &mut self,
        call: &'t Call<'s>,
        min: usize,
        max: Option<usize>,
        syntax: &str,
    ) -> Option<Vec<&'t Expr<'s>>> {
        let items: &[Arg<'s>] = call.args.as_ref().map(|a| &a.items[..]).unwrap_or(&[]);
        let span = call
            .args
            .as_ref()
            .map(|a| a.span)
            .unwrap_or(call.callee.span);
        for arg in items {
            self.no_named_arg(arg);
        }
        let n = items.len();
        if n < min || max.is_some_and(|m| n > m) {
            let expected = match max {
                Some(m) if m == min => format!("{min}"),
                Some(m) => format!("{min} to {m}"),
                None => format!("at least {min}"),
            };
            let d = Diagnostic::new(
                codes::E0103,
                format!(
                    "`{}` takes {expected} argument{}, found {n}",
                    call.callee.name,
                    if expected == "1" { "" } else { "s" }
                ),
                span,
                format!("expected {expected}"),
            )
            .with_help(format!("write `{syntax}`"));
            self.emit(d);
            if n < min {
                return None;
            }
        }
        let take = max.unwrap_or(n).min(n);
        Some(items[..take].iter().map(|a| &a.value).collect())
    }

    /// String arguments (`writes("a", "b")`); with `lists`, `listOf(…)` arguments are flattened
    /// (`targets(listOf(…))`).
    pub fn string_args(
        &mut self,
        args: &[&Expr<'_>],
        what: &dyn std::fmt::Display,
        lists: bool,
    ) -> Vec<(String, Span)> {
        let mut out = Vec::new();
        for e in args {
            if lists && matches!(&e.kind, ExprKind::Call(c) if c.callee.name == "listOf") {
                if let Some(items) = self.string_list(e, what) {
                    out.extend(items);
                }
                continue;
            }
            if let Some(s) = self.string(e, what) {
                out.push((s, e.span));
            }
        }
        out
    }

    /// The id argument of a declaration (`node("id")`), checked for E0207.
    pub fn id_arg(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<(String, Span)> {
        let s = self.string(e, what)?;
        self.check_identifier(&s, e.span, what);
        Some((s, e.span))
    }

    /// E0207 when `s` is not a valid id.
    pub fn check_identifier(&mut self, s: &str, span: Span, what: &dyn std::fmt::Display) {
        if is_valid_identifier(s) {
            return;
        }
        let reason = if s.is_empty() {
            "it is empty".to_string()
        } else if s.len() > 255 {
            format!("it is {} characters long (at most 255)", s.len())
        } else if !s.starts_with(|c: char| c.is_ascii_alphanumeric()) {
            "it must start with an ASCII letter or digit".to_string()
        } else {
            let bad: String = s
                .chars()
                .filter(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
                .take(5)
                .collect();
            format!("it contains `{bad}`")
        };
        let d = Diagnostic::new(
            codes::E0207,
            format!("invalid {what} `{}`: {reason}", truncate(s, 60)),
            span,
            "invalid identifier",
        )
        .with_help("ids must match `[A-Za-z0-9][A-Za-z0-9._-]*` and be at most 255 characters");
        self.emit(d);
    }

    /// A JSON value: String, number, Boolean, null, `listOf(…)`, `mapOf("k" to v, …)`.
    pub fn json_value(&mut self, e: &Expr<'_>, what: &dyn std::fmt::Display) -> Option<Value> {
        match &e.kind {
            ExprKind::Str(s) => Some(Value::String(s.value.to_string())),
            ExprKind::Int(v) | ExprKind::Long(v) => Some(Value::from(*v)),
            ExprKind::Double(v) => match serde_json::Number::from_f64(*v) {
                Some(n) => Some(Value::Number(n)),
                None => {
                    self.wrong_type(e, "a finite number", what);
                    None
                }
            },
            ExprKind::Bool(b) => Some(Value::Bool(*b)),
            ExprKind::Null => Some(Value::Null),
            ExprKind::Call(c) if c.callee.name == "listOf" && c.block.is_none() => {
                let items = c.args.as_ref().map(|a| &a.items[..]).unwrap_or(&[]);
                let mut out = Vec::new();
                for arg in items {
                    self.no_named_arg(arg);
                    out.push(self.json_value(&arg.value, what)?);
                }
                Some(Value::Array(out))
            }
            ExprKind::Call(c) if c.callee.name == "mapOf" && c.block.is_none() => {
                let items = c.args.as_ref().map(|a| &a.items[..]).unwrap_or(&[]);
                let mut map = serde_json::Map::new();
                for arg in items {
                    self.no_named_arg(arg);
                    if let Some((k, _, v)) = self.pair(&arg.value, what) {
                        map.insert(k, v);
                    }
                }
                Some(Value::Object(map))
            }
            _ => {
                self.wrong_type(
                    e,
                    "a String, number, Boolean, `listOf(…)` or `mapOf(…)`",
                    what,
                );
                None
            }
        }
    }

    /// `"key" to value` → key, key span, value.
    pub fn pair(
        &mut self,
        e: &Expr<'_>,
        what: &dyn std::fmt::Display,
    ) -> Option<(String, Span, Value)> {
        match &e.kind {
            ExprKind::Chain { head, links } if links.len() == 1 && links[0].word.name == "to" => {
                let key = self.string(head, &"a map key")?;
                let Some(v) = &links[0].arg else {
                    self.emit(
                        Diagnostic::new(
                            codes::E0012,
                            "incomplete entry: `to` needs a value",
                            links[0].word.span,
                            "value missing here",
                        )
                        .with_help("write `\"key\" to value`"),
                    );
                    return None;
                };
                let value = self.json_value(v, what)?;
                Some((key, head.span, value))
            }
            _ => {
                self.wrong_type(e, "an entry `\"key\" to value`", what);
                None
            }
        }
    }
}

pub(crate) fn truncate(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut out: String = s.chars().take(max).collect();
        out.push('…');
        out
    }
}

/// `` `name` `` for diagnostics, formatted only when a diagnostic is emitted (the lowering names
/// every value it reads; formatting each name eagerly cost one allocation per statement).
#[derive(Clone, Copy)]
pub(crate) struct Quoted<'a>(pub &'a str);

impl std::fmt::Display for Quoted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "`{}`", self.0)
    }
}
