//! The files of a project besides its workflows, each read once per project directory while
//! the project loads: `hensu.toml` (through hensu-project: its `[lints]` levels and every
//! problem of the file as a diagnostic) and `commands.yaml` (its ids, E0211, E0510, W0322).

use std::path::{Path, PathBuf};

use hensu_diagnostics::lints::LintLevel;
use hensu_diagnostics::{Diagnostic, FileId, Files, Span, codes};
use hensu_ir::Workflow;

/// The `[lints]` tables of the projects seen so far (docs/language.md, *Suppressing a
/// warning*), and their `commands.yaml` ids, each read once per project directory.
#[derive(Default)]
pub(crate) struct ProjectLints {
    /// Each project's `hensu.toml` and the id its text got in `Files` (when it has problems).
    by_root: std::collections::BTreeMap<PathBuf, (hensu_project::Workspace, Option<FileId>)>,
    commands:
        std::collections::BTreeMap<PathBuf, Option<(crate::commands_yaml::CommandsAudit, FileId)>>,
}

impl ProjectLints {
    /// What `check` knows of `<root>/commands.yaml` (`None`: no such file), and its file id.
    /// On first use its diagnostics go to `out`, pointing into the file: E0211 for each
    /// command whose placeholders cannot be passed safely (a run refuses the whole file, so
    /// `check` reports them all before any run does), then E0510 and W0322
    /// (crate::commands_yaml).
    pub(crate) fn command_ids_for(
        &mut self,
        root: &Path,
        files: &mut Files,
        out: &mut Vec<Diagnostic>,
    ) -> Option<&(crate::commands_yaml::CommandsAudit, FileId)> {
        self.commands
            .entry(root.to_path_buf())
            .or_insert_with(|| {
                let path = root.join("commands.yaml");
                let text = std::fs::read_to_string(&path).ok()?;
                let file = files.add(path.display().to_string(), text.clone());
                let unsafe_commands = hensu_host::audit_commands(&text)
                    .map(|(_, u)| u)
                    .unwrap_or_default();
                out.extend(
                    unsafe_commands
                        .iter()
                        .map(|c| unsafe_command(&text, c).in_file(file)),
                );
                let audit = crate::commands_yaml::audit(&text, !unsafe_commands.is_empty());
                out.extend(audit.diagnostics.iter().map(|d| d.clone().in_file(file)));
                Some((audit, file))
            })
            .as_ref()
    }

    /// The `[lints]` levels of `<root>/hensu.toml`; on first use every problem of the file
    /// (hensu-project: syntax, types, unknown keys, endpoints, hosts, W0315) goes to `out`,
    /// pointing into it, and a file that cannot be read is an E0901.
    pub(crate) fn levels_for(
        &mut self,
        root: &Path,
        files: &mut Files,
        out: &mut Vec<Diagnostic>,
    ) -> &[(&'static str, LintLevel)] {
        let (workspace, _) = self.by_root.entry(root.to_path_buf()).or_insert_with(|| {
            let workspace = match hensu_project::Workspace::load_dir(root) {
                Ok(w) => w,
                Err(message) => {
                    let path = root.join(hensu_project::PROJECT_FILE);
                    let file = files.add(path.display().to_string(), String::new());
                    out.push(
                        Diagnostic::new(
                            codes::E0901,
                            format!("cannot read `{}`", path.display()),
                            Span::default(),
                            message,
                        )
                        .in_file(file),
                    );
                    return (hensu_project::Workspace::default(), None);
                }
            };
            let file = (!workspace.file.diagnostics.is_empty()).then(|| {
                let path = workspace.project_file_path();
                files.add(path.display().to_string(), workspace.file.text.clone())
            });
            if let Some(file) = file {
                out.extend(
                    workspace
                        .file
                        .diagnostics
                        .iter()
                        .map(|d| d.clone().in_file(file)),
                );
            }
            (workspace, file)
        });
        &workspace.file.lint_levels
    }

    /// The handler ids `<root>/hensu.toml` declares (`[handlers.NAME]`), or `None` when the
    /// project is served (`[server]`): a server forwards a `send` to any other id to the
    /// tenant's MCP tools, so every id may be valid there (docs/mcp.md, *Declared action
    /// handlers*). Loads the file as [`Self::levels_for`] does.
    pub(crate) fn declared_handlers(
        &mut self,
        root: &Path,
        files: &mut Files,
        out: &mut Vec<Diagnostic>,
    ) -> Option<Vec<String>> {
        self.levels_for(root, files, out);
        let (workspace, _) = self.by_root.get(root)?;
        let file = &workspace.file;
        (!file.is_served()).then(|| file.config.handlers.keys().cloned().collect())
    }

    /// W0340 of each project: `require_approval` patterns (docs/mcp.md, *Tool approval*)
    /// that match no tool an agent of its loaded workflows declares.
    pub(crate) fn approval_problems(
        &self,
        loaded: &[(&Path, &Workflow)],
        files: &mut Files,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (root, (workspace, file)) in &self.by_root {
            let mcp = &workspace.file.config.mcp;
            let gates = !mcp.require_approval.is_empty()
                || mcp.servers.values().any(|s| !s.require_approval.is_empty());
            if !gates {
                continue;
            }
            let tools: Vec<&str> = loaded
                .iter()
                .filter(|(r, _)| *r == root.as_path())
                .flat_map(|(_, w)| w.agents.values().flat_map(|a| a.tools.iter()))
                .map(String::as_str)
                .collect();
            let problems = workspace.file.check_approvals(tools);
            if problems.is_empty() {
                continue;
            }
            let file = file.unwrap_or_else(|| {
                let path = workspace.project_file_path();
                files.add(path.display().to_string(), workspace.file.text.clone())
            });
            out.extend(problems.into_iter().map(|d| d.in_file(file)));
        }
        out
    }

    /// W0905 of each project: prices for models no agent of its loaded workflows (each with
    /// its project's root) uses.
    pub(crate) fn pricing_problems(
        &self,
        loaded: &[(&Path, &Workflow)],
        files: &mut Files,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (root, (workspace, file)) in &self.by_root {
            if workspace.file.config.pricing.is_empty() {
                continue;
            }
            let models: Vec<&str> = loaded
                .iter()
                .filter(|(r, _)| *r == root.as_path())
                .flat_map(|(_, w)| w.agents.values().map(|a| a.model.as_str()))
                .collect();
            let problems = workspace.file.check_pricing(models);
            if problems.is_empty() {
                continue;
            }
            let file = file.unwrap_or_else(|| {
                let path = workspace.project_file_path();
                files.add(path.display().to_string(), workspace.file.text.clone())
            });
            out.extend(problems.into_iter().map(|d| d.in_file(file)));
        }
        out
    }
}

impl ProjectLints {
    /// The schedule checks of each project (`[[schedules]]` against its loaded workflows,
    /// each with its project's root): E0517, and the budget check E0515, E0516, W0602
    /// (docs/schedules.md). `now_ms` starts the days the budget check counts.
    pub(crate) fn schedule_problems(
        &self,
        loaded: &[(&Path, &Workflow)],
        files: &mut Files,
        now_ms: u64,
    ) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for (root, (workspace, file)) in &self.by_root {
            let config = &workspace.file.config;
            if config.schedules.is_empty() {
                continue;
            }
            let ours: Vec<&Workflow> = loaded
                .iter()
                .filter(|(r, _)| *r == root.as_path())
                .map(|(_, w)| *w)
                .collect();
            let lookup = |id: &str| ours.iter().find(|w| w.id == id).copied();
            let options = config.bounds_options();
            let cost = |id: &str| {
                lookup(id).map(|w| hensu_sema::bounds::analyze(w, &lookup, &options).cost(&options))
            };
            let problems = workspace.file.check_schedules(&cost, now_ms);
            if problems.is_empty() {
                continue;
            }
            let file = file.unwrap_or_else(|| {
                let path = workspace.project_file_path();
                files.add(path.display().to_string(), workspace.file.text.clone())
            });
            out.extend(problems.into_iter().map(|d| d.in_file(file)));
        }
        out
    }
}

/// E0211: a command of `commands.yaml` with a placeholder where no value can be passed safely
/// (docs/security.md, *Action commands*), at the placeholder when the command is written
/// verbatim in the YAML, else at its id.
fn unsafe_command(text: &str, c: &hensu_host::UnsafeCommand) -> Diagnostic {
    // The key: the id after indentation or a quote, then `:` (after a closing quote, if any).
    let key_at = text
        .match_indices(c.id.as_str())
        .map(|(at, _)| at)
        .find(|&at| {
            let before = text[..at].chars().next_back();
            let after = text[at + c.id.len()..].trim_start_matches(['"', '\'']);
            before.is_none_or(|b| matches!(b, ' ' | '\t' | '\n' | '"' | '\''))
                && after.starts_with(':')
        });
    let key_span = key_at.map(|at| Span::from_range(at..at + c.id.len()));
    let at_placeholder = key_at
        .and_then(|at| text[at..].find(c.command.as_str()).map(|p| at + p))
        .map(|command_at| {
            let offset = c.error.offset.min(c.command.len());
            let rest = c.command.get(offset..).unwrap_or("");
            let len = match rest.find('}') {
                Some(end) if rest.starts_with('{') => end + 1,
                _ => rest.chars().next().map_or(0, char::len_utf8),
            };
            Span::from_range(command_at + offset..command_at + offset + len)
        });
    let span = at_placeholder.or(key_span).unwrap_or_default();
    let mut d = Diagnostic::new(
        codes::E0211,
        format!("command `{}` cannot receive a value safely", c.id),
        span,
        c.error.message.clone(),
    )
    .with_note("a run refuses the whole commands.yaml while one command is unsafe")
    .with_help("pass the value as a separate word: `printf '%s' {name}`, or inside \"…\" or '…'");
    if let (Some(k), Some(_)) = (key_span, at_placeholder) {
        d = d.with_label(k, "in this command");
    }
    d
}
