//! The one did-you-mean of the compiler: the lowering (statement names, transition words,
//! enum constants, model names) and the checks (node, agent, variable and workflow ids) all ask
//! [`did_you_mean`], so a misspelling gets the same suggestion wherever it is found.
//!
//! The work is capped so a suggestion stays cheap whatever the size of the workflow: at most
//! [`MAX_COMPARED`] candidates get a full edit-distance computation (candidates whose length
//! differs too much are skipped without one, and at most [`MAX_SCANNED`] are looked at), and
//! names longer than [`MAX_NAME_LEN`] get no suggestion.

use hensu_diagnostics::{Applicability, Diagnostic, Span};

/// At most this many candidates get a full edit-distance computation.
pub const MAX_COMPARED: usize = 500;
/// At most this many candidates are looked at (cheap length filter included).
pub const MAX_SCANNED: usize = 20_000;
/// Names longer than this (in chars) get no suggestion.
pub const MAX_NAME_LEN: usize = 128;

/// The largest edit distance still worth suggesting for a name of `len` chars: a third of the
/// name, at least one and at most four edits (past four the "suggestion" is a different word).
fn threshold(len: usize) -> usize {
    (len / 3).clamp(1, 4)
}

/// The closest candidate to `name`, if one is close enough: a case-insensitive match first,
/// else the smallest case-insensitive edit distance (optimal string alignment: a transposition
/// counts as one edit) within `clamp(len / 3, 1, 4)`. Ties prefer a candidate of the same length
/// (`GPT_40` → `GPT_4O`, not `GPT_4`), then the first one. `name` itself is never suggested.
pub fn did_you_mean<'a, I>(name: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    let len = name.chars().count();
    if len == 0 || len > MAX_NAME_LEN {
        return None;
    }
    let limit = threshold(len);
    let lower = name.to_lowercase();
    let mut best: Option<((usize, bool), &'a str)> = None;
    let mut compared = 0usize;
    for candidate in candidates.into_iter().take(MAX_SCANNED) {
        if candidate == name || candidate.is_empty() {
            continue;
        }
        if candidate.eq_ignore_ascii_case(name) {
            return Some(candidate);
        }
        let clen = candidate.chars().count();
        if clen.abs_diff(len) > limit || clen > MAX_NAME_LEN {
            continue;
        }
        if compared >= MAX_COMPARED {
            continue;
        }
        compared += 1;
        let distance = strsim::osa_distance(&lower, &candidate.to_lowercase());
        let key = (distance, clen != len);
        if distance <= limit && best.is_none_or(|(best_key, _)| key < best_key) {
            best = Some((key, candidate));
        }
    }
    best.map(|(_, c)| c)
}

/// Adds the machine-readable form of a did-you-mean to `d`: replace the text at `span` (exactly
/// the misspelled text, see [`hensu_diagnostics::Suggestion`]) with `replacement`.
pub(crate) fn replace_with(d: Diagnostic, span: Span, replacement: &str) -> Diagnostic {
    d.with_suggestion(
        span,
        replacement,
        format!("replace with `{replacement}`"),
        Applicability::MaybeIncorrect,
    )
}

/// The part of `span` that holds `name`, for a span taken from the origins (the checks see no
/// source text): the span itself when it is exactly as long as `name` (a bare identifier), the
/// inside when it is two bytes longer (`"name"` or `{name}`), else `None` (a coarser fallback
/// span, or a string with escapes: no structured suggestion, the help line still says it).
pub(crate) fn written_name(span: Span, name: &str) -> Option<Span> {
    let len = u32::try_from(name.len()).ok()?;
    if span.len() == len {
        Some(span)
    } else if span.len() == len.checked_add(2)? {
        Some(Span::new(span.start + 1, span.end - 1))
    } else {
        None
    }
}

/// [`did_you_mean`] for a name a check found at `span`: the help line ``did you mean `x`?``
/// plus, when the name's text can be located in `span` ([`written_name`]), the suggestion.
/// Returns `d` unchanged and `false` when there is no close candidate.
pub(crate) fn help_and_fix<'a, I>(
    d: Diagnostic,
    name: &str,
    span: Span,
    candidates: I,
) -> (Diagnostic, bool)
where
    I: IntoIterator<Item = &'a str>,
{
    let Some(candidate) = did_you_mean(name, candidates) else {
        return (d, false);
    };
    let d = d.with_help(format!("did you mean `{candidate}`?"));
    match written_name(span, name) {
        Some(at) => (replace_with(d, at, candidate), true),
        None => (d, true),
    }
}

/// `did you mean `x`?` for a help line, if there is a close candidate.
pub fn help_for<'a, I>(name: &str, candidates: I) -> Option<String>
where
    I: IntoIterator<Item = &'a str>,
{
    did_you_mean(name, candidates).map(|c| format!("did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names() {
        let names = ["draft", "review", "done"];
        assert_eq!(did_you_mean("drafft", names), Some("draft"));
        assert_eq!(did_you_mean("Review", names), Some("review"));
        assert_eq!(did_you_mean("REVIEw", names), Some("review"));
        assert_eq!(did_you_mean("xyz", names), None);
        assert_eq!(did_you_mean("draft", names), None);
        assert_eq!(did_you_mean("", names), None);
    }

    #[test]
    fn ties_prefer_the_same_length() {
        assert_eq!(did_you_mean("GPT_40", ["GPT_4", "GPT_4O"]), Some("GPT_4O"));
    }

    #[test]
    fn distance_is_case_insensitive() {
        assert_eq!(did_you_mean("Drafft", ["draft"]), Some("draft"));
    }

    #[test]
    fn written_name_finds_the_text_inside_quotes_or_braces() {
        assert_eq!(
            written_name(Span::new(10, 13), "abc"),
            Some(Span::new(10, 13))
        );
        assert_eq!(
            written_name(Span::new(10, 15), "abc"),
            Some(Span::new(11, 14))
        );
        assert_eq!(written_name(Span::new(10, 30), "abc"), None);
    }

    #[test]
    fn at_most_four_edits() {
        let long = "abcdefghijklmnopqrstu";
        assert_eq!(did_you_mean("abcdefghijklmnopqXXXX", [long]), Some(long));
        assert_eq!(did_you_mean("abcdefghijklmnopXXXXX", [long]), None);
    }
}
