//! The printer: walks the syntax tree block by block and statement by statement, re-emitting
//! every token from its source slice with canonical whitespace. Comments come from a cursor over
//! the comment table: before any token is written, every comment that starts before it is
//! written first, so no comment can be lost or reordered.

use hensu_syntax::ast::{Block, Comment, CommentKind, SourceFile, Stmt};
use hensu_syntax::{Token, TokenKind};

use crate::collect::Info;
use crate::{FormatError, MAX_WIDTH};

const INDENT: usize = 4;

/// Whitespace requested before the next written text; the strongest request wins.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ws {
    None,
    Space,
    Line,
    Blank,
}

/// How the first token of a statement is separated from what precedes it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Start {
    /// Its own line (a blank line before it if the source had one).
    Line,
    /// After a space (inside a one-line block).
    Space,
}

/// The mutable part of the printer, copied for speculative one-line rendering.
#[derive(Clone, Copy, Debug)]
struct State {
    out_len: usize,
    pending: Ws,
    pending_indent: usize,
    /// Indentation (levels) of the current output line.
    line_indent: usize,
    /// Column (in chars) at the end of the output.
    col: usize,
    /// End offset of the last source element (token or comment) written.
    last_end: usize,
    /// The source has a line break between the last written token and `last_end`.
    break_since_token: bool,
    next_comment: usize,
    /// Just wrote a `{` that opens a multi-line block (or nothing yet): no blank line now.
    after_open: bool,
    /// Indentation for own-line comments at this point.
    comment_indent: usize,
    /// Between statements (not inside one): a blank line before a comment is kept.
    blank_ok: bool,
    /// Tokens written (for the completeness check).
    emitted: usize,
}

struct Printer<'a, 's> {
    src: &'s str,
    tokens: Vec<Token>,
    comments: &'a [Comment],
    info: &'a Info<'a, 's>,
    out: String,
    st: State,
}

/// Frame of the continuation indentation inside a statement.
#[derive(Clone, Copy)]
struct Frame {
    /// Indentation of a closing `)` on its own line.
    base: usize,
    /// Indentation of a continuation line.
    cont: usize,
}

pub(crate) fn print(
    src: &str,
    file: &SourceFile<'_>,
    tokens: &[Token],
    info: &Info<'_, '_>,
) -> Result<String, FormatError> {
    let tokens: Vec<Token> = tokens
        .iter()
        .copied()
        .filter(|t| t.kind != TokenKind::Newline)
        .collect();
    let semis = tokens.iter().filter(|t| t.kind == TokenKind::Semi).count();
    let total = tokens.len();
    let mut p = Printer {
        src,
        tokens,
        comments: &file.comments,
        info,
        out: String::with_capacity(src.len() + src.len() / 8),
        st: State {
            out_len: 0,
            pending: Ws::None,
            pending_indent: 0,
            line_indent: 0,
            col: 0,
            last_end: 0,
            break_since_token: false,
            next_comment: 0,
            after_open: true,
            comment_indent: 0,
            blank_ok: true,
            emitted: 0,
        },
    };
    let ranges = p.stmt_ranges(&file.items, 0, p.tokens.len());
    for range in ranges {
        p.stmt(range, 0, Start::Line);
    }
    p.st.comment_indent = 0;
    p.st.blank_ok = true;
    p.flush_comments(u32::MAX);
    if !p.out.is_empty() {
        p.out.push('\n');
    }
    // Every token except the statement separators `;` must have been written exactly once.
    if p.st.emitted + semis != total {
        return Err(FormatError::Internal(format!(
            "wrote {} of {} tokens",
            p.st.emitted,
            total - semis
        )));
    }
    Ok(p.out)
}

/// Line breaks in a stretch of whitespace (`\r\n` counts once).
fn count_breaks(gap: &str) -> usize {
    let bytes = gap.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            n += 1;
        }
        i += 1;
    }
    n
}

fn has_break(s: &str) -> bool {
    s.contains(['\n', '\r'])
}

/// `\r\n` and lone `\r` → `\n`.
fn normalize_newlines(s: &str) -> String {
    s.replace("\r\n", "\n").replace('\r', "\n")
}

impl<'a, 's> Printer<'a, 's> {
    fn slice(&self, start: usize, end: usize) -> &'s str {
        self.src.get(start..end).unwrap_or("")
    }

    fn text(&self, t: Token) -> &'s str {
        self.slice(t.span.start as usize, t.span.end as usize)
    }

    fn token_index(&self, pos: u32) -> usize {
        self.tokens.partition_point(|t| t.span.start < pos)
    }

    // ---- output --------------------------------------------------------------------------------

    fn request(&mut self, ws: Ws, indent: usize) {
        if ws >= Ws::Line {
            self.st.pending_indent = indent;
        }
        if ws > self.st.pending {
            self.st.pending = ws;
        }
    }

    /// Write the pending whitespace.
    fn materialize(&mut self) {
        match self.st.pending {
            Ws::None => {}
            Ws::Space => {
                if self.st.col > 0 {
                    self.out.push(' ');
                    self.st.col += 1;
                }
            }
            Ws::Line | Ws::Blank => {
                if !self.out.is_empty() {
                    if self.st.pending == Ws::Blank && !self.st.after_open {
                        self.out.push('\n');
                    }
                    self.out.push('\n');
                    let indent = self.st.pending_indent * INDENT;
                    self.out.extend(std::iter::repeat_n(' ', indent));
                    self.st.col = indent;
                    self.st.line_indent = self.st.pending_indent;
                }
            }
        }
        self.st.pending = Ws::None;
        self.st.after_open = false;
    }

    fn push(&mut self, text: &str) {
        self.out.push_str(text);
        match text.rfind('\n') {
            Some(i) => self.st.col = text.get(i + 1..).map_or(0, |t| t.chars().count()),
            None => self.st.col += text.chars().count(),
        }
        self.st.out_len = self.out.len();
    }

    fn write(&mut self, text: &str) {
        self.materialize();
        self.push(text);
    }

    fn snapshot(&self) -> State {
        self.st
    }

    fn restore(&mut self, st: State) {
        self.out.truncate(st.out_len);
        self.st = st;
    }

    // ---- comments ------------------------------------------------------------------------------

    fn flush_comments(&mut self, before: u32) {
        while let Some(&c) = self.comments.get(self.st.next_comment) {
            if c.span.start >= before {
                break;
            }
            self.st.next_comment += 1;
            self.comment(c);
        }
    }

    fn comment(&mut self, c: Comment) {
        let (start, end) = (c.span.start as usize, c.span.end as usize);
        let gap = self.slice(self.st.last_end.min(start), start);
        let breaks = count_breaks(gap);
        let indent = self.st.comment_indent;
        let same_line = breaks == 0 && !self.out.is_empty();
        if !same_line {
            let blank = breaks >= 2 && self.st.blank_ok;
            self.request(if blank { Ws::Blank } else { Ws::Line }, indent);
        } else if !self.out.ends_with(['(', '[']) {
            self.request(Ws::Space, indent);
        }
        let raw = self.slice(start, end);
        // A comment on the line of a `{` does not allow a blank line after it either.
        let after_open = self.st.after_open && same_line;
        self.materialize();
        self.st.after_open = after_open;
        let text = match c.kind {
            CommentKind::Line => raw.trim_end().to_owned(),
            CommentKind::Block | CommentKind::Doc => {
                let line_start = self
                    .src
                    .get(..start)
                    .and_then(|s| s.rfind(['\n', '\r']).map(|i| i + 1))
                    .unwrap_or(0);
                let orig_col = self.slice(line_start, start).chars().count();
                reindent_comment(raw, orig_col, self.st.col)
            }
        };
        self.push(&text);
        self.st.last_end = end;
        // Only real line breaks count: a line break inside a block comment does not end a
        // statement, so it must not become one.
        if breaks > 0 || c.kind == CommentKind::Line {
            self.st.break_since_token = true;
        }
        // What follows the comment in the source: a line break stays a line break.
        let after = self.src.get(end..).unwrap_or("");
        let next_is_break = after
            .chars()
            .find(|ch| !matches!(ch, ' ' | '\t' | '\u{c}'))
            .is_none_or(|ch| ch == '\n' || ch == '\r');
        if c.kind == CommentKind::Line || next_is_break {
            self.request(Ws::Line, indent);
        } else {
            self.request(Ws::Space, indent);
        }
    }

    // ---- tokens --------------------------------------------------------------------------------

    fn token(&mut self, t: Token) {
        let text = self.text(t);
        let owned;
        let text = if let Some(ty) = self.info.qualify.get(&t.span.start) {
            owned = format!("{ty}.{text}");
            owned.as_str()
        } else if t.kind == TokenKind::RawStr && has_break(text) && self.trimmed_raw(t) {
            owned = normalize_newlines(text);
            owned.as_str()
        } else {
            text
        };
        self.write(text);
        self.st.last_end = t.span.end as usize;
        self.st.break_since_token = false;
        self.st.emitted += 1;
    }

    /// A raw string directly followed by `.trimIndent()` / `.trimMargin(…)`: its line breaks do
    /// not reach the value (Kotlin's `lines()` splits CRLF, CR and LF alike).
    fn trimmed_raw(&self, t: Token) -> bool {
        let i = self.token_index(t.span.start);
        match (self.tokens.get(i + 1), self.tokens.get(i + 2)) {
            (Some(dot), Some(name)) => {
                dot.kind == TokenKind::Dot
                    && name.kind == TokenKind::Ident
                    && matches!(self.text(*name), "trimIndent" | "trimMargin")
            }
            _ => false,
        }
    }

    fn is_call_paren(&self, idx: usize) -> bool {
        let Some(t) = self.tokens.get(idx) else {
            return false;
        };
        if self.info.call_parens.contains(&t.span.start) {
            return true;
        }
        // `.name(`: a method call (also the folded `.trimIndent()`).
        match (
            idx.checked_sub(1).and_then(|i| self.tokens.get(i)),
            idx.checked_sub(2).and_then(|i| self.tokens.get(i)),
        ) {
            (Some(name), Some(dot)) => {
                // `fun name(`: the parameter list.
                matches!(name.kind, TokenKind::Ident | TokenKind::BacktickIdent)
                    && matches!(dot.kind, TokenKind::Dot | TokenKind::KwFun)
            }
            _ => false,
        }
    }

    fn space_between(&self, prev: Token, cur: Token, cur_idx: usize) -> bool {
        use TokenKind::*;
        if matches!(
            cur.kind,
            Comma | Semi | RParen | RBracket | Dot | DotDot | Colon
        ) {
            return false;
        }
        if matches!(prev.kind, LParen | LBracket | Dot | DotDot | Minus) {
            return false;
        }
        if cur.kind == LParen && self.is_call_paren(cur_idx) {
            return false;
        }
        if cur.kind == Op && self.text(cur) == "?." {
            return false;
        }
        true
    }

    /// A source line break between `prev` and `cur` (inside a statement) that is dropped.
    fn joins(&self, prev: Token, cur: Token, cur_idx: usize) -> bool {
        use TokenKind::*;
        matches!(cur.kind, Dot | LBrace | Comma | DotDot)
            || matches!(prev.kind, Dot | Minus)
            || (cur.kind == LParen && self.is_call_paren(cur_idx))
    }

    // ---- structure -----------------------------------------------------------------------------

    /// The token range of each statement of a block (or of the file) whose tokens are
    /// `lo..hi`. A statement's span can miss the parentheses of a parenthesised expression at its
    /// edges, so a statement starts at the `(`s right before its span and owns every token up to
    /// the next statement (the `;` separators are skipped when it is written).
    fn stmt_ranges(&self, stmts: &[Stmt<'s>], lo: usize, hi: usize) -> Vec<(usize, usize)> {
        let mut begins: Vec<usize> = Vec::with_capacity(stmts.len());
        let mut floor = lo.min(hi);
        for s in stmts {
            let mut b = self.token_index(s.span.start).clamp(floor, hi);
            while b > floor
                && self
                    .tokens
                    .get(b - 1)
                    .is_some_and(|t| t.kind == TokenKind::LParen)
            {
                b -= 1;
            }
            begins.push(b);
            floor = self.token_index(s.span.end).clamp(b, hi);
        }
        (0..begins.len())
            .map(|i| (begins[i], begins.get(i + 1).copied().unwrap_or(hi)))
            .collect()
    }

    /// Write one statement (the tokens `range`), with nested blocks formatted recursively.
    fn stmt(&mut self, range: (usize, usize), indent: usize, start: Start) {
        let mut frames = vec![Frame {
            base: indent,
            cont: indent + 1,
        }];
        let mut prev: Option<Token> = None;
        let mut i = range.0;
        while i < range.1 {
            let Some(&t) = self.tokens.get(i) else {
                break;
            };
            if t.kind == TokenKind::Semi {
                i += 1;
                continue;
            }
            let top = frames.last().copied().unwrap_or(Frame {
                base: indent,
                cont: indent + 1,
            });
            let after_annotation =
                prev.is_some_and(|p| self.info.annotation_ends.contains(&p.span.end));
            self.st.comment_indent = if prev.is_none() || after_annotation {
                indent
            } else {
                top.cont
            };
            self.st.blank_ok = prev.is_none();
            if t.kind == TokenKind::LBrace
                && prev.is_some()
                && let Some(&b) = self.info.blocks.get(&t.span.start)
            {
                self.block(b, top.cont);
                i = self.token_index(b.span.end).max(i + 1);
                prev = self.tokens.get(i.wrapping_sub(1)).copied();
                continue;
            }
            self.flush_comments(t.span.start);
            let gap = self.slice(
                self.st.last_end.min(t.span.start as usize),
                t.span.start as usize,
            );
            let breaks = count_breaks(gap);
            match prev {
                None => match start {
                    Start::Line => {
                        let ws = if breaks >= 2 { Ws::Blank } else { Ws::Line };
                        self.request(ws, indent);
                    }
                    Start::Space => self.request(Ws::Space, indent),
                },
                Some(_) if after_annotation => {
                    // After an annotation: the statement (or the next annotation) starts a
                    // line at the statement's indentation, or follows on the same line.
                    let brk = self.st.break_since_token || breaks > 0;
                    self.request(if brk { Ws::Line } else { Ws::Space }, indent);
                }
                Some(p) => {
                    let brk = self.st.break_since_token || breaks > 0;
                    if brk && !self.joins(p, t, i) {
                        let closer = matches!(t.kind, TokenKind::RParen | TokenKind::RBracket);
                        self.request(Ws::Line, if closer { top.base } else { top.cont });
                    } else if self.space_between(p, t, i) {
                        self.request(Ws::Space, top.cont);
                    }
                }
            }
            self.token(t);
            match t.kind {
                TokenKind::LParen | TokenKind::LBracket => frames.push(Frame {
                    base: self.st.line_indent,
                    cont: self.st.line_indent + 1,
                }),
                TokenKind::RParen | TokenKind::RBracket if frames.len() > 1 => {
                    frames.pop();
                }
                _ => {}
            }
            prev = Some(t);
            i += 1;
        }
    }

    /// Write a block `{ … }` whose `{` follows the current output.
    fn block(&mut self, b: &Block<'s>, comment_indent: usize) {
        let open = b.span.start;
        let close = b.span.end.saturating_sub(1);
        self.st.comment_indent = comment_indent;
        self.st.blank_ok = false;
        self.flush_comments(open);
        self.request(Ws::Space, comment_indent);
        self.materialize();
        let outer = self.st.line_indent;
        let inner = outer + 1;
        self.push("{");
        self.st.last_end = open as usize + 1;
        self.st.break_since_token = false;
        self.st.emitted += 1;

        let comments_inside = self
            .comments
            .get(self.st.next_comment)
            .is_some_and(|c| c.span.start < close);
        if b.stmts.is_empty() && !comments_inside {
            self.close_brace(close);
            return;
        }
        let ranges = self.stmt_ranges(
            &b.stmts,
            self.token_index(open) + 1,
            self.token_index(close),
        );
        if self.one_line_candidate(b) {
            let snap = self.snapshot();
            for (k, &range) in ranges.iter().enumerate() {
                if k > 0 {
                    // Comments before the `;` stay before it.
                    let next_start = self.tokens.get(range.0).map_or(close, |t| t.span.start);
                    let semi = ranges
                        .get(k - 1)
                        .and_then(|r| self.tokens.get(r.0..r.1))
                        .and_then(|ts| ts.iter().find(|t| t.kind == TokenKind::Semi))
                        .map_or(next_start, |t| t.span.start);
                    self.st.comment_indent = inner;
                    self.flush_comments(semi);
                    if self.st.pending == Ws::Space {
                        self.st.pending = Ws::None;
                    }
                    self.write(";");
                }
                self.stmt(range, inner, Start::Space);
            }
            self.st.comment_indent = inner;
            self.st.blank_ok = true;
            self.flush_comments(close);
            self.request(Ws::Space, outer);
            self.close_brace(close);
            let written = self.out.get(snap.out_len..).unwrap_or("");
            if !has_break(written) && self.st.col <= MAX_WIDTH {
                return;
            }
            self.restore(snap);
        }
        self.st.after_open = true;
        for range in ranges {
            self.stmt(range, inner, Start::Line);
        }
        self.st.comment_indent = inner;
        self.st.blank_ok = true;
        self.flush_comments(close);
        self.request(Ws::Line, outer);
        self.close_brace(close);
    }

    fn close_brace(&mut self, close: u32) {
        self.write("}");
        self.st.last_end = close as usize + 1;
        self.st.break_since_token = false;
        self.st.emitted += 1;
    }

    /// On one line in the source, one to three statements, none with a block of its own.
    fn one_line_candidate(&self, b: &Block<'s>) -> bool {
        if b.stmts.is_empty() || b.stmts.len() > 3 {
            return false;
        }
        if has_break(self.slice(b.span.start as usize, b.span.end as usize)) {
            return false;
        }
        let first = self.token_index(b.span.start + 1);
        let last = self.token_index(b.span.end.saturating_sub(1));
        self.tokens
            .get(first..last)
            .is_some_and(|ts| ts.iter().all(|t| t.kind != TokenKind::LBrace))
    }
}

/// Move the continuation lines of a multi-line block comment by the change of its column, and
/// normalise its line endings and trailing whitespace. The first line is kept as written.
fn reindent_comment(raw: &str, orig_col: usize, new_col: usize) -> String {
    let text = normalize_newlines(raw);
    if !text.contains('\n') {
        return text;
    }
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or("");
    let rest: Vec<&str> = lines.collect();
    let shift_left = orig_col.saturating_sub(new_col);
    let shift_right = new_col.saturating_sub(orig_col);
    let can_shift_left = rest
        .iter()
        .all(|l| l.trim().is_empty() || l.bytes().take_while(|b| *b == b' ').count() >= shift_left);
    let mut out = String::with_capacity(text.len() + rest.len() * shift_right);
    out.push_str(first.trim_end());
    for line in rest {
        out.push('\n');
        let line = line.trim_end();
        if line.is_empty() {
            continue;
        }
        if shift_right > 0 {
            out.extend(std::iter::repeat_n(' ', shift_right));
            out.push_str(line);
        } else if can_shift_left {
            out.push_str(line.get(shift_left..).unwrap_or(line));
        } else {
            out.push_str(line);
        }
    }
    out
}
