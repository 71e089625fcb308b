//! The syntax tree: a small, generic Kotlin-subset tree. It knows calls, blocks, assignments,
//! infix chains, string expressions and literals — not what `node`, `onScore` or `writes` mean.
//! The meaning of every statement is decided by the schema-driven lowering in `hensu-sema`, so
//! the parser stays small, recovers well and the LSP completes from the same schema.
//!
//! Every node carries a byte [`Span`]. Identifiers borrow from the source (`'s`); string values
//! borrow when no escape, concatenation or trim changed them.

use std::borrow::Cow;

pub use hensu_diagnostics::Span;

/// A whole `.hwf` / `.kt` file.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceFile<'s> {
    /// Top-level statements in order: `package`, `import`, `fun … = workflow(…) { … }`,
    /// a bare `workflow(…) { … }` call, or recovered errors.
    pub items: Vec<Stmt<'s>>,
    /// Every comment of the file, in source order (for the formatter and hover docs).
    pub comments: Vec<Comment>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommentKind {
    /// `// …` (span excludes the line break)
    Line,
    /// `/* … */` (nesting, as in Kotlin)
    Block,
    /// `/** … */` — a KDoc comment, documentation of what follows it
    Doc,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Comment {
    pub kind: CommentKind,
    pub span: Span,
}

/// An identifier. Backticks are stripped: `` `in` `` has `name == "in"` and
/// [`Ident::backticked`]. 24 bytes: whether it was backticked follows from the span.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ident<'s> {
    pub name: &'s str,
    /// The identifier as written, backticks included.
    pub span: Span,
}

impl Ident<'_> {
    /// Written in backticks (`` `in` ``): the span covers two bytes more than the name.
    pub fn backticked(&self) -> bool {
        self.span.len() as usize != self.name.len()
    }
}

/// `a.b.c` — a qualified name (`VarType.STRING`, `Models.GPT_4O`, `import io.x.*` paths).
#[derive(Clone, Debug, PartialEq)]
pub struct Path<'s> {
    /// Exactly sized (paths are built once and never grow after parsing).
    pub segments: Box<[Ident<'s>]>,
    pub span: Span,
}

/// `{ stmt* }` — the span includes both braces.
#[derive(Clone, Debug, PartialEq)]
pub struct Block<'s> {
    pub stmts: Vec<Stmt<'s>>,
    pub span: Span,
}

/// A statement. Its span covers its annotations too, so "inside the statement" includes them.
#[derive(Clone, Debug, PartialEq)]
pub struct Stmt<'s> {
    pub kind: StmtKind<'s>,
    pub span: Span,
    /// The annotations written before it (`@Suppress("W0307")`), in order; almost always empty
    /// (an empty boxed slice does not allocate).
    pub annotations: Box<[Annotation<'s>]>,
}

/// `@Name` or `@Name(args)` before a statement, as in Kotlin. The tree keeps any name; only
/// `@Suppress("W0307", …)` means something (docs/language.md, *Suppressing a warning*), which
/// the lowering decides.
#[derive(Clone, Debug, PartialEq)]
pub struct Annotation<'s> {
    /// The name after the `@` (its span excludes the `@`).
    pub name: Ident<'s>,
    /// `(…)` when written.
    pub args: Option<Args<'s>>,
    /// From the `@` to the end of the arguments.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum StmtKind<'s> {
    /// `target = value` (`role = "Writer"`, `temperature = 0.7`).
    Assign { target: Ident<'s>, value: Expr<'s> },
    /// Any expression used as a statement: a call (`node("x") { … }`, `writes("a")`), an infix
    /// chain (`onFailure retry 3 otherwise "x"`, `start at "a"`, `"k" to 1`).
    Expr(Expr<'s>),
    /// `package a.b.c`
    Package(Path<'s>),
    /// `import a.b.c` or `import a.b.*` (`star == true`)
    Import { path: Path<'s>, star: bool },
    /// `fun name() = expr` or `fun name() { … }` — the upstream wrapper around `workflow(…)`.
    Fun { name: Ident<'s>, body: FunBody<'s> },
    /// `return expr` inside a block-bodied `fun`.
    Return(Option<Expr<'s>>),
    /// A statement that could not be parsed; the parser reported it and skipped to the end of the
    /// statement (an explicit error node, never silently dropped).
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub enum FunBody<'s> {
    Expr(Expr<'s>),
    Block(Block<'s>),
}

/// An expression: 40 bytes (a 32-byte kind and the span; 80 before). The large payloads (calls,
/// method calls, folded strings) are boxed, so every expression moves cheaply through the
/// recursive-descent parser and lists of arguments, links and statements stay small.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr<'s> {
    pub kind: ExprKind<'s>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind<'s> {
    /// A simple name: `STRING`, `true`-like words are literals, not names.
    Name(Ident<'s>),
    /// A qualified name with at least two segments: `VarType.STRING`.
    Path(Path<'s>),
    /// A string expression folded to one constant (literals, `+`, `.trimIndent()`, `.trimMargin()`).
    Str(Box<StrExpr<'s>>),
    /// An integer literal without suffix (Kotlin `Int`; values beyond `i32` are `Long` in Kotlin).
    Int(i64),
    /// An integer literal with an `L` suffix.
    Long(i64),
    /// A floating-point literal (`0.7`, `1e-3`).
    Double(f64),
    /// A Kotlin duration `30.seconds` (`kotlin.time`: an integer literal with `.milliseconds`,
    /// `.seconds`, `.minutes` or `.hours`), in milliseconds (saturating).
    Duration(i64),
    Bool(bool),
    Null,
    /// `callee(args)`, `callee(args) { block }` or `callee { block }`.
    Call(Box<Call<'s>>),
    /// `receiver.method(args)` for any method other than the folded string trims
    /// (kept so the lowering can say what is not supported).
    MethodCall(Box<MethodCall<'s>>),
    /// An infix chain: `head word arg word word arg …` — Kotlin infix calls, left-associative.
    /// `onRejection revise "p" withFeedback retry 3 otherwise "x"` is
    /// head `onRejection`, links `revise "p"`, `withFeedback`, `retry 3`, `otherwise "x"`.
    /// `"k" to v` is a chain with one `to` link.
    Chain {
        head: Box<Expr<'s>>,
        links: Box<[Link<'s>]>,
    },
    /// `start..end`
    Range {
        start: Box<Expr<'s>>,
        end: Box<Expr<'s>>,
    },
    /// `lhs + rhs` where an operand is not a string literal (strings fold into [`ExprKind::Str`]).
    Add {
        lhs: Box<Expr<'s>>,
        rhs: Box<Expr<'s>>,
    },
    /// A recovered expression; already reported.
    Error,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Call<'s> {
    pub callee: Ident<'s>,
    /// `None` when the call has no parentheses (`agents { … }`).
    pub args: Option<Args<'s>>,
    /// The trailing lambda block, if any.
    pub block: Option<Box<Block<'s>>>,
}

/// `receiver.method(args)`: see [`ExprKind::MethodCall`].
#[derive(Clone, Debug, PartialEq)]
pub struct MethodCall<'s> {
    pub receiver: Expr<'s>,
    pub method: Ident<'s>,
    pub args: Box<[Arg<'s>]>,
}

/// `( arg, … )` — the span includes the parentheses.
#[derive(Clone, Debug, PartialEq)]
pub struct Args<'s> {
    pub items: Box<[Arg<'s>]>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Arg<'s> {
    /// `name = value` named argument (Kotlin); `None` for positional.
    pub name: Option<Ident<'s>>,
    pub value: Expr<'s>,
}

/// One `word [arg]` step of an infix chain.
#[derive(Clone, Debug, PartialEq)]
pub struct Link<'s> {
    pub word: Ident<'s>,
    /// The argument after the word. A bare simple name after a word always starts the next link
    /// (`goto "x" withFeedback retry 3`), so arguments are literals, strings, qualified names,
    /// calls, ranges and parenthesised expressions.
    pub arg: Option<Expr<'s>>,
}

/// A folded string expression.
#[derive(Clone, Debug, PartialEq)]
pub struct StrExpr<'s> {
    /// The constant value: escapes decoded, literals concatenated, trims applied as Kotlin does.
    pub value: Cow<'s, str>,
    /// The literals it was made from, in source order (one literal is stored inline).
    pub parts: StrParts,
    /// True when `value` is exactly the text between the quotes of a single literal (no escape,
    /// no trim, no concatenation), so offsets in `value` map to `parts[0].content` one to one.
    pub verbatim: bool,
}

/// The literals of a [`StrExpr`]: almost every string is a single literal, which is stored
/// without a heap allocation. Derefs to a slice. `Many` is a growable vector so a long `a + b +
/// …` chain appends in amortised constant time (the parser folds left to right).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StrParts {
    One(StrLit),
    Many(Vec<StrLit>),
}

impl StrParts {
    pub fn as_slice(&self) -> &[StrLit] {
        match self {
            StrParts::One(lit) => std::slice::from_ref(lit),
            StrParts::Many(v) => v,
        }
    }

    /// Append the literals of `other` (string concatenation).
    pub fn extend(&mut self, other: StrParts) {
        match self {
            StrParts::Many(v) => v.extend_from_slice(other.as_slice()),
            StrParts::One(first) => {
                let mut v = Vec::with_capacity(4);
                v.push(*first);
                v.extend_from_slice(other.as_slice());
                *self = StrParts::Many(v);
            }
        }
    }
}

impl std::ops::Deref for StrParts {
    type Target = [StrLit];
    fn deref(&self) -> &[StrLit] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a StrParts {
    type Item = &'a StrLit;
    type IntoIter = std::slice::Iter<'a, StrLit>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StrLit {
    /// The whole literal including quotes.
    pub span: Span,
    /// The text between the quotes.
    pub content: Span,
    /// `"""…"""`
    pub raw: bool,
}

impl<'s> Expr<'s> {
    /// The string value if this is a string expression.
    pub fn as_str(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Str(s) => Some(&s.value),
            _ => None,
        }
    }

    /// The simple name if this is a bare identifier.
    pub fn as_name(&self) -> Option<Ident<'s>> {
        match &self.kind {
            ExprKind::Name(id) => Some(*id),
            _ => None,
        }
    }
}

// The sizes the parser's speed and the tree's memory depend on (a regression here is a
// regression of both): see the comment on [`Expr`].
const _: () = {
    assert!(std::mem::size_of::<Ident<'_>>() == 24);
    assert!(std::mem::size_of::<Expr<'_>>() == 40);
    assert!(std::mem::size_of::<Stmt<'_>>() <= 96);
};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // test code: a failed unwrap is a failed test

    use super::*;

    /// A 100,000-term `"a" + "b" + …` prompt folds into one string of 100,000 parts (appending
    /// a part is amortised O(1), so the fold is linear; before, every `+` copied the list).
    #[test]
    fn a_100k_term_concatenation_folds_into_one_string() {
        const TERMS: usize = 100_000;
        let mut src = String::from("workflow(\"w\") {\n    description = \"t0\"");
        for i in 1..TERMS {
            src.push_str(&format!(" + \"t{i}\""));
        }
        src.push_str("\n}\n");
        let parsed = crate::parse(&src);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        let StmtKind::Expr(e) = &parsed.file.items[0].kind else {
            panic!("a workflow call expected");
        };
        let ExprKind::Call(call) = &e.kind else {
            panic!("a call expected");
        };
        let StmtKind::Assign { value, .. } = &call.block.as_ref().unwrap().stmts[0].kind else {
            panic!("an assignment expected");
        };
        let ExprKind::Str(s) = &value.kind else {
            panic!("a folded string expected, got {:?}", value.kind);
        };
        assert_eq!(s.parts.len(), TERMS);
        assert_eq!(s.parts[TERMS - 1].content, {
            let at = u32::try_from(src.rfind("t99999").unwrap()).unwrap();
            Span::new(at, at + 6)
        });
        let expected_len: usize = (0..TERMS).map(|i| format!("t{i}").len()).sum();
        assert_eq!(s.value.len(), expected_len);
        assert!(s.value.ends_with("t99998t99999"));
        assert!(!s.verbatim);
    }
}
