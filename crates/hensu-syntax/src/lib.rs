//! The front end of hensu: source text → tokens (logos) → syntax tree with spans (chumsky).
//! No I/O. See [`ast`] for the tree and `grammar/hwf.ebnf` for the grammar.
//!
//! * [`lex`] — tokens, comments and lexical diagnostics (E0001–E0006).
//! * [`parse`] — the syntax tree and every lexical and syntax diagnostic of the file (E0001–E0006,
//!   E0010, E0011, E0016, E0101 for a Kotlin modifier before a declaration; E0903 for inputs
//!   over 4 GiB). Never panics; one run reports all errors;
//!   recovered statements and expressions are [`ast::StmtKind::Error`] / [`ast::ExprKind::Error`].
//! * [`parse_deferring_graphs`] + [`parse_lexed_statement`] — the compiler's path: a workflow's
//!   graph statements are left out of the tree (their tokens kept) and parsed one at a time as
//!   they are lowered.
//! * [`parse_statement`] — one statement of a block, lexed and parsed alone (the language
//!   server's re-parse of an edited node).
//! * [`decode_source`] + [`parse_decoded`] — the path for callers that read bytes: each invalid
//!   UTF-8 byte becomes one U+001A (offsets stay those of the file) plus one E0001 per run.
//! * [`trim_indent`], [`trim_margin`], [`unescape`] — Kotlin's string semantics.
//! * [`dump`] — a compact s-expression rendering of a tree (tests, debugging).
//!
//! Pipeline: `lexer` (logos behind a hand-written path for the common tokens; comments to a
//! side table) → `fast` (a hand-written recursive-descent parser for error-free input over the
//! raw tokens, applying the layout rules as it goes) or, when the fast path gives up, `layout` (drops insignificant newlines,
//! balances delimiters with E0011, refuses nesting deeper than [`MAX_DEPTH`] with E0016) →
//! `parser` (chumsky 0.12 with recovery and specific messages for Kotlin constructs outside the
//! language). Both paths build identical trees.

pub mod ast;
mod dump;
mod fast;
mod layout;
mod lexer;
mod parser;
mod strings;

use hensu_diagnostics::codes;
use std::borrow::Cow;

use chumsky::Parser as _;
use chumsky::input::Input as _;
pub use hensu_diagnostics::{Diagnostic, Span};

pub use dump::dump;
pub use layout::MAX_DEPTH;
pub use lexer::{Lexed, Number, NumberError, Token, TokenKind, classify_number};
pub use strings::{kotlin_is_whitespace, trim_indent, trim_margin, unescape};

/// Kotlin modifiers an author may put before a declaration (`override node("x") { … }`,
/// `private agent("a") { … }`); the language has none.
pub const KOTLIN_MODIFIERS: &[&str] = &[
    "override",
    "private",
    "public",
    "protected",
    "internal",
    "open",
    "abstract",
    "final",
    "sealed",
    "data",
    "inline",
    "suspend",
    "lateinit",
    "operator",
    "infix",
    "external",
    "tailrec",
];

/// What to do about a Kotlin modifier before a statement (the parser's and the lowering's
/// E0101 say the same).
pub fn modifier_help(word: &str) -> String {
    if word == "override" {
        "remove `override`: to replace the transitions of an inherited node, write `routes(\"id\") { … }` in `graph { }`; a node of the extending workflow itself takes no modifier".to_string()
    } else {
        format!("remove `{word}`: declarations take no modifiers")
    }
}

/// The result of [`parse`].
#[derive(Clone, Debug)]
pub struct Parsed<'s> {
    pub file: ast::SourceFile<'s>,
    /// Lexical and syntax diagnostics, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed<'_> {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

fn too_large(len: usize) -> Diagnostic {
    Diagnostic::new(
        codes::E0903,
        format!("file too large ({len} bytes)"),
        Span::new(0, 0),
        "files larger than 4 GiB cannot be compiled",
    )
    .with_help("split the workflow into sub-workflows")
}

/// Lex a source file: tokens (newlines included, comments and whitespace excluded), the comment
/// table and the lexical diagnostics. A leading BOM is skipped.
pub fn lex(src: &str) -> Lexed {
    if u32::try_from(src.len()).is_err() {
        return Lexed {
            diagnostics: vec![too_large(src.len())],
            ..Lexed::default()
        };
    }
    lexer::lex_source(src)
}

/// [`lex`] with every token from logos (no hand-written path); for the differential test of the
/// lexer's two paths.
#[doc(hidden)]
pub fn lex_with_logos_only(src: &str) -> Lexed {
    if u32::try_from(src.len()).is_err() {
        return lex(src);
    }
    lexer::lex_source_logos(src)
}

/// Parse a source file into a syntax tree, reporting every lexical and syntax error.
pub fn parse(src: &str) -> Parsed<'_> {
    parse_with(src, false).0
}

/// A `graph { … }` or `state { … }` block written directly in a `workflow(…) { … }` block whose
/// statements [`parse_deferring_graphs`] left out of the tree: the block in the tree has no
/// statements, and each statement is parsed when it is needed with [`parse_lexed_statement`]
/// (from the tokens kept for it) or [`parse_statement`]`(src, span, depth)` (lexed again).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeferredGraph {
    /// The block's span, braces included (the span of the block in the tree).
    pub block: Span,
    /// The open braces (`{`) around the statements.
    pub depth: u32,
    /// Each statement's span, in order.
    pub stmts: Vec<Span>,
    /// Each statement's tokens (those of the file's lexing, exactly the statement's), in the
    /// order of [`DeferredGraph::stmts`]: [`parse_lexed_statement`] parses one without lexing it
    /// again (docs/performance.md, *Round 3, fifth sitting: `check` throughput*).
    pub tokens: Vec<Box<[Token]>>,
}

/// [`parse`] for a caller that lowers a workflow's graph one statement at a time (the compiler:
/// docs/performance.md, *Round 3, fourth sitting: the front end's heap*): the statements of each
/// `graph { }` and `state { }` block directly inside a `workflow(…) { … }` block are skipped
/// (balanced, with the layout rules) instead of parsed, and their spans and tokens returned, so
/// neither block's tree ever exists whole, and their statements are lexed and parsed once
/// (*fifth sitting: `check` throughput*). The rest of the tree and the diagnostics
/// are those of [`parse`] when every deferred statement parses alone with
/// [`parse_statement`]; when one does not (an error in it, or a statement `parse_statement`
/// refuses), parse the file with [`parse`]. A file with a lexical error, an error outside its
/// graphs or an annotation inside one gets the whole tree and no deferred block.
pub fn parse_deferring_graphs(src: &str) -> (Parsed<'_>, Vec<DeferredGraph>) {
    parse_with(src, true)
}

/// [`parse_decoded`] with the graphs deferred as [`parse_deferring_graphs`] defers them.
pub fn parse_decoded_deferring_graphs<'s>(
    src: &'s str,
    decode_diagnostics: Vec<Diagnostic>,
) -> (Parsed<'s>, Vec<DeferredGraph>) {
    let (parsed, deferred) = parse_with(src, true);
    (merge_decoded(parsed, decode_diagnostics), deferred)
}

fn parse_with(src: &str, defer: bool) -> (Parsed<'_>, Vec<DeferredGraph>) {
    let len = match u32::try_from(src.len()) {
        Ok(len) => len,
        Err(_) => {
            let parsed = Parsed {
                file: ast::SourceFile {
                    items: Vec::new(),
                    comments: Vec::new(),
                    span: Span::new(0, u32::MAX),
                },
                diagnostics: vec![too_large(src.len())],
            };
            return (parsed, Vec::new());
        }
    };
    let Lexed {
        tokens,
        comments,
        mut diagnostics,
    } = lexer::lex_source(src);
    // The fast path reads the raw tokens (the layout pass fused in); only a file it gives up on
    // gets the layout pass's stream and the chumsky parser.
    let mut deferred = Vec::new();
    // A statement with a lexical diagnostic does not parse alone (`parse_statement`).
    let items = if defer && diagnostics.is_empty() {
        match fast::parse_deferring_graphs(src, &tokens) {
            Ok((items, graphs)) => {
                deferred = graphs;
                Some(items)
            }
            Err(true) => fast::parse(src, &tokens),
            Err(false) => None,
        }
    } else {
        fast::parse(src, &tokens)
    };
    let mut file = match items {
        Some(items) => ast::SourceFile {
            items,
            comments: Vec::new(),
            span: Span::new(0, len),
        },
        None => {
            let stream = layout::layout(src, &tokens, &mut diagnostics);
            drop(tokens);
            chumsky_parse(src, len, &stream, &mut diagnostics)
        }
    };
    file.comments = comments;
    check_items(&file, &mut diagnostics);
    diagnostics.sort_by_key(|d| (d.primary.span.start, d.primary.span.end));
    (Parsed { file, diagnostics }, deferred)
}

/// One statement of a block, parsed alone: `src[range]` is the text of a statement that sits
/// inside `depth` open braces (`{`) of `src`. Returns the statement and its comments with spans
/// in `src`, the tree [`parse`] builds for it in the whole file, when the text lexes without a
/// diagnostic and is exactly one statement the fast path accepts; otherwise `None` (parse the
/// whole file). Used by the language server to re-parse one graph node after an edit inside it
/// (docs/performance.md, *Language server, round 3*): the caller keeps the statement's first
/// and last bytes unchanged, so the tokens around it lex and lay out as before.
pub fn parse_statement(
    src: &str,
    range: std::ops::Range<u32>,
    depth: u32,
) -> Option<(ast::Stmt<'_>, Vec<ast::Comment>)> {
    // Offset 0 is where a byte-order mark is skipped: never a statement of a block.
    if range.start == 0 {
        return None;
    }
    let piece = src.get(range.start as usize..range.end as usize)?;
    let Lexed {
        mut tokens,
        mut comments,
        diagnostics,
    } = lexer::lex_source(piece);
    if !diagnostics.is_empty() {
        return None;
    }
    let at = |s: Span| Span::new(s.start + range.start, s.end + range.start);
    for t in &mut tokens {
        t.span = at(t.span);
    }
    for c in &mut comments {
        c.span = at(c.span);
    }
    let stmt = fast::statement(src, &tokens, depth)?;
    (stmt.span == Span::new(range.start, range.end)).then_some((stmt, comments))
}

/// [`parse_statement`] for a statement of a [`DeferredGraph`], from the tokens the file's lexing
/// gave it (`tokens`, its entry of [`DeferredGraph::tokens`]) instead of lexing its text again:
/// the tree [`parse`] builds for it in the whole file, or `None` when the tokens are not exactly
/// one statement spanning `span` that the fast path accepts (parse the whole file then).
pub fn parse_lexed_statement<'s>(
    src: &'s str,
    span: Span,
    tokens: &[Token],
    depth: u32,
) -> Option<ast::Stmt<'s>> {
    StatementParser::new(src).parse(span, tokens, depth)
}

/// [`parse_lexed_statement`] for many statements of one text: the parser's scratch stacks are
/// kept from one statement to the next (the compiler parses a large graph's statements one
/// after the other).
pub struct StatementParser<'s> {
    src: &'s str,
    scratch: fast::Scratch<'s>,
}

impl<'s> StatementParser<'s> {
    pub fn new(src: &'s str) -> Self {
        StatementParser {
            src,
            scratch: fast::Scratch::default(),
        }
    }

    /// [`parse_lexed_statement`]`(src, span, tokens, depth)`.
    pub fn parse(&mut self, span: Span, tokens: &[Token], depth: u32) -> Option<ast::Stmt<'s>> {
        if span.start == 0 {
            return None;
        }
        let stmt = fast::statement_with(self.src, tokens, depth, &mut self.scratch)?;
        (stmt.span == span).then_some(stmt)
    }
}

/// Parse with the chumsky parser only (no fast path); for differential tests of the two parsers.
#[doc(hidden)]
pub fn parse_with_chumsky(src: &str) -> Parsed<'_> {
    let Ok(len) = u32::try_from(src.len()) else {
        return parse(src);
    };
    let Lexed {
        tokens,
        comments,
        mut diagnostics,
    } = lexer::lex_source(src);
    let stream = layout::layout(src, &tokens, &mut diagnostics);
    let mut file = chumsky_parse(src, len, &stream, &mut diagnostics);
    file.comments = comments;
    check_items(&file, &mut diagnostics);
    diagnostics.sort_by_key(|d| (d.primary.span.start, d.primary.span.end));
    Parsed { file, diagnostics }
}

/// The fast path alone: `None` when it gives up (for differential tests).
#[doc(hidden)]
pub fn parse_fast_only(src: &str) -> Option<ast::SourceFile<'_>> {
    let len = u32::try_from(src.len()).ok()?;
    let Lexed {
        tokens, comments, ..
    } = lexer::lex_source(src);
    let items = fast::parse(src, &tokens)?;
    Some(ast::SourceFile {
        items,
        comments,
        span: Span::new(0, len),
    })
}

fn chumsky_parse<'s>(
    src: &'s str,
    len: u32,
    stream: &[(TokenKind, layout::CSpan)],
    diagnostics: &mut Vec<Diagnostic>,
) -> ast::SourceFile<'s> {
    let eoi = layout::CSpan::from(len..len);
    let input = stream.split_token_span(eoi);
    let (output, errors) = parser::file_parser(src).parse(input).into_output_errors();
    let mut seen_spans: Vec<(u32, u32)> = Vec::new();
    for err in errors {
        // One syntax error per position: recovery can report the same place twice.
        let key = (err.span.start, err.span.end);
        if seen_spans.contains(&key) {
            continue;
        }
        seen_spans.push(key);
        // A generic error right after an error token repeats what the lexer already reported.
        if err.custom.is_none() && follows_error_token(stream, err.span.start) {
            continue;
        }
        if let Some(d) = err.into_diagnostic(src) {
            diagnostics.push(d);
        }
    }
    let mut file = output.unwrap_or(ast::SourceFile {
        items: Vec::new(),
        comments: Vec::new(),
        span: Span::new(0, len),
    });
    file.span = Span::new(0, len);
    file
}

/// Parse text produced by [`decode_source`], merging its diagnostics (an invalid UTF-8 sequence
/// outside a string is reported once, not again as an unexpected U+001A character).
pub fn parse_decoded<'s>(src: &'s str, decode_diagnostics: Vec<Diagnostic>) -> Parsed<'s> {
    merge_decoded(parse(src), decode_diagnostics)
}

fn merge_decoded<'s>(mut parsed: Parsed<'s>, decode_diagnostics: Vec<Diagnostic>) -> Parsed<'s> {
    if decode_diagnostics.is_empty() {
        return parsed;
    }
    parsed.diagnostics.retain(|d| {
        !(codes::E0001 == d.code
            && decode_diagnostics
                .iter()
                .any(|u| u.primary.span.start == d.primary.span.start))
    });
    parsed.diagnostics.extend(decode_diagnostics);
    parsed
        .diagnostics
        .sort_by_key(|d| (d.primary.span.start, d.primary.span.end));
    parsed
}

/// What an invalid UTF-8 byte is decoded to: U+001A SUBSTITUTE, a one-byte character the lexer
/// rejects like any other stray character.
pub const INVALID_BYTE_PLACEHOLDER: char = '\u{1A}';

/// Decode a file's bytes. Valid UTF-8 is borrowed; every invalid byte becomes one
/// [`INVALID_BYTE_PLACEHOLDER`] and each invalid run one E0001 diagnostic. One byte for one
/// byte keeps every offset of the returned text an offset into the original file, so spans are
/// right in every renderer (a 3-byte U+FFFD shifted every later span by 2 bytes per bad byte,
/// past the end of the file). Use [`parse_decoded`] to parse the result.
pub fn decode_source(bytes: &[u8]) -> (Cow<'_, str>, Vec<Diagnostic>) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (Cow::Borrowed(s), Vec::new()),
        Err(_) => {
            let mut out = String::with_capacity(bytes.len());
            let mut diags = Vec::new();
            for chunk in bytes.utf8_chunks() {
                out.push_str(chunk.valid());
                if !chunk.invalid().is_empty() {
                    let start = out.len();
                    out.extend(std::iter::repeat_n(
                        INVALID_BYTE_PLACEHOLDER,
                        chunk.invalid().len(),
                    ));
                    // Adjacent invalid sequences make one diagnostic.
                    if let Some(last) = diags
                        .last_mut()
                        .filter(|d: &&mut Diagnostic| d.primary.span.end as usize == start)
                    {
                        last.primary.span.end = u32::try_from(out.len()).unwrap_or(u32::MAX);
                        continue;
                    }
                    diags.push(
                        Diagnostic::new(
                            codes::E0001,
                            "invalid UTF-8",
                            Span::from_range(start..out.len()),
                            "not valid UTF-8",
                        )
                        .with_help("save the file as UTF-8"),
                    );
                }
            }
            (Cow::Owned(out), diags)
        }
    }
}

fn follows_error_token(stream: &[(TokenKind, layout::CSpan)], at: u32) -> bool {
    let idx = stream.partition_point(|(_, s)| s.start < at);
    idx.checked_sub(1)
        .and_then(|i| stream.get(i))
        .is_some_and(|(k, _)| *k == TokenKind::Error)
}

/// File-level checks that are syntactic: a second `fun` is a user function.
fn check_items(file: &ast::SourceFile<'_>, diags: &mut Vec<Diagnostic>) {
    let mut first_fun: Option<Span> = None;
    for item in &file.items {
        if let ast::StmtKind::Fun { name, .. } = &item.kind {
            match first_fun {
                None => first_fun = Some(name.span),
                Some(first) => diags.push(
                    Diagnostic::new(codes::E0010, "user functions are not supported", name.span, "a second function")
                        .with_label(first, "the workflow function")
                        .with_help("a file declares exactly one `fun name() = workflow(\"…\") { … }` and nothing else"),
                ),
            }
        }
    }
}
