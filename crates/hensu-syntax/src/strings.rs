//! String semantics replicated from Kotlin: escape decoding, `trimIndent()` and `trimMargin()`.

use std::borrow::Cow;

/// Kotlin's `Char.isWhitespace()` on the JVM: `Character.isWhitespace(c) || Character.isSpaceChar(c)`,
/// i.e. the Unicode space separators (Zs, Zl, Zp, including no-break spaces), `\t \n \u000B \f \r`
/// and `\u001C`–`\u001F`. Rust's `char::is_whitespace` differs only in U+0085 and `\u001C`–`\u001F`.
pub fn kotlin_is_whitespace(c: char) -> bool {
    match c {
        '\u{1C}'..='\u{1F}' => true,
        '\u{85}' => false,
        c => c.is_whitespace(),
    }
}

fn is_blank(line: &str) -> bool {
    if line.is_ascii() {
        return line.bytes().all(|b| {
            matches!(
                b,
                b' ' | b'\t' | b'\n' | b'\x0B' | b'\x0C' | b'\r' | 0x1C..=0x1F
            )
        });
    }
    line.chars().all(kotlin_is_whitespace)
}

/// Width of the leading whitespace in chars (Kotlin counts UTF-16 units; whitespace is BMP).
fn indent_width(line: &str) -> usize {
    let ascii = line
        .bytes()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0B' | b'\x0C' | 0x1C..=0x1F))
        .count();
    match line.as_bytes().get(ascii) {
        Some(b) if !b.is_ascii() => {
            ascii
                + line[ascii..]
                    .chars()
                    .take_while(|c| kotlin_is_whitespace(*c))
                    .count()
        }
        _ => ascii,
    }
}

/// Kotlin's `lines()`: split on `\r\n`, `\n` or `\r` (a trailing break gives a last empty line).
struct Lines<'a> {
    rest: Option<&'a str>,
    has_cr: bool,
}

impl<'a> Lines<'a> {
    fn new(s: &'a str) -> Self {
        Lines {
            rest: Some(s),
            has_cr: s.contains('\r'),
        }
    }
    fn is_done(&self) -> bool {
        self.rest.is_none()
    }
}

impl<'a> Iterator for Lines<'a> {
    type Item = &'a str;
    fn next(&mut self) -> Option<&'a str> {
        let s = self.rest?;
        let bytes = s.as_bytes();
        let found = if self.has_cr {
            bytes.iter().position(|&b| b == b'\n' || b == b'\r')
        } else {
            s.find('\n')
        };
        match found {
            Some(i) => {
                let skip = if bytes[i] == b'\r' && bytes.get(i + 1) == Some(&b'\n') {
                    2
                } else {
                    1
                };
                self.rest = Some(&s[i + skip..]);
                Some(&s[..i])
            }
            None => {
                self.rest = None;
                Some(s)
            }
        }
    }
}

/// The indent width of a line, or `None` when the line is blank.
fn indent_if_not_blank(line: &str) -> Option<usize> {
    let w = indent_width(line);
    if w == line.len() || (!line.is_ascii() && is_blank(line)) {
        None
    } else {
        Some(w)
    }
}

/// Drop `n` leading chars (Kotlin `String.drop(n)`; indentation is whitespace, which is in the
/// BMP, so chars and UTF-16 units agree).
fn drop_chars(line: &str, n: usize) -> &str {
    if line.is_char_boundary(n.min(line.len())) && line.as_bytes().iter().take(n).all(u8::is_ascii)
    {
        return line.get(n..).unwrap_or("");
    }
    match line.char_indices().nth(n) {
        Some((i, _)) => &line[i..],
        None => "",
    }
}

/// Kotlin's `reindent`: drop a blank first and last line, apply `cut` to every other line (a
/// `None` keeps the line as it is) and join with `\n`.
fn reindent<'a>(s: &'a str, cut: impl Fn(&'a str) -> Option<&'a str>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut first = true;
    let mut lines = Lines::new(s);
    let mut index = 0usize;
    while let Some(line) = lines.next() {
        let is_last = lines.is_done();
        let i = index;
        index += 1;
        if (i == 0 || is_last) && is_blank(line) {
            continue;
        }
        if !first {
            out.push('\n');
        }
        first = false;
        out.push_str(cut(line).unwrap_or(line));
    }
    out
}

/// Kotlin's `String.trimIndent()`: drop a blank first and last line, remove the minimal common
/// indentation of the non-blank lines from every line (a blank line shorter than the indent
/// becomes empty) and join with `\n` (CRLF and CR are normalised as by Kotlin's `lines()`).
pub fn trim_indent(s: &str) -> String {
    trim_indent_cow(s).into_owned()
}

/// [`trim_indent`] that borrows when the result is a slice of `s` (no indentation to remove).
pub(crate) fn trim_indent_cow(s: &str) -> Cow<'_, str> {
    match trim_indent_fast(s) {
        Some(out) => out,
        None => Cow::Owned(trim_indent_slow(s)),
    }
}

/// Leading ASCII indentation bytes of a line (the ASCII chars of `indent_width`).
#[inline]
fn ascii_indent(line: &[u8]) -> usize {
    line.iter()
        .take_while(|b| matches!(b, b' ' | b'\t' | b'\x0B' | b'\x0C' | 0x1C..=0x1F))
        .count()
}

/// End of the line starting at `start` (index of its `\n`, or the length).
#[inline]
fn line_end(b: &[u8], start: usize) -> usize {
    b.get(start..)
        .and_then(|rest| memchr::memchr(b'\n', rest))
        .map_or(b.len(), |i| start + i)
}

/// [`line_end`] for a text that may contain `\r`: `None` at a `\r`.
#[inline]
fn line_end_no_cr(b: &[u8], start: usize) -> Option<usize> {
    match b
        .get(start..)
        .and_then(|rest| memchr::memchr2(b'\n', b'\r', rest))
    {
        None => Some(b.len()),
        Some(i) if b.get(start + i) == Some(&b'\n') => Some(start + i),
        Some(_) => None,
    }
}

/// `trim_indent` in two passes over the bytes: the minimal indent, then one copy into a buffer
/// of the right size (or a borrow when nothing is removed). `None` (use the general path) when
/// the text has a `\r` or a line's indentation runs into a non-ASCII whitespace char.
fn trim_indent_fast(s: &str) -> Option<Cow<'_, str>> {
    let b = s.as_bytes();
    let len = b.len();
    // Pass 1: the minimal indent of the non-blank lines, the blankness of the first and last
    // line and the number of lines.
    let mut min = usize::MAX;
    let mut start = 0usize;
    let mut lines = 0usize;
    let mut first_blank = false;
    let mut last_blank;
    let mut last_start;
    loop {
        let end = line_end_no_cr(b, start)?;
        let line = b.get(start..end)?;
        let w = ascii_indent(line);
        let blank = match line.get(w) {
            None => true,
            Some(c) if c.is_ascii() => false,
            Some(_) => {
                let c = s.get(start + w..end)?.chars().next()?;
                if kotlin_is_whitespace(c) {
                    return None;
                }
                false
            }
        };
        if !blank {
            min = min.min(w);
        }
        if lines == 0 {
            first_blank = blank;
        }
        lines += 1;
        last_blank = blank;
        last_start = start;
        if end >= len {
            break;
        }
        start = end + 1;
    }
    let min = if min == usize::MAX { 0 } else { min };
    // The kept lines: drop a blank first and a blank last line.
    let from = if first_blank { line_end(b, 0) + 1 } else { 0 };
    let keep_last = !(last_blank && (lines > 1 || first_blank));
    let kept_lines = lines - usize::from(first_blank) - usize::from(lines > 1 && !keep_last);
    if kept_lines == 0 {
        return Some(Cow::Borrowed(""));
    }
    // `to` is the end of the last kept line (exclusive).
    let to = if keep_last {
        len
    } else {
        last_start.checked_sub(1)?
    };
    if from > to {
        return Some(Cow::Borrowed(""));
    }
    if min == 0 {
        return Some(Cow::Borrowed(s.get(from..to)?));
    }
    if kept_lines == 1 {
        let line = s.get(from..to)?;
        return Some(Cow::Borrowed(line.get(min.min(line.len())..)?));
    }
    // Pass 2: copy every kept line without its first `min` bytes (all ASCII indentation).
    let mut out = String::with_capacity(to - from);
    let mut start = from;
    loop {
        let end = line_end(b, start).min(to);
        let line = s.get(start..end)?;
        out.push_str(line.get(min.min(line.len())..)?);
        if end >= to {
            break;
        }
        out.push('\n');
        start = end + 1;
    }
    Some(Cow::Owned(out))
}

fn trim_indent_slow(s: &str) -> String {
    let min_indent = Lines::new(s)
        .filter_map(indent_if_not_blank)
        .min()
        .unwrap_or(0);
    reindent(s, |line| Some(drop_chars(line, min_indent)))
}

/// Kotlin's `String.trimMargin(marginPrefix)`: drop a blank first and last line; on every other
/// line whose first non-whitespace text is `prefix`, remove everything up to and including the
/// prefix; keep other lines unchanged; join with `\n`. Kotlin throws when `prefix` is blank; this
/// function then returns the input unchanged (the parser reports the blank prefix).
pub fn trim_margin(s: &str, prefix: &str) -> String {
    if is_blank(prefix) {
        return s.to_owned();
    }
    reindent(s, |line| {
        let (idx, _) = line
            .char_indices()
            .find(|(_, c)| !kotlin_is_whitespace(*c))?;
        line[idx..].strip_prefix(prefix)
    })
}

/// Decode the escapes of a regular string's content exactly as Kotlin does. Invalid escapes
/// (already reported by the lexer) are kept literally. Borrows when there is no backslash.
pub fn unescape(content: &str) -> Cow<'_, str> {
    if !content.contains('\\') {
        return Cow::Borrowed(content);
    }
    let mut out = String::with_capacity(content.len());
    let mut chars = content.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().map(|&(_, c)| c) {
            Some('t') => out.push('\t'),
            Some('b') => out.push('\u{8}'),
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some('\'') => out.push('\''),
            Some('"') => out.push('"'),
            Some('\\') => out.push('\\'),
            Some('$') => out.push('$'),
            Some('u') => {
                let hex = content
                    .get(i + 2..i + 6)
                    .and_then(|h| u16::from_str_radix(h, 16).ok());
                match hex {
                    Some(unit) if h4(content, i + 2) => {
                        chars.next(); // 'u'
                        for _ in 0..4 {
                            chars.next();
                        }
                        // A surrogate pair written as two escapes is one char.
                        if (0xD800..0xDC00).contains(&unit)
                            && content.get(i + 6..i + 8) == Some("\\u")
                            && h4(content, i + 8)
                        {
                            let low = content
                                .get(i + 8..i + 12)
                                .and_then(|h| u16::from_str_radix(h, 16).ok());
                            if let Some(low) = low.filter(|l| (0xDC00..0xE000).contains(l)) {
                                for _ in 0..6 {
                                    chars.next();
                                }
                                let cp = 0x10000
                                    + ((u32::from(unit) - 0xD800) << 10)
                                    + (u32::from(low) - 0xDC00);
                                out.push(char::from_u32(cp).unwrap_or('\u{FFFD}'));
                                continue;
                            }
                        }
                        out.push(char::from_u32(u32::from(unit)).unwrap_or('\u{FFFD}'));
                        continue;
                    }
                    _ => {
                        out.push('\\');
                        continue;
                    }
                }
            }
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    Cow::Owned(out)
}

fn h4(s: &str, at: usize) -> bool {
    s.get(at..at + 4)
        .is_some_and(|h| h.len() == 4 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trim_indent_basics() {
        assert_eq!(trim_indent("\n    a\n      b\n    "), "a\n  b");
        assert_eq!(trim_indent("  x"), "x");
        assert_eq!(trim_indent(""), "");
        assert_eq!(trim_indent("   "), "");
        assert_eq!(trim_indent("\n\n  a\n\n  b\n\n"), "\na\n\nb\n");
    }

    /// The byte-level fast path agrees with the general one on every string over a small
    /// alphabet (indentation, newlines, CR, non-ASCII text and whitespace).
    #[test]
    fn trim_indent_fast_matches_slow() {
        let alphabet = [" ", "\t", "\n", "a", "\r", "é", "\u{A0}", "  "];
        let mut idx = [0usize; 6];
        for len in 0..=idx.len() {
            let mut n = alphabet.len().pow(len as u32);
            idx.iter_mut().for_each(|i| *i = 0);
            while n > 0 {
                let s: String = idx[..len].iter().map(|&i| alphabet[i]).collect();
                if let Some(fast) = trim_indent_fast(&s) {
                    assert_eq!(fast, trim_indent_slow(&s), "{s:?}");
                }
                assert_eq!(trim_indent(&s), trim_indent_slow(&s), "{s:?}");
                for i in idx[..len].iter_mut() {
                    *i += 1;
                    if *i < alphabet.len() {
                        break;
                    }
                    *i = 0;
                }
                n -= 1;
            }
        }
    }

    #[test]
    fn trim_margin_basics() {
        assert_eq!(trim_margin("\n  |a\n  |  b\n  ", "|"), "a\n  b");
        assert_eq!(trim_margin("\n  #a\n  c\n", "#"), "a\n  c");
    }

    #[test]
    fn unescape_basics() {
        assert_eq!(unescape(r"a\nb\t\$\\\u00e9\uD83D\uDE00"), "a\nb\t$\\é😀");
        assert!(matches!(unescape("plain"), Cow::Borrowed(_)));
    }
}
