//! Agent output validation (upstream `AgentOutputValidator`): ASCII control characters, Unicode
//! manipulation characters and the 4 MiB size cap.

use serde_json::Value;

/// The maximum size of one output in UTF-8 bytes (4 MiB).
pub const MAX_OUTPUT_BYTES: usize = 4 * 1024 * 1024;

/// Why an output was refused; `Display` is upstream's wording after `Node [<id>] output `.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum OutputViolation {
    ControlCharacters,
    UnicodeManipulation,
    TooLarge,
}

impl std::fmt::Display for OutputViolation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            OutputViolation::ControlCharacters => "contains illegal control characters",
            OutputViolation::UnicodeManipulation => "contains Unicode manipulation characters",
            OutputViolation::TooLarge => "exceeds maximum allowed size",
        })
    }
}

/// Checks, in upstream order: `[\x00-\x08\x0B\x0C\x0E-\x1F\x7F]`, then
/// `[\u202A-\u202E\u2066-\u2069\u200B-\u200D\uFEFF]`, then the size.
pub fn validate_output(s: &str) -> Result<(), OutputViolation> {
    let mut unicode = false;
    scan(s.as_bytes(), &mut unicode)?;
    if unicode {
        return Err(OutputViolation::UnicodeManipulation);
    }
    if s.len() > MAX_OUTPUT_BYTES {
        return Err(OutputViolation::TooLarge);
    }
    Ok(())
}

/// [`validate_output`] of a value's template rendering (`crate::value::render`: strings as is,
/// maps and lists as compact JSON) without rendering it. In compact JSON every control
/// character but DEL is escaped and nothing else adds one, and the Unicode characters checked
/// appear only inside strings (keys and values), so scanning those decides the first two
/// checks; the size is bounded from above and measured exactly only near the limit.
pub(crate) fn validate_rendered(value: &Value) -> Result<(), OutputViolation> {
    if let Value::String(s) = value {
        return validate_output(s);
    }
    let mut unicode = false;
    let mut bound = 0usize;
    scan_value(value, &mut unicode, &mut bound)?;
    if unicode {
        return Err(OutputViolation::UnicodeManipulation);
    }
    if bound > MAX_OUTPUT_BYTES && rendered_len(value) > MAX_OUTPUT_BYTES {
        return Err(OutputViolation::TooLarge);
    }
    Ok(())
}

/// The control-character check over `b` (DEL is the only one compact JSON keeps), noting a
/// Unicode manipulation character in `unicode`.
fn scan(b: &[u8], unicode: &mut bool) -> Result<(), OutputViolation> {
    let mut i = 0;
    while i < b.len() {
        // Most output is printable ASCII, tabs and line breaks: such a block passes both checks
        // and is skipped whole (one vectorised test instead of a branch per byte). The last,
        // short block is padded with spaces (plain).
        let end = (i + BLOCK).min(b.len());
        let mut block = [b' '; BLOCK];
        block[..end - i].copy_from_slice(&b[i..end]);
        if is_plain(&block) {
            i = end;
            continue;
        }
        while i < end {
            let c = b[i];
            if c < 0x80 {
                if (c <= 0x08) || c == 0x0B || c == 0x0C || (0x0E..=0x1F).contains(&c) || c == 0x7F
                {
                    return Err(OutputViolation::ControlCharacters);
                }
            } else if !*unicode && i + 2 < b.len() {
                let (c1, c2) = (b[i + 1], b[i + 2]);
                *unicode = match (c, c1) {
                    // U+200B–U+200D (E2 80 8B–8D), U+202A–U+202E (E2 80 AA–AE)
                    (0xE2, 0x80) => matches!(c2, 0x8B..=0x8D | 0xAA..=0xAE),
                    // U+2066–U+2069 (E2 81 A6–A9)
                    (0xE2, 0x81) => matches!(c2, 0xA6..=0xA9),
                    // U+FEFF (EF BB BF)
                    (0xEF, 0xBB) => c2 == 0xBF,
                    _ => false,
                };
            }
            i += 1;
        }
    }
    Ok(())
}

/// The bytes [`scan`] tests at once.
const BLOCK: usize = 16;

/// Whether `block` is printable ASCII, tab, LF or CR only (no byte either check could refuse;
/// a Unicode character always starts with a byte ≥ 0x80).
fn is_plain(block: &[u8; BLOCK]) -> bool {
    let mut special = 0u8;
    for &c in block {
        special |= u8::from((c < 0x20 && !matches!(c, b'\t' | b'\n' | b'\r')) || c >= 0x7F);
    }
    special == 0
}

/// Scans the strings of `value` as they appear in its compact JSON, adding an upper bound of
/// that JSON's length to `bound`.
fn scan_value(value: &Value, unicode: &mut bool, bound: &mut usize) -> Result<(), OutputViolation> {
    // Compact JSON escapes a control character below 0x20 (at most 6 bytes each) and keeps DEL.
    let string = |s: &str, unicode: &mut bool, bound: &mut usize| {
        *bound += 6 * s.len() + 2;
        if s.bytes().any(|c| c == 0x7F) {
            return Err(OutputViolation::ControlCharacters);
        }
        scan_unicode(s.as_bytes(), unicode);
        Ok(())
    };
    match value {
        Value::Null | Value::Bool(_) => *bound += 5,
        Value::Number(_) => *bound += 40,
        Value::String(s) => string(s, unicode, bound)?,
        Value::Array(items) => {
            *bound += 2 + items.len();
            for item in items {
                scan_value(item, unicode, bound)?;
            }
        }
        Value::Object(map) => {
            *bound += 2 + 2 * map.len();
            for (k, v) in map {
                string(k, unicode, bound)?;
                scan_value(v, unicode, bound)?;
            }
        }
    }
    Ok(())
}

/// The Unicode half of [`scan`] over text with no control characters to report.
fn scan_unicode(b: &[u8], unicode: &mut bool) {
    if *unicode || b.is_ascii() {
        return;
    }
    for i in 0..b.len().saturating_sub(2) {
        if matches!(
            (b[i], b[i + 1], b[i + 2]),
            (0xE2, 0x80, 0x8B..=0x8D | 0xAA..=0xAE) | (0xE2, 0x81, 0xA6..=0xA9) | (0xEF, 0xBB, 0xBF)
        ) {
            *unicode = true;
            return;
        }
    }
}

/// The exact length of `value`'s compact JSON, without building it.
fn rendered_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail; an error would only undercount.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `validate_rendered` agrees with `validate_output` of the rendered text.
    #[test]
    fn validating_a_value_matches_validating_its_rendering() {
        let big = "x".repeat(MAX_OUTPUT_BYTES / 2);
        let cases = [
            json!(null),
            json!(true),
            json!(12.5),
            json!("plain"),
            json!("bell \u{7}"),
            json!({"k": "tab\tand newline\n and bell \u{7}"}),
            json!({"k": "del \u{7f}"}),
            json!({"del \u{7f}": 1}),
            json!(["zero\u{200b}width"]),
            json!({"bom\u{feff}": "x"}),
            json!({"rtl": ["\u{202e}", {"n": 1}]}),
            json!({"ok": ["é", "日本", "\u{2065}"]}),
            json!([big.clone(), big.clone()]),
            json!([big.clone()]),
            json!({"q": "\"".repeat(MAX_OUTPUT_BYTES / 2)}),
            json!({"c": "\u{1}".repeat(MAX_OUTPUT_BYTES / 6)}),
        ];
        for v in cases {
            let rendered = crate::value::render(&v);
            assert_eq!(
                validate_rendered(&v),
                validate_output(&rendered),
                "{}",
                &rendered[..rendered.len().min(60)]
            );
        }
    }

    /// The checks byte by byte, without skipping plain blocks: what `validate_output` decides.
    fn validate_bytewise(s: &str) -> Result<(), OutputViolation> {
        let b = s.as_bytes();
        let mut unicode = false;
        for (i, &c) in b.iter().enumerate() {
            if c < 0x80 {
                if c <= 0x08 || c == 0x0B || c == 0x0C || (0x0E..=0x1F).contains(&c) || c == 0x7F {
                    return Err(OutputViolation::ControlCharacters);
                }
            } else if !unicode && i + 2 < b.len() {
                unicode = matches!(
                    (c, b[i + 1], b[i + 2]),
                    (0xE2, 0x80, 0x8B..=0x8D | 0xAA..=0xAE)
                        | (0xE2, 0x81, 0xA6..=0xA9)
                        | (0xEF, 0xBB, 0xBF)
                );
            }
        }
        if unicode {
            return Err(OutputViolation::UnicodeManipulation);
        }
        Ok(())
    }

    /// Plain blocks are skipped whole: every special character, alone or after another one,
    /// at every offset around the block boundaries, is still found.
    #[test]
    fn the_block_scan_decides_as_the_bytewise_scan() {
        let specials = [
            "\u{7}", "\u{7f}", "\u{1f}", "\t", "\n", "\r", "\u{200b}", "\u{202e}", "\u{2066}",
            "\u{feff}", "\u{2065}", "é", "日本", "~", " ",
        ];
        let mut checked = 0;
        for len in [0, 1, 15, 16, 17, 31, 32, 33, 47] {
            let base =
                "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUV"[..len].to_string();
            for at in 0..=len {
                for first in specials {
                    for second in specials.iter().chain([&""]) {
                        let mut text = base.clone();
                        text.insert_str(at, first);
                        text.push_str(second);
                        assert_eq!(validate_output(&text), validate_bytewise(&text), "{text:?}");
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 10_000);
    }
}
