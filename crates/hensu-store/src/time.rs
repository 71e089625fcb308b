//! Wall-clock helpers: the store keeps unix milliseconds and renders RFC 3339.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch (0 if the clock is before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Renders unix milliseconds as RFC 3339 UTC with millisecond precision,
/// e.g. `2026-05-01T12:34:56.789Z`. Past jiff's range (year 9999) it renders the last
/// representable millisecond rather than failing: a stored time is display-only here.
pub fn rfc3339(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    let at = jiff::Timestamp::from_millisecond(ms).unwrap_or(jiff::Timestamp::MAX);
    // `%.3f` always prints three digits; `Z` marks UTC (the old hand-written formatter's output).
    at.strftime("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Parses an RFC 3339 time (`2026-05-01T12:34:56Z`, `…+02:00`, fractions allowed) into unix
/// milliseconds; `None` for other text and times before the epoch.
pub fn parse_rfc3339(text: &str) -> Option<u64> {
    let at: jiff::Timestamp = text.parse().ok()?;
    u64::try_from(at.as_millisecond()).ok()
}
