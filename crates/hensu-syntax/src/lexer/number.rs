//! Number literals: every Kotlin form classified and evaluated after lexing (`Int`, `Long`,
//! `Double` or a malformed number with its E0006 message).

use super::TokenKind;

/// A classified number literal.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Number {
    Int(i64),
    Long(i64),
    Double(f64),
}

impl Number {
    pub(super) fn kind(self) -> TokenKind {
        match self {
            Number::Int(_) => TokenKind::Int,
            Number::Long(_) => TokenKind::Long,
            Number::Double(_) => TokenKind::Double,
        }
    }
}

/// Why a number literal is malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberError {
    Malformed,
    Underscore,
    TooLarge,
    DoubleOverflow,
    LowercaseL,
}

impl NumberError {
    pub(super) fn message(self) -> &'static str {
        match self {
            NumberError::Malformed => "malformed number",
            NumberError::Underscore => "malformed number: misplaced `_`",
            NumberError::TooLarge => "integer literal out of range",
            NumberError::DoubleOverflow => "floating-point literal out of range",
            NumberError::LowercaseL => "malformed number: lowercase `l` suffix",
        }
    }
    pub(super) fn label(self) -> &'static str {
        match self {
            NumberError::Malformed => "not a valid number",
            NumberError::Underscore => "`_` must be between digits",
            NumberError::TooLarge => "does not fit in a 64-bit Long",
            NumberError::DoubleOverflow => "too large for a Double",
            NumberError::LowercaseL => "use `L`",
        }
    }
    pub(super) fn help(self) -> &'static str {
        match self {
            NumberError::Malformed => {
                "numbers are written like `3`, `60_000`, `60000L`, `0.7` or `1e-3`"
            }
            NumberError::Underscore => "write `60_000`, not `60_` or `60._0`",
            NumberError::TooLarge => "the largest integer is 9223372036854775807",
            NumberError::DoubleOverflow => "the largest Double is about 1.8e308",
            NumberError::LowercaseL => "Kotlin only accepts an uppercase `L` suffix: `60000L`",
        }
    }
}

fn digits_ok(s: &str, radix: u32) -> Result<(), NumberError> {
    if s.is_empty() || s.starts_with('_') || s.ends_with('_') {
        return Err(if s.is_empty() {
            NumberError::Malformed
        } else {
            NumberError::Underscore
        });
    }
    if s.chars().all(|c| c == '_' || c.is_digit(radix)) {
        Ok(())
    } else {
        Err(NumberError::Malformed)
    }
}

/// The text without `_` separators (borrowed when there are none).
fn strip_underscores(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains('_') {
        std::borrow::Cow::Owned(s.replace('_', ""))
    } else {
        std::borrow::Cow::Borrowed(s)
    }
}

/// Classify and evaluate a number literal exactly as Kotlin reads it.
pub fn classify_number(text: &str) -> Result<Number, NumberError> {
    let lower = text.as_bytes();
    // Fast path: plain decimal digits that fit an i64 (`3`, `60000`) — the general path below
    // gives the same `Int`.
    if !lower.is_empty() && lower.len() <= 18 && lower.iter().all(u8::is_ascii_digit) {
        let v = lower
            .iter()
            .fold(0i64, |acc, &b| acc * 10 + i64::from(b - b'0'));
        return Ok(Number::Int(v));
    }
    // Hex and binary integers.
    if lower.len() > 2
        && lower[0] == b'0'
        && matches!(lower[1], b'x' | b'X' | b'b' | b'B')
        && !text.contains('.')
    {
        let radix = if matches!(lower[1], b'x' | b'X') {
            16
        } else {
            2
        };
        let (body, long) = match text[2..].strip_suffix('L') {
            Some(b) => (b, true),
            None => (&text[2..], false),
        };
        digits_ok(body, radix)?;
        let clean = strip_underscores(body);
        let v = i64::from_str_radix(&clean, radix).map_err(|_| NumberError::TooLarge)?;
        return Ok(if long {
            Number::Long(v)
        } else {
            Number::Int(v)
        });
    }
    if text.ends_with('l') {
        return Err(NumberError::LowercaseL);
    }
    if let Some(body) = text.strip_suffix('L') {
        digits_ok(body, 10)?;
        let clean = strip_underscores(body);
        return clean
            .parse::<i64>()
            .map(Number::Long)
            .map_err(|_| NumberError::TooLarge);
    }
    let is_float = text.contains(['.', 'e', 'E']) || text.ends_with(['f', 'F']);
    if !is_float {
        digits_ok(text, 10)?;
        let clean = strip_underscores(text);
        return clean
            .parse::<i64>()
            .map(Number::Int)
            .map_err(|_| NumberError::TooLarge);
    }
    // Double: digits [. digits] [e[+-]digits] [f|F]
    let body = text.strip_suffix(['f', 'F']).unwrap_or(text);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(p) => (&body[..p], Some(&body[p + 1..])),
        None => (body, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((a, b)) => (a, Some(b)),
        None => (mantissa, None),
    };
    // Kotlin allows `.5` (no digits before the point), but not `5.` (none after it).
    if !(int_part.is_empty() && frac_part.is_some()) {
        digits_ok(int_part, 10)?;
    }
    if let Some(f) = frac_part {
        digits_ok(f, 10)?;
    }
    if let Some(e) = exponent {
        let digits = e.strip_prefix(['+', '-']).unwrap_or(e);
        digits_ok(digits, 10)?;
    }
    let clean = strip_underscores(body);
    let v: f64 = clean.parse().map_err(|_| NumberError::Malformed)?;
    if v.is_infinite() {
        return Err(NumberError::DoubleOverflow);
    }
    Ok(Number::Double(v))
}
