//! The rubric markdown parser, matching upstream's `RubricParser` line for line in behaviour.
//!
//! Line-oriented; every line is trimmed:
//! * `# Rubric: <id>` → rubric id and name (default id: the fallback id without `.md`);
//! * `## Metadata` opens the metadata section, any other `## ` line closes it; inside,
//!   `- key: value` with keys `name`, `version`, `pass_threshold` (default 70, must be in 0..=100),
//!   `type` (see [`rubric_type_from_str`]); unknown keys are ignored;
//! * `### <Category> (weight: <int>)` → current category, weight = int / 100 (no suffix → 1.0);
//! * `#### <Name>` → a criterion; `- points: <int>` and `- evaluation: <text>` attach to it.
//!   Criterion id = lowercase(`category_name`) with whitespace → `_`; weight = points × category
//!   weight; description = evaluation text; `min_score` 0; `required` false;
//! * no `####` header at all → one criterion `default` / "Overall Quality", weight 1.0.
//!
//! The parser never panics; malformed numbers are reported as [`RubricError`].

use crate::model::{Criterion, Rubric, RubricType};

/// Default `pass_threshold`.
pub const DEFAULT_PASS_THRESHOLD: f64 = 70.0;
/// Default rubric `version`.
pub const DEFAULT_RUBRIC_VERSION: &str = "1.0";

/// A rubric that cannot be built. The checker reports these as E0107.
#[derive(Clone, Debug, PartialEq)]
pub enum RubricError {
    /// `pass_threshold` parsed but lies outside `0..=100` (or is not finite).
    PassThresholdOutOfRange {
        value: String,
        /// 1-based line in the raw text.
        line: usize,
        /// Byte offset of the value in the raw text.
        offset: usize,
    },
    /// A numeric metadata/criterion value (`pass_threshold`, `points`) is not a number.
    InvalidNumber {
        key: String,
        value: String,
        line: usize,
        offset: usize,
    },
}

impl RubricError {
    /// 1-based line of the offending entry.
    pub fn line(&self) -> usize {
        match self {
            RubricError::PassThresholdOutOfRange { line, .. }
            | RubricError::InvalidNumber { line, .. } => *line,
        }
    }

    /// Byte offset (in the raw rubric text) of the offending value.
    pub fn offset(&self) -> usize {
        match self {
            RubricError::PassThresholdOutOfRange { offset, .. }
            | RubricError::InvalidNumber { offset, .. } => *offset,
        }
    }
}

impl std::fmt::Display for RubricError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RubricError::PassThresholdOutOfRange { value, line, .. } => write!(
                f,
                "rubric pass_threshold {value} is out of range (must be between 0 and 100), line {line}"
            ),
            RubricError::InvalidNumber {
                key, value, line, ..
            } => write!(f, "rubric {key} '{value}' is not a number, line {line}"),
        }
    }
}

impl std::error::Error for RubricError {}

/// Maps a metadata `type` value to a [`RubricType`] (case-insensitive):
/// `code_quality|code-quality|pr_review` → CODE_QUALITY, `security|security_review` → SECURITY,
/// `performance|performance_review` → PERFORMANCE, `documentation|docs|content_review` →
/// DOCUMENTATION, `custom` → CUSTOM, anything else STANDARD.
pub fn rubric_type_from_str(s: &str) -> RubricType {
    match s.trim().to_ascii_lowercase().as_str() {
        "code_quality" | "code-quality" | "pr_review" => RubricType::CodeQuality,
        "security" | "security_review" => RubricType::Security,
        "performance" | "performance_review" => RubricType::Performance,
        "documentation" | "docs" | "content_review" => RubricType::Documentation,
        "custom" => RubricType::Custom,
        _ => RubricType::Standard,
    }
}

struct PendingCriterion {
    name: String,
    category: Option<String>,
    category_weight: f64,
    points: i64,
    evaluation: String,
}

impl PendingCriterion {
    fn finish(self) -> Criterion {
        let base = match &self.category {
            Some(c) => format!("{c}_{}", self.name),
            None => self.name.clone(),
        };
        let id: String = base
            .to_lowercase()
            .chars()
            .map(|c| if c.is_whitespace() { '_' } else { c })
            .collect();
        Criterion {
            id,
            name: self.name,
            description: self.evaluation,
            weight: self.points as f64 * self.category_weight,
            min_score: 0.0,
            required: false,
        }
    }
}

/// Strips a `.md` suffix (case-insensitive) from a fallback id.
fn strip_md(id: &str) -> &str {
    let n = id.len();
    if n >= 3 && id.is_char_boundary(n - 3) && id[n - 3..].eq_ignore_ascii_case(".md") {
        &id[..n - 3]
    } else {
        id
    }
}

/// Splits `- key: value` into `(key, value, value byte offset within line)`.
fn list_entry(line: &str) -> Option<(&str, &str, usize)> {
    let rest = line.strip_prefix('-')?;
    let colon = rest.find(':')?;
    let key = rest[..colon].trim();
    let after = &rest[colon + 1..];
    let value = after.trim();
    let lead = after.len() - after.trim_start().len();
    Some((key, value, 1 + colon + 1 + lead))
}

/// Parses `### Name (weight: 30)` into `("Name", 0.30)`; no (valid) suffix → `(text, 1.0)`.
fn category_header(text: &str) -> (String, f64) {
    if let Some(open) = text.rfind('(')
        && text.ends_with(')')
    {
        let inner = text[open + 1..text.len() - 1].trim();
        if let Some(w) = inner.strip_prefix("weight:")
            && let Ok(n) = w.trim().parse::<i64>()
        {
            return (text[..open].trim().to_string(), n as f64 / 100.0);
        }
    }
    (text.to_string(), 1.0)
}

/// Parses rubric markdown. `fallback_id` (node or branch id, or file name; a `.md` suffix is
/// removed) is the rubric id when there is no `# Rubric: <id>` line.
pub fn parse_rubric(fallback_id: &str, raw: &str) -> Result<Rubric, RubricError> {
    let mut id = strip_md(fallback_id).to_string();
    let mut name: Option<String> = None;
    let mut version = DEFAULT_RUBRIC_VERSION.to_string();
    let mut rubric_type = RubricType::Standard;
    let mut pass_threshold = DEFAULT_PASS_THRESHOLD;
    let mut in_metadata = false;
    let mut category: Option<(String, f64)> = None;
    let mut current: Option<PendingCriterion> = None;
    let mut criteria = Vec::new();

    let mut line_start = 0usize;
    for (index, raw_line) in raw.split('\n').enumerate() {
        let line_no = index + 1;
        let this_start = line_start;
        line_start += raw_line.len() + 1;
        let lead = raw_line.len() - raw_line.trim_start().len();
        let offset_of = |within_trimmed: usize| this_start + lead + within_trimmed;
        let line = raw_line.trim();

        if let Some(rest) = line.strip_prefix("#### ") {
            if let Some(c) = current.take() {
                criteria.push(c.finish());
            }
            let (cat, w) = match &category {
                Some((c, w)) => (Some(c.clone()), *w),
                None => (None, 1.0),
            };
            current = Some(PendingCriterion {
                name: rest.trim().to_string(),
                category: cat,
                category_weight: w,
                points: 0,
                evaluation: String::new(),
            });
        } else if let Some(rest) = line.strip_prefix("### ") {
            if let Some(c) = current.take() {
                criteria.push(c.finish());
            }
            category = Some(category_header(rest.trim()));
        } else if let Some(rest) = line.strip_prefix("## ") {
            in_metadata = rest.trim() == "Metadata";
        } else if let Some(rest) = line.strip_prefix("# Rubric:") {
            let rid = rest.trim();
            if !rid.is_empty() {
                id = rid.to_string();
                name = Some(rid.to_string());
            }
        } else if let Some((key, value, voff)) = list_entry(line) {
            if in_metadata {
                match key.to_ascii_lowercase().as_str() {
                    "name" => name = Some(value.to_string()),
                    "version" => version = value.to_string(),
                    "type" => rubric_type = rubric_type_from_str(value),
                    "pass_threshold" => {
                        let parsed =
                            parse_java_double(value).ok_or_else(|| RubricError::InvalidNumber {
                                key: "pass_threshold".to_string(),
                                value: value.to_string(),
                                line: line_no,
                                offset: offset_of(voff),
                            })?;
                        if !(0.0..=100.0).contains(&parsed) {
                            return Err(RubricError::PassThresholdOutOfRange {
                                value: value.to_string(),
                                line: line_no,
                                offset: offset_of(voff),
                            });
                        }
                        pass_threshold = parsed;
                    }
                    _ => {}
                }
            } else if let Some(c) = current.as_mut() {
                match key.to_ascii_lowercase().as_str() {
                    "points" => {
                        c.points =
                            value
                                .parse::<i64>()
                                .map_err(|_| RubricError::InvalidNumber {
                                    key: "points".to_string(),
                                    value: value.to_string(),
                                    line: line_no,
                                    offset: offset_of(voff),
                                })?;
                    }
                    "evaluation" => c.evaluation = value.to_string(),
                    _ => {}
                }
            }
        }
    }
    if let Some(c) = current.take() {
        criteria.push(c.finish());
    }
    if criteria.is_empty() {
        criteria.push(Criterion {
            id: "default".to_string(),
            name: "Overall Quality".to_string(),
            description: String::new(),
            weight: 1.0,
            min_score: 0.0,
            required: false,
        });
    }
    Ok(Rubric {
        name: name.unwrap_or_else(|| id.clone()),
        id,
        version,
        rubric_type,
        pass_threshold,
        criteria,
        raw_content: raw.to_string(),
    })
}

/// `Double.parseDouble`-like: decimal or exponent notation, optional `d`/`f` suffix; rejects
/// NaN / infinities (they are never valid thresholds).
fn parse_java_double(s: &str) -> Option<f64> {
    let t = s.trim();
    let t = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | '-' | '+' | 'e' | 'E'))
    {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}
