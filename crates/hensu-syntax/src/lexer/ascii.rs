//! The lexer's hand-written path for the tokens most of a workflow is made of: spaces, line
//! breaks, ASCII identifiers and keywords, strings and the unambiguous punctuation. logos' state
//! machine classifies every byte of an identifier against Unicode tables (about a third of a
//! large check's lexing: docs/performance.md, *Round 3, fifth sitting: `check` throughput*);
//! these tokens need a byte comparison. Anything else — a non-ASCII byte in or after an
//! identifier, numbers, comments, operators, annotations, unexpected characters — is left to
//! logos, so both paths give the same tokens (a differential test lexes every workflow of the
//! repository and random text both ways).

use super::TokenKind as T;

/// What the hand-written path found at a position.
pub(super) enum Fast {
    /// A token `start..end` (`start` is after any spaces); for a string, whether it is
    /// unterminated.
    Token {
        kind: T,
        start: usize,
        end: usize,
        unterminated: bool,
    },
    /// Only spaces up to the end of the input, from `start`.
    End,
    /// Leave the token at `start` (after any spaces) to logos.
    Slow { start: usize },
}

/// The token at `at` (spaces skipped first), if this path knows it.
#[inline]
pub(super) fn token(bytes: &[u8], at: usize) -> Fast {
    let mut start = at;
    // Indentation eight spaces at a time.
    while let Some(chunk) = bytes.get(start..start + 8) {
        if chunk != b"        " {
            break;
        }
        start += 8;
    }
    while let Some(b' ' | b'\t' | b'\x0C') = bytes.get(start) {
        start += 1;
    }
    let Some(&b) = bytes.get(start) else {
        return Fast::End;
    };
    let one = |kind| Fast::Token {
        kind,
        start,
        end: start + 1,
        unterminated: false,
    };
    match b {
        b'\n' => one(T::Newline),
        b'\r' if bytes.get(start + 1) == Some(&b'\n') => Fast::Token {
            kind: T::Newline,
            start,
            end: start + 2,
            unterminated: false,
        },
        b'\r' => one(T::Newline),
        b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
            let mut end = start + 1;
            while bytes.get(end).is_some_and(|&b| IDENT_CONTINUE[b as usize]) {
                end += 1;
            }
            // A non-ASCII letter or digit may continue the identifier: logos' Unicode classes.
            if bytes.get(end).is_some_and(|b| !b.is_ascii()) {
                return Fast::Slow { start };
            }
            Fast::Token {
                kind: keyword(bytes.get(start..end).unwrap_or_default()),
                start,
                end,
                unterminated: false,
            }
        }
        b'{' => one(T::LBrace),
        b'}' => one(T::RBrace),
        b'(' => one(T::LParen),
        b')' => one(T::RParen),
        b'[' => one(T::LBracket),
        b']' => one(T::RBracket),
        b',' => one(T::Comma),
        b';' => one(T::Semi),
        // Not `==` or `===` (operators).
        b'=' if bytes.get(start + 1) != Some(&b'=') => one(T::Eq),
        // Not `..`, `..<` or a number (`.5`): a member access.
        b'.' if bytes
            .get(start + 1)
            .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_') =>
        {
            one(T::Dot)
        }
        b'"' => {
            let rest = bytes.get(start + 1..).unwrap_or_default();
            if rest.starts_with(b"\"\"") {
                let (len, unterminated) =
                    super::raw_string_len(bytes.get(start + 3..).unwrap_or_default());
                Fast::Token {
                    kind: T::RawStr,
                    start,
                    end: start + 3 + len,
                    unterminated,
                }
            } else {
                let (len, unterminated) = super::string_len(rest);
                Fast::Token {
                    kind: T::Str,
                    start,
                    end: start + 1 + len,
                    unterminated,
                }
            }
        }
        _ => Fast::Slow { start },
    }
}

/// The bytes that continue an ASCII identifier: `[A-Za-z0-9_]`.
static IDENT_CONTINUE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = (b as u8).is_ascii_alphanumeric() || b == b'_' as usize;
        b += 1;
    }
    table
};

/// The kind of an ASCII word: a keyword's token, else an identifier.
#[inline]
fn keyword(word: &[u8]) -> T {
    match word {
        b"fun" => T::KwFun,
        b"package" => T::KwPackage,
        b"import" => T::KwImport,
        b"return" => T::KwReturn,
        b"true" => T::KwTrue,
        b"false" => T::KwFalse,
        b"null" => T::KwNull,
        b"val" => T::KwVal,
        b"var" => T::KwVar,
        b"if" => T::KwIf,
        b"when" => T::KwWhen,
        b"for" => T::KwFor,
        b"while" => T::KwWhile,
        b"do" => T::KwDo,
        b"else" => T::KwElse,
        b"in" => T::KwIn,
        b"class" => T::KwClass,
        b"object" => T::KwObject,
        _ => T::Ident,
    }
}
