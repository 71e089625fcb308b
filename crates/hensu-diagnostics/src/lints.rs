//! Lint levels: a project turns a warning off (`allow`) or into an error (`deny`) for all its
//! workflows with the `[lints]` table of `hensu.toml`, like Cargo's `[lints]`
//! (docs/language.md, *Suppressing a warning*). Errors cannot be allowed.

use crate::{Diagnostic, Severity, Span, codes};

/// What a project does with a warning code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LintLevel {
    /// Not reported.
    Allow,
    /// Reported as a warning (the default).
    Warn,
    /// Reported as an error.
    Deny,
}

impl LintLevel {
    /// `"allow"`, `"warn"`, `"deny"`.
    pub fn parse(text: &str) -> Option<LintLevel> {
        match text {
            "allow" => Some(LintLevel::Allow),
            "warn" => Some(LintLevel::Warn),
            "deny" => Some(LintLevel::Deny),
            _ => None,
        }
    }
}

/// One setting as written: the code and the level, with their spans in the settings file.
#[derive(Clone, Debug)]
pub struct LintSetting<'a> {
    pub code: &'a str,
    pub code_span: Span,
    pub level: &'a str,
    pub level_span: Span,
}

/// The valid settings (code → level) and a W0315 for each one naming no catalogued warning or
/// no known level. The diagnostics are in `FileId(0)`; the caller moves them into the settings
/// file with [`Diagnostic::in_file`].
pub fn resolve(settings: &[LintSetting<'_>]) -> (Vec<(&'static str, LintLevel)>, Vec<Diagnostic>) {
    let mut levels = Vec::new();
    let mut problems = Vec::new();
    for s in settings {
        let Some(info) = crate::lookup(s.code).filter(|i| i.code == s.code) else {
            problems.push(
                Diagnostic::new(
                    codes::W0315,
                    format!("unknown diagnostic code `{}`", s.code),
                    s.code_span,
                    "no diagnostic has this code",
                )
                .with_help("name a warning code such as `W0307`; `hensuc explain CODE` lists what each means"),
            );
            continue;
        };
        if info.severity == Severity::Error {
            problems.push(
                Diagnostic::new(
                    codes::W0315,
                    format!("`{}` is an error and cannot be allowed or denied", s.code),
                    s.code_span,
                    "only warnings have a level",
                )
                .with_help("remove the entry; fix the error instead"),
            );
            continue;
        }
        let Some(level) = LintLevel::parse(s.level) else {
            problems.push(
                Diagnostic::new(
                    codes::W0315,
                    format!("unknown lint level for `{}`", s.code),
                    s.level_span,
                    "expected \"allow\", \"warn\" or \"deny\"",
                )
                .with_help("write `\"allow\"`, `\"warn\"` or `\"deny\"`"),
            );
            continue;
        };
        levels.push((info.code, level));
    }
    (levels, problems)
}

/// Applies the levels to a file's diagnostics: an allowed warning is dropped, a denied one
/// becomes an error (its code stays, so `hensuc explain` still finds it).
pub fn apply(levels: &[(&str, LintLevel)], diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    if levels.is_empty() {
        return diagnostics;
    }
    diagnostics
        .into_iter()
        .filter_map(|mut d| {
            if d.severity != Severity::Warning {
                return Some(d);
            }
            match levels
                .iter()
                .rev()
                .find(|(c, _)| *c == d.code)
                .map(|(_, l)| *l)
            {
                Some(LintLevel::Allow) => None,
                Some(LintLevel::Deny) => {
                    d.severity = Severity::Error;
                    d.notes
                        .push(format!("`{}` is denied by `[lints]` in hensu.toml", d.code));
                    Some(d)
                }
                Some(LintLevel::Warn) | None => Some(d),
            }
        })
        .collect()
}
