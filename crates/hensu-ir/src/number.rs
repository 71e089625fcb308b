//! Number renderings shared with upstream: the condition canonical form and Java's
//! `Double.toString`.

/// Upstream `Condition.canonicalize` for numbers:
/// `BigDecimal(n.toString()).stripTrailingZeros().toPlainString()`.
///
/// `5.0` → `"5"`, `0.90` → `"0.9"`, `100.0` → `"100"`, `1e-7` → `"0.0000001"`, `-0.0` → `"0"`.
/// Non-finite values (which BigDecimal rejects) render as `NaN`, `Infinity`, `-Infinity`.
pub fn canonical_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".to_string();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    // Rust's Display of f64 is the shortest round-tripping digit string, never in exponent form.
    let mut s = format!("{n}");
    if s.contains('.') {
        while s.ends_with('0') {
            s.pop();
        }
        if s.ends_with('.') {
            s.pop();
        }
    }
    if s == "-0" {
        s = "0".to_string();
    }
    s
}

/// The canonical form of an integer operand (`5` → `"5"`).
pub fn canonical_int(n: i64) -> String {
    n.to_string()
}

/// Java's `Double.toString(d)`: `70.0`, `0.5`, `1.0E-7`, `1.234E10`, `NaN`, `Infinity`.
///
/// Decimal notation for `1e-3 <= |d| < 1e7` (at least one fractional digit), computerized
/// scientific notation otherwise. Digits are the shortest round-tripping ones (as in JDK 19+).
pub fn java_double_to_string(d: f64) -> String {
    if d.is_nan() {
        return "NaN".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let abs = d.abs();
    if (1e-3..1e7).contains(&abs) {
        let s = format!("{d}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        // `{:e}` gives e.g. `1.234e10` / `1e-7`.
        let s = format!("{d:e}");
        let (mantissa, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}
