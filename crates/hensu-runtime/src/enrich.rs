//! Prompt enrichment (upstream `EngineVariablePromptEnricher.DEFAULT`;
//! docs/language.md, *Prompt enrichment*), applied after
//! template resolution. hensu separates the engine-variable instructions (score, approved,
//! recommendation) by a blank line instead of gluing them to the text (docs/language.md, *Prompt enrichment*).

use hensu_ir::{Rubric, StateSchema};

/// The score instruction.
pub const SCORE_INSTRUCTION: &str = "Engine output requirement: your JSON response MUST include the field \"score\" with a numeric value between 0 and 100 (integer or decimal). Do not use text, only a JSON number.";
/// The approval instruction.
pub const APPROVED_INSTRUCTION: &str = "Engine output requirement: your JSON response MUST include the field \"approved\" with a boolean value — `true` if you approve the content, `false` if you reject it. Do not use text, only a JSON boolean.";
/// The recommendation instruction.
pub const RECOMMENDATION_INSTRUCTION: &str = "Engine output requirement: your JSON response MUST include the field \"recommendation\" with improvement feedback or review reasoning as a plain string.";

/// What the enricher needs to know about the call.
#[derive(Clone, Copy, Debug, Default)]
pub struct Enrichment<'a> {
    /// Context `recommendation`, when it is a string.
    pub recommendation: Option<&'a str>,
    pub rubric: Option<&'a Rubric>,
    pub needs_score: bool,
    pub needs_approved: bool,
    pub needs_recommendation: bool,
    pub writes: &'a [String],
    pub yields: &'a [String],
    pub schema: Option<&'a StateSchema>,
}

impl Enrichment<'_> {
    /// Whether anything would be appended.
    pub fn is_empty(&self) -> bool {
        self.recommendation.is_none_or(|r| r.trim().is_empty())
            && self.rubric.is_none()
            && !self.needs_score
            && !self.needs_approved
            && !self.needs_recommendation
            && self.writes.is_empty()
            && self.yields.is_empty()
    }
}

/// Appends the instructions to `prompt`, in upstream order.
pub fn enrich(prompt: &mut String, e: &Enrichment<'_>) {
    if let Some(rec) = e.recommendation.filter(|r| !r.trim().is_empty()) {
        prompt.push_str("\n\n### Previous Feedback\n");
        prompt.push_str(rec);
    }
    if let Some(rubric) = e.rubric {
        prompt.push_str("\n\n---\n\nScore the content above using these criteria:\n\n");
        for c in &rubric.criteria {
            prompt.push_str("- **");
            prompt.push_str(&c.name);
            prompt.push_str("**");
            if !c.description.trim().is_empty() {
                prompt.push_str(" — ");
                prompt.push_str(&c.description);
            }
            prompt.push('\n');
        }
        let trimmed = prompt.trim_end().len();
        prompt.truncate(trimmed);
    }
    for (on, text) in [
        (e.needs_score, SCORE_INSTRUCTION),
        (e.needs_approved, APPROVED_INSTRUCTION),
        (e.needs_recommendation, RECOMMENDATION_INSTRUCTION),
    ] {
        if on {
            prompt.push_str("\n\n");
            prompt.push_str(text);
        }
    }
    field_list(prompt, "Engine output requirement", e.writes, e.schema);
    field_list(prompt, "Engine yield requirement", e.yields, e.schema);
}

fn field_list(prompt: &mut String, prefix: &str, fields: &[String], schema: Option<&StateSchema>) {
    if fields.is_empty() {
        return;
    }
    prompt.push_str("\n\n");
    prompt.push_str(prefix);
    prompt.push_str(": your JSON response MUST include:");
    for f in fields {
        prompt.push_str("\n  \"");
        prompt.push_str(f);
        prompt.push('"');
        if let Some(desc) = schema
            .and_then(|s| s.variable(f))
            .and_then(|v| v.description.as_deref())
            .filter(|d| !d.trim().is_empty())
        {
            prompt.push_str(" — ");
            prompt.push_str(desc);
        }
    }
}
