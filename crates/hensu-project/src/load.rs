//! `hensu.toml` text → [`ProjectFile`]: the typed [`ProjectConfig`] plus every problem of the
//! file as a diagnostic pointing into it. One error policy for every reader: a syntax error, a
//! wrong type or an unknown key in a section is an error (a run refuses the file), an unknown
//! top-level section a warning; each section is deserialized on its own, so one bad section
//! neither hides the problems of another nor discards its settings.

use std::ops::Range;

use hensu_diagnostics::lints::{LintLevel, LintSetting};
use hensu_diagnostics::{Diagnostic, Span};
use serde::Deserialize;
use toml::Spanned;
use toml::de::{DeTable, DeValue, Deserializer};

use crate::ProjectConfig;
use crate::messages;
use crate::spans::SpanIndex;

/// The name of the project file.
pub const PROJECT_FILE: &str = "hensu.toml";

/// A parsed `hensu.toml` (or its absence: [`ProjectFile::default`] is "no file").
#[derive(Clone, Debug, Default)]
pub struct ProjectFile {
    /// The text of the file; empty when there is none.
    pub text: String,
    /// Whether the project has a `hensu.toml`.
    pub exists: bool,
    /// The settings; a section with an error keeps its defaults.
    pub config: ProjectConfig,
    /// Every problem of the file, in `FileId(0)` (move them with [`Diagnostic::in_file`]).
    pub diagnostics: Vec<Diagnostic>,
    /// The valid `[lints]` levels (code → level).
    pub lint_levels: Vec<(&'static str, LintLevel)>,
    spans: SpanIndex,
}

impl ProjectFile {
    /// Parses the text of a `hensu.toml`.
    pub fn parse(text: &str) -> ProjectFile {
        let mut file = ProjectFile {
            text: text.to_string(),
            exists: true,
            ..ProjectFile::default()
        };
        let (root, syntax_errors) = DeTable::parse_recoverable(text);
        if !syntax_errors.is_empty() {
            // The recovered tree may hold half-read tables: report the syntax and read nothing.
            file.diagnostics = syntax_errors
                .iter()
                .map(|e| messages::syntax_error(text, e))
                .collect();
            return file;
        }
        file.spans = SpanIndex::build(root.get_ref());
        let whole = root.span();
        let mut valid = DeTable::new();
        for (key, value) in root.get_ref() {
            let (kept, mut problems) = file.read_section(text, key, value, whole.clone());
            file.diagnostics.append(&mut problems);
            if let Some(value) = kept {
                valid.insert(key.clone(), value);
            }
        }
        // Every section that deserialized on its own deserializes together.
        file.config = ProjectConfig::deserialize(Deserializer::from(Spanned::new(whole, valid)))
            .unwrap_or_default();
        let mut problems = crate::checks::check_config(&file.config, &file.spans);
        file.diagnostics.append(&mut problems);
        file.resolve_lints();
        hensu_diagnostics::sort_diagnostics(&mut file.diagnostics);
        file
    }

    /// Deserializes one top-level section on its own. An error inside an entry of the section
    /// (`[mcp.servers.NAME]`, `[providers.NAME]`, `[pricing."MODEL"]`) drops that entry and the
    /// rest is read again, so every bad entry is reported and the good ones are kept; an error
    /// in the section's own keys drops the section.
    fn read_section<'i>(
        &self,
        text: &str,
        key: &Spanned<toml::de::DeString<'i>>,
        value: &Spanned<DeValue<'i>>,
        whole: Range<usize>,
    ) -> (Option<Spanned<DeValue<'i>>>, Vec<Diagnostic>) {
        let mut value = value.clone();
        let mut problems = Vec::new();
        // Each round drops one entry, so the rounds are bounded by the entries.
        for _ in 0..=self.spans.table_count() {
            let mut one = DeTable::new();
            one.insert(key.clone(), value.clone());
            let Err(e) =
                ProjectConfig::deserialize(Deserializer::from(Spanned::new(whole.clone(), one)))
            else {
                return (Some(value), problems);
            };
            let key_span = Span::from_range(key.span());
            let at = e.span().map(Span::from_range).unwrap_or(key_span);
            let table = self.spans.table_around(at).map(<[String]>::to_vec);
            let name = match &table {
                Some(path) if path.len() > 1 && at != key_span => path
                    .iter()
                    .map(|p| messages::shown_name(p))
                    .collect::<Vec<_>>()
                    .join("."),
                _ => key.get_ref().to_string(),
            };
            let leaf = self.spans.key_at(at);
            problems.push(messages::section_error(
                text,
                &e,
                &name,
                key_span,
                leaf.as_deref(),
            ));
            // The entry to drop: a table below the section's first level.
            match table.filter(|p| p.len() >= 2 && p[0] == *key.get_ref()) {
                Some(path) if remove_entry(value.get_mut(), &path[1..]) => {}
                _ => return (None, problems),
            }
        }
        (None, problems)
    }

    /// The `[lints]` levels, and a W0315 for each setting that names no warning or no level.
    fn resolve_lints(&mut self) {
        let settings: Vec<LintSetting<'_>> = self
            .config
            .lints
            .iter()
            .map(|(code, level)| LintSetting {
                code: code.get_ref(),
                code_span: Span::from_range(code.span()),
                level: level.get_ref(),
                level_span: Span::from_range(level.span()),
            })
            .collect();
        let (levels, problems) = hensu_diagnostics::lints::resolve(&settings);
        self.lint_levels = levels;
        self.diagnostics.extend(problems);
    }

    /// Whether any diagnostic of the file is an error (a run refuses such a file).
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The first error as one line, `hensu.toml:LINE:COL: message` (with its help), for a
    /// command that refuses to run with it (`hensuc run`, `serve`, …); `None` when the file is
    /// usable.
    pub fn refusal(&self) -> Option<String> {
        let d = self.diagnostics.iter().find(|d| d.is_error())?;
        let source = hensu_diagnostics::SourceFile::new(PROJECT_FILE, self.text.as_str());
        let at = source.line_col(d.primary.span.start);
        let mut line = format!(
            "{PROJECT_FILE}:{}:{}: {} [{}]",
            at.line, at.column, d.message, d.code
        );
        if !d.primary.message.is_empty() {
            line.push_str(&format!(": {}", d.primary.message));
        }
        for h in &d.help {
            line.push_str(&format!(" (help: {h})"));
        }
        Some(line)
    }

    /// Whether the file has a `[server]` section: the project is served by `hensuc serve`,
    /// whose runs forward a `send` to a handler neither built in nor declared to the tenant's
    /// MCP tools (docs/mcp.md, *Declared action handlers*).
    pub fn is_served(&self) -> bool {
        self.spans.get(&["server"]).is_some()
    }

    /// The checks of `[[schedules]]` against the project's workflows (docs/schedules.md): E0517
    /// for a workflow the project lacks (`cost` answers `None`), then the budget check of
    /// `[budget] per_day` (E0515, E0516, W0602) with the workflow's worst-case `cost` per run.
    /// `now_ms` starts the days in which the check counts firings.
    pub fn check_schedules(
        &self,
        cost: &dyn Fn(&str) -> Option<hensu_sema::bounds::CostBound>,
        now_ms: u64,
    ) -> Vec<Diagnostic> {
        crate::schedules::check_against(
            &self.config.schedules,
            self.config.budget.per_day,
            &self.spans,
            cost,
            now_ms,
        )
    }

    /// W0905 for each `[pricing."MODEL"]` that no agent of `used` (the models of the project's
    /// agents) names, with the closest used or known model id as help.
    pub fn check_pricing<'a>(&self, used: impl IntoIterator<Item = &'a str>) -> Vec<Diagnostic> {
        crate::checks::unused_prices(&self.config, &self.spans, used.into_iter().collect())
    }

    /// W0340 for each `require_approval` pattern (docs/mcp.md, *Tool approval*) that matches
    /// none of `tools` (the tools the project's agents declare).
    pub fn check_approvals<'a>(&self, tools: impl IntoIterator<Item = &'a str>) -> Vec<Diagnostic> {
        crate::checks::unmatched_approvals(&self.config, &self.spans, tools.into_iter().collect())
    }
}

/// Removes the entry at `path` (relative to `value`); whether there was one.
fn remove_entry(value: &mut DeValue<'_>, path: &[String]) -> bool {
    let DeValue::Table(table) = value else {
        return false;
    };
    match path {
        [] => false,
        [last] => {
            let key = table.keys().find(|k| k.get_ref() == last.as_str()).cloned();
            key.is_some_and(|k| table.remove(&k).is_some())
        }
        [first, rest @ ..] => table
            .iter_mut()
            .find(|(k, _)| k.get_ref() == first.as_str())
            .is_some_and(|(_, v)| remove_entry(v.get_mut(), rest)),
    }
}
