//! `textDocument/semanticTokens/full`: keywords (Kotlin words, block names, transition triggers
//! and chain words), node-kind calls (`function`), other statement calls (`method`), property
//! names, enum types and constants, strings with their `{placeholder}`s (`variable`), numbers
//! and comments. Multi-line tokens are split per line.

use hensu_diagnostics::Span;
use hensu_sema::schema::{self, BlockKind, EnumType, StatementKind};
use hensu_syntax::TokenKind;
use lsp_types::{
    SemanticToken, SemanticTokenType, SemanticTokens, SemanticTokensLegend, SemanticTokensParams,
    SemanticTokensResult,
};

use crate::analysis::Analysis;
use crate::engine::Engine;
use crate::index::placeholders;

const KEYWORD: u32 = 0;
const FUNCTION: u32 = 1;
const METHOD: u32 = 2;
const PROPERTY: u32 = 3;
const ENUM: u32 = 4;
const ENUM_MEMBER: u32 = 5;
const STRING: u32 = 6;
const NUMBER: u32 = 7;
const COMMENT: u32 = 8;
const VARIABLE: u32 = 9;

/// The token types, in the order of their indices.
pub fn legend() -> SemanticTokensLegend {
    SemanticTokensLegend {
        token_types: vec![
            SemanticTokenType::KEYWORD,
            SemanticTokenType::FUNCTION,
            SemanticTokenType::METHOD,
            SemanticTokenType::PROPERTY,
            SemanticTokenType::ENUM,
            SemanticTokenType::ENUM_MEMBER,
            SemanticTokenType::STRING,
            SemanticTokenType::NUMBER,
            SemanticTokenType::COMMENT,
            SemanticTokenType::VARIABLE,
        ],
        token_modifiers: Vec::new(),
    }
}

/// The name of a token type index (for tests).
pub fn type_name(t: u32) -> &'static str {
    match t {
        KEYWORD => "keyword",
        FUNCTION => "function",
        METHOD => "method",
        PROPERTY => "property",
        ENUM => "enum",
        ENUM_MEMBER => "enumMember",
        STRING => "string",
        NUMBER => "number",
        COMMENT => "comment",
        VARIABLE => "variable",
        _ => "?",
    }
}

const CHAIN_WORDS: &[&str] = &[
    "goto",
    "revise",
    "retry",
    "backoff",
    "otherwise",
    "withFeedback",
    "at",
    "to",
];
const NODE_KINDS: &[&str] = &[
    "node",
    "parallel",
    "fork",
    "join",
    "generic",
    "action",
    "subWorkflow",
    "end",
];

/// How a statement name is used anywhere in the schema.
fn statement_class(word: &str) -> Option<u32> {
    let mut class = None;
    for kind in BlockKind::ALL {
        if let Some(spec) = schema::lookup(*kind, word) {
            let c = match spec.kind {
                StatementKind::Property { .. } => PROPERTY,
                StatementKind::Call { .. } => METHOD,
                StatementKind::CallBlock { .. } | StatementKind::CallOrBlock { .. } => METHOD,
                _ => KEYWORD,
            };
            // A keyword use anywhere wins (`agent` is both a property and a call).
            if class.is_none() || c == KEYWORD {
                class = Some(c);
            }
        }
    }
    class
}

fn is_enum_qualifier(word: &str) -> bool {
    word == "Models" || EnumType::ALL.iter().any(|e| e.name() == word)
}

fn is_constant(word: &str) -> bool {
    EnumType::ALL.iter().any(|e| e.constants().contains(&word))
}

impl Engine {
    pub fn semantic_tokens_full(
        &self,
        params: SemanticTokensParams,
    ) -> Option<SemanticTokensResult> {
        let a = self.analysis(&params.text_document.uri)?;
        let raw = classify(&a);
        Some(SemanticTokensResult::Tokens(SemanticTokens {
            result_id: None,
            data: encode(&a, &raw),
        }))
    }
}

/// Every classified span, in source order, not overlapping.
pub fn classify(a: &Analysis) -> Vec<(Span, u32)> {
    let lexed = a.lexed();
    let tokens = &lexed.tokens;
    let text = |i: usize| tokens.get(i).map_or("", |t| a.slice(t.span));
    let kind = |i: usize| tokens.get(i).map(|t| t.kind);
    let mut out: Vec<(Span, u32)> = Vec::with_capacity(tokens.len() / 2 + lexed.comments.len());
    for c in &lexed.comments {
        out.push((c.span, COMMENT));
    }
    for (i, t) in tokens.iter().enumerate() {
        let class = match t.kind {
            k if k.is_string() => {
                let body = a.slice(t.span);
                let mut at = t.span.start;
                for (_, r) in placeholders(body) {
                    // Include the braces in the placeholder token.
                    let ps = t.span.start + u32::try_from(r.start).unwrap_or(0) - 1;
                    let pe = t.span.start + u32::try_from(r.end).unwrap_or(0) + 1;
                    if ps > at {
                        out.push((Span::new(at, ps), STRING));
                    }
                    out.push((Span::new(ps, pe), VARIABLE));
                    at = pe;
                }
                if at < t.span.end {
                    out.push((Span::new(at, t.span.end), STRING));
                }
                continue;
            }
            TokenKind::Int | TokenKind::Long | TokenKind::Double | TokenKind::BadNumber => {
                Some(NUMBER)
            }
            TokenKind::KwFun
            | TokenKind::KwReturn
            | TokenKind::KwPackage
            | TokenKind::KwImport
            | TokenKind::KwTrue
            | TokenKind::KwFalse
            | TokenKind::KwNull => Some(KEYWORD),
            TokenKind::Ident | TokenKind::BacktickIdent | TokenKind::KwIn => {
                let word = text(i).trim_matches('`');
                let next = kind(i + 1);
                let after_dot =
                    i >= 2 && kind(i - 1) == Some(TokenKind::Dot) && is_enum_qualifier(text(i - 2));
                if after_dot {
                    Some(ENUM_MEMBER)
                } else if next == Some(TokenKind::Dot) && is_enum_qualifier(word) {
                    Some(ENUM)
                } else if next == Some(TokenKind::Eq) {
                    Some(PROPERTY)
                } else if NODE_KINDS.contains(&word) && next == Some(TokenKind::LParen) {
                    Some(FUNCTION)
                } else if word == "workflow"
                    || CHAIN_WORDS.contains(&word)
                    || schema::SCORE_OPERATORS.contains(&word)
                    || schema::CONDITION_OPERATORS.contains(&word)
                {
                    Some(KEYWORD)
                } else if let Some(c) = statement_class(word) {
                    Some(if c == PROPERTY { KEYWORD } else { c })
                } else if is_constant(word) {
                    Some(ENUM_MEMBER)
                } else {
                    None
                }
            }
            _ => None,
        };
        if let Some(c) = class {
            out.push((t.span, c));
        }
    }
    out.sort_by_key(|(s, _)| s.start);
    out
}

fn encode(a: &Analysis, raw: &[(Span, u32)]) -> Vec<SemanticToken> {
    let mut data = Vec::with_capacity(raw.len());
    let (mut pl, mut pc) = (0u32, 0u32);
    for (span, ty) in raw {
        // Split at line ends.
        let mut start = span.start;
        while start < span.end {
            let p = a.lines.position(&a.text, start);
            let line_end = a.lines.line_start(p.line as usize + 1);
            let end = span.end.min(line_end);
            let piece = a.text.get(start as usize..end as usize).unwrap_or("");
            let piece = piece.trim_end_matches(['\n', '\r']);
            let len: usize = piece.chars().map(char::len_utf16).sum();
            if len > 0 {
                let delta_line = p.line.saturating_sub(pl);
                let delta_start = if delta_line == 0 {
                    p.character.saturating_sub(pc)
                } else {
                    p.character
                };
                data.push(SemanticToken {
                    delta_line,
                    delta_start,
                    length: u32::try_from(len).unwrap_or(u32::MAX),
                    token_type: *ty,
                    token_modifiers_bitset: 0,
                });
                pl = p.line;
                pc = p.character;
            }
            if end <= start {
                break;
            }
            start = end;
        }
    }
    data
}
