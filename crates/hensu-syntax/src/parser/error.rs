//! The parser's error type [`PErr`]: cheap to build and merge while chumsky backtracks (bit sets
//! of expected tokens and labels, no allocation on the happy path), turned into one
//! [`Diagnostic`] per reported error at the end.

use chumsky::DefaultExpected;
use chumsky::error::LabelError;
use chumsky::input::MappedInput;
use chumsky::prelude::*;
use chumsky::util::MaybeRef;
use hensu_diagnostics::{Code, Diagnostic, Span, codes};

use crate::layout::CSpan;
use crate::lexer::TokenKind;

pub(crate) type In<'t> = MappedInput<'t, TokenKind, CSpan, &'t [(TokenKind, CSpan)]>;
pub(crate) type Ex = extra::Err<PErr>;

/// What the parser expected, for messages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Lbl {
    Expression,
    Identifier,
    StatementEnd,
    Statement,
    CallArgs,
    Block,
    FunDecl,
    Import,
    Package,
    Value,
}

impl Lbl {
    fn describe(self) -> &'static str {
        match self {
            Lbl::Expression => "expression",
            Lbl::Identifier => "identifier",
            Lbl::StatementEnd => "end of statement (newline or `;`)",
            Lbl::Statement => "statement",
            Lbl::CallArgs => "call arguments",
            Lbl::Block => "block",
            Lbl::FunDecl => "function declaration",
            Lbl::Import => "import",
            Lbl::Package => "package declaration",
            Lbl::Value => "value",
        }
    }
}

/// A specific diagnostic attached to a parse error.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Custom {
    pub code: Code,
    pub message: String,
    pub label: String,
    pub help: Option<String>,
}

/// The parser's error type: cheap to build and merge (bit sets), a boxed [`Custom`] only for the
/// specific Kotlin-construct messages.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PErr {
    pub span: CSpan,
    pub found: Option<TokenKind>,
    pub tokens: u64,
    pub labels: u32,
    pub eoi: bool,
    pub context: Option<Lbl>,
    pub custom: Option<Box<Custom>>,
}

impl PErr {
    pub(crate) fn custom(
        span: CSpan,
        code: Code,
        message: impl Into<String>,
        label: impl Into<String>,
        help: &str,
    ) -> Self {
        PErr {
            span,
            found: None,
            tokens: 0,
            labels: 0,
            eoi: false,
            context: None,
            custom: Some(Box::new(Custom {
                code,
                message: message.into(),
                label: label.into(),
                help: (!help.is_empty()).then(|| help.to_owned()),
            })),
        }
    }
}

impl<'t> chumsky::error::Error<'t, In<'t>> for PErr {
    #[inline]
    fn merge(mut self, other: Self) -> Self {
        if self.custom.is_some() {
            return self;
        }
        if other.custom.is_some() {
            return other;
        }
        self.tokens |= other.tokens;
        self.labels |= other.labels;
        self.eoi |= other.eoi;
        if self.context.is_none() {
            self.context = other.context;
        }
        self
    }
}

impl<'t> LabelError<'t, In<'t>, DefaultExpected<'t, TokenKind>> for PErr {
    #[inline]
    fn expected_found<E: IntoIterator<Item = DefaultExpected<'t, TokenKind>>>(
        expected: E,
        found: Option<MaybeRef<'t, TokenKind>>,
        span: CSpan,
    ) -> Self {
        let mut tokens = 0u64;
        let mut eoi = false;
        for e in expected {
            match e {
                DefaultExpected::Token(t) => tokens |= 1u64 << (*t as u8 as u32 % 64),
                DefaultExpected::EndOfInput => eoi = true,
                _ => {}
            }
        }
        PErr {
            span,
            found: found.map(|t| *t),
            tokens,
            labels: 0,
            eoi,
            context: None,
            custom: None,
        }
    }
}

impl<'t> LabelError<'t, In<'t>, Lbl> for PErr {
    #[inline]
    fn expected_found<E: IntoIterator<Item = Lbl>>(
        expected: E,
        found: Option<MaybeRef<'t, TokenKind>>,
        span: CSpan,
    ) -> Self {
        let mut labels = 0u32;
        for l in expected {
            labels |= 1 << (l as u8);
        }
        PErr {
            span,
            found: found.map(|t| *t),
            tokens: 0,
            labels,
            eoi: false,
            context: None,
            custom: None,
        }
    }

    #[inline]
    fn label_with(&mut self, label: Lbl) {
        if self.custom.is_none() {
            self.tokens = 0;
            self.eoi = false;
            self.labels = 1 << (label as u8);
        }
    }

    #[inline]
    fn in_context(&mut self, label: Lbl, _span: CSpan) {
        if self.context.is_none() {
            self.context = Some(label);
        }
    }
}

const ALL_KINDS: [TokenKind; 51] = {
    use TokenKind::*;
    [
        Ident,
        BacktickIdent,
        Int,
        Long,
        Double,
        BadNumber,
        Str,
        RawStr,
        UnterminatedStr,
        UnterminatedRawStr,
        KwFun,
        KwPackage,
        KwImport,
        KwReturn,
        KwTrue,
        KwFalse,
        KwNull,
        KwVal,
        KwVar,
        KwIf,
        KwWhen,
        KwFor,
        KwWhile,
        KwDo,
        KwElse,
        KwIn,
        KwClass,
        KwObject,
        LBrace,
        RBrace,
        LParen,
        RParen,
        LBracket,
        RBracket,
        Comma,
        Semi,
        Colon,
        Eq,
        Dot,
        DotDot,
        Plus,
        Minus,
        Star,
        Arrow,
        Annotation,
        Op,
        Newline,
        LineComment,
        BlockComment,
        Bom,
        Error,
    ]
};

impl PErr {
    /// Turn the error into a diagnostic; `None` when it only repeats an earlier diagnostic (the
    /// offending token is an error token or a synthetic closer of an unclosed delimiter).
    pub(crate) fn into_diagnostic(self, src: &str) -> Option<Diagnostic> {
        let span = Span::new(self.span.start, self.span.end);
        if let Some(c) = self.custom {
            let mut d = Diagnostic::new(c.code, c.message, span, c.label);
            if let Some(h) = c.help {
                d = d.with_help(h);
            }
            return Some(d);
        }
        if matches!(self.found, Some(TokenKind::Error | TokenKind::BadNumber)) {
            return None;
        }
        if self.found.is_some() && span.is_empty() {
            return None;
        }
        let found = match self.found {
            None => "end of file".to_owned(),
            Some(TokenKind::Ident) => {
                format!("`{}`", src.get(span.range()).unwrap_or("identifier"))
            }
            Some(TokenKind::Op) => format!("`{}`", src.get(span.range()).unwrap_or("operator")),
            Some(k @ (TokenKind::Int | TokenKind::Long | TokenKind::Double)) => {
                let t = src.get(span.range()).unwrap_or("");
                if t.len() <= 24 {
                    format!("`{t}`")
                } else {
                    k.describe().to_owned()
                }
            }
            Some(k) => k.describe().to_owned(),
        };
        let mut items: Vec<&'static str> = Vec::new();
        let statement_end = self.labels & (1 << Lbl::StatementEnd as u8) != 0;
        for l in [
            Lbl::Expression,
            Lbl::Identifier,
            Lbl::Value,
            Lbl::Statement,
            Lbl::Block,
            Lbl::CallArgs,
            Lbl::FunDecl,
            Lbl::Import,
            Lbl::Package,
            Lbl::StatementEnd,
        ] {
            let redundant = l == Lbl::Identifier && self.labels & (1 << Lbl::Expression as u8) != 0;
            if self.labels & (1 << l as u8) != 0
                && (!statement_end || l == Lbl::StatementEnd)
                && !redundant
            {
                items.push(l.describe());
            }
        }
        let mut seen = 0u64;
        for k in ALL_KINDS {
            let bit = 1u64 << (k as u8 as u32 % 64);
            if self.tokens & bit != 0 && seen & bit == 0 {
                seen |= bit;
                // After a complete statement only closers are worth listing next to "end of statement".
                if statement_end && !matches!(k, TokenKind::RBrace | TokenKind::RParen) {
                    continue;
                }
                if matches!(k, TokenKind::Semi | TokenKind::Newline) && statement_end {
                    continue;
                }
                items.push(k.describe());
            }
        }
        if self.eoi {
            items.push("end of file");
        }
        items.dedup();
        let expected = match items.len() {
            0 => "something else".to_owned(),
            1 => items[0].to_owned(),
            n if n <= 6 => format!("{} or {}", items[..n - 1].join(", "), items[n - 1]),
            _ => format!("{}, … or {}", items[..5].join(", "), items[items.len() - 1]),
        };
        let mut message = format!("expected {expected}, found {found}");
        if let Some(ctx) = self.context {
            message.push_str(" in ");
            message.push_str(ctx.describe());
        }
        let mut d = Diagnostic::new(codes::E0010, message, span, format!("unexpected {found}"));
        if statement_end {
            d = d.with_help("put each statement on its own line, or separate statements with `;`");
        } else if self.context == Some(Lbl::CallArgs)
            && self.tokens & (1u64 << (TokenKind::Comma as u8 as u32 % 64)) != 0
        {
            d = d.with_help("separate arguments with `,`");
        }
        // `"a"` newline `+ "b"`: Kotlin ends the statement at the line break, so a `+` that
        // starts a line begins a new (invalid) statement.
        let text = src.get(span.range()).unwrap_or("");
        let line_start = src
            .get(..span.start as usize)
            .is_some_and(|before| before.trim_end_matches([' ', '\t']).ends_with(['\n', '\r']));
        if matches!(text, "+" | "-" | "*" | "/") && line_start {
            d = d
                .with_note("a statement ends at the line break, so this line starts a new one")
                .with_help(format!(
                    "to continue the expression, put `{text}` at the end of the previous line"
                ));
        }
        Some(d)
    }
}
