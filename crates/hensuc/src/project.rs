//! Loading a project: the files named on the command line plus every workflow in
//! `<dir>/workflows/` when `-d DIR` is given ([`load`]), or the named files and what they
//! reference ([`load_scoped`]); each is read, parsed, lowered and checked, then the
//! project-level checks (sub-workflow references) run over all of them.

use std::path::{Path, PathBuf};

use hensu_diagnostics::lints::{LintLevel, LintSetting};
use hensu_diagnostics::{Diagnostic, FileId, Files, Span, codes};
use hensu_ir::Workflow;
use hensu_sema::origins::Origins;

use crate::fs_files::FsFiles;

/// Largest workflow file accepted (spans are u32 byte offsets).
const MAX_FILE_BYTES: u64 = u32::MAX as u64 - 1;

pub struct Unit {
    pub file: FileId,
    pub path: PathBuf,
    /// The IR when the file was usable enough to lower (it may still have errors).
    pub workflow: Option<Workflow>,
    pub origins: Origins,
    /// Named on the command line (as opposed to found in `<dir>/workflows/`).
    pub explicit: bool,
}

pub struct Project {
    pub files: Files,
    pub units: Vec<Unit>,
    pub diagnostics: Vec<Diagnostic>,
}

impl Project {
    pub fn error_count(&self) -> usize {
        crate::output::error_count(&self.diagnostics)
    }

    pub fn warning_count(&self) -> usize {
        self.diagnostics.len() - self.error_count()
    }

    /// Diagnostics of the files named on the command line, plus project-level ones (E05xx) that
    /// involve them.
    pub fn explicit_units(&self) -> impl Iterator<Item = &Unit> {
        self.units.iter().filter(|u| u.explicit)
    }
}

/// The working directory for prompts, rubrics, stubs and commands: `-d DIR` if given, else the
/// parent of the `workflows/` directory holding the file, else the file's own directory.
pub fn working_dir_for(path: &Path, dir: Option<&Path>) -> PathBuf {
    if let Some(dir) = dir {
        return dir.to_path_buf();
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if parent.file_name().is_some_and(|n| n == "workflows")
        && let Some(grand) = parent.parent()
    {
        return if grand.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            grand.to_path_buf()
        };
    }
    parent.to_path_buf()
}

fn is_workflow_file(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()),
        Some("hwf" | "kt" | "json")
    )
}

/// The files to compile: explicit paths (a directory expands to its workflow files) plus
/// `<dir>/workflows/*` when `dir` is given. Duplicates (same canonical path) are dropped.
fn collect_paths(paths: &[PathBuf], dir: Option<&Path>) -> anyhow::Result<Vec<(PathBuf, bool)>> {
    let mut out: Vec<(PathBuf, bool)> = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    let mut push = |p: PathBuf, explicit: bool, out: &mut Vec<(PathBuf, bool)>| {
        let key = p.canonicalize().unwrap_or_else(|_| p.clone());
        if seen.insert(key) {
            out.push((p, explicit));
        }
    };
    for p in paths {
        if p.is_dir() {
            for entry in sorted_dir(p)? {
                if is_workflow_file(&entry) {
                    push(entry, true, &mut out);
                }
            }
        } else {
            push(p.clone(), true, &mut out);
        }
    }
    if let Some(dir) = dir {
        let wf_dir = dir.join("workflows");
        if wf_dir.is_dir() {
            let explicit_all = paths.is_empty();
            for entry in sorted_dir(&wf_dir)? {
                if is_workflow_file(&entry) {
                    push(entry, explicit_all, &mut out);
                }
            }
        } else if paths.is_empty() {
            anyhow::bail!(
                "no workflows: `{}` has no `workflows/` directory",
                dir.display()
            );
        }
    }
    Ok(out)
}

fn sorted_dir(dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("cannot read directory `{}`: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    Ok(entries)
}

/// Load, lower and check a project. I/O errors on individual files become E0901 diagnostics so
/// every other file is still checked.
pub fn load(paths: &[PathBuf], dir: Option<&Path>) -> anyhow::Result<Project> {
    let mut files = Files::new();
    let mut units = Vec::new();
    let mut diagnostics = Vec::new();
    let mut lints = ProjectLints::default();
    for (path, explicit) in collect_paths(paths, dir)? {
        let (unit, mut diags) = compile_file(&mut files, path, explicit, dir, &mut lints);
        diagnostics.append(&mut diags);
        units.extend(unit);
    }
    Ok(finish(files, units, diagnostics))
}

/// Loads the named workflow files and, transitively, the workflows their sub-workflow nodes
/// reference, nothing else (`run`, `check FILE`): a broken or noisy unrelated file in
/// `workflows/` neither blocks nor clutters. Children are looked up in the `workflows/`
/// directory of the working directory ([`working_dir_for`]): `workflows/<id>.{hwf,kt,json}`
/// first, then the other files of that directory until the id is found.
pub fn load_scoped(paths: &[PathBuf], dir: Option<&Path>) -> anyhow::Result<Project> {
    let mut files = Files::new();
    let mut units: Vec<Unit> = Vec::new();
    let mut diagnostics = Vec::new();
    let mut search: Vec<PathBuf> = Vec::new();
    let mut lints = ProjectLints::default();
    for (path, explicit) in collect_paths(paths, None)? {
        let wf_dir = working_dir_for(&path, dir).join("workflows");
        if !search.contains(&wf_dir) {
            search.push(wf_dir);
        }
        let (unit, mut diags) = compile_file(&mut files, path, explicit, dir, &mut lints);
        diagnostics.append(&mut diags);
        units.extend(unit);
    }
    let loaded = |units: &[Unit], p: &Path| {
        let key = p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        units
            .iter()
            .any(|u| u.path.canonicalize().unwrap_or_else(|_| u.path.clone()) == key)
    };
    let mut candidates: Vec<PathBuf> = Vec::new();
    for d in &search {
        if d.is_dir() {
            candidates.extend(
                sorted_dir(d)?
                    .into_iter()
                    .filter(|p| is_workflow_file(p) && !loaded(&units, p)),
            );
        }
    }
    // Compiled while looking for an id, not (yet) referenced: kept aside with their diagnostics.
    let mut aside: Vec<(Unit, Vec<Diagnostic>)> = Vec::new();
    let mut next = 0;
    while next < units.len() {
        let wanted: Vec<String> = units[next]
            .workflow
            .iter()
            .flat_map(|w| w.nodes.values())
            .filter_map(|n| match n {
                hensu_ir::Node::SubWorkflow(s) if !s.workflow_id.is_empty() => {
                    Some(s.workflow_id.clone())
                }
                _ => None,
            })
            .collect();
        next += 1;
        for id in wanted {
            let has = |u: &Unit| u.workflow.as_ref().is_some_and(|w| w.id == id);
            if units.iter().any(has) {
                continue;
            }
            if let Some(i) = aside.iter().position(|(u, _)| has(u)) {
                let (unit, mut diags) = aside.swap_remove(i);
                diagnostics.append(&mut diags);
                units.push(unit);
                continue;
            }
            // The file named after the id first, then the rest in order.
            candidates.sort_by_key(|p| p.file_stem().is_none_or(|s| *s != *id.as_str()));
            while !candidates.is_empty() {
                let path = candidates.remove(0);
                let (unit, diags) = compile_file(&mut files, path, false, dir, &mut lints);
                let Some(unit) = unit else { continue };
                if has(&unit) {
                    diagnostics.extend(diags);
                    units.push(unit);
                    break;
                }
                aside.push((unit, diags));
            }
        }
    }
    Ok(finish(files, units, diagnostics))
}

/// Reads and compiles one file; an unreadable file is an E0901 diagnostic and no unit. The
/// project's `[lints]` levels apply to the file's diagnostics.
fn compile_file(
    files: &mut Files,
    path: PathBuf,
    explicit: bool,
    dir: Option<&Path>,
    lints: &mut ProjectLints,
) -> (Option<Unit>, Vec<Diagnostic>) {
    let display = path.display().to_string();
    let text = match read_source(&path) {
        Ok(text) => text,
        Err(message) => {
            let file = files.add(display, String::new());
            let d = Diagnostic::new(
                codes::E0901,
                format!("cannot read `{}`", path.display()),
                Span::default(),
                message.clone(),
            )
            .with_note(message)
            .in_file(file);
            return (None, vec![d]);
        }
    };
    // Invalid UTF-8 becomes U+FFFD with one E0001 per invalid run; the rest still compiles.
    let (text, decode_diagnostics) = match String::from_utf8(text) {
        Ok(text) => (text, Vec::new()),
        Err(e) => {
            let (text, diagnostics) = hensu_syntax::decode_source(e.as_bytes());
            (text.into_owned(), diagnostics)
        }
    };
    let file = files.add(display, text);
    let Some(source) = files.get(file).map(|f| f.text()) else {
        return (None, Vec::new());
    };
    let root = working_dir_for(&path, dir);
    let is_json = path.extension().is_some_and(|e| e == "json");
    let (workflow, origins, mut diags) = if is_json {
        let (workflow, origins, mut diags) = compile_json(source, file);
        diags.extend(decode_diagnostics.into_iter().map(|d| d.in_file(file)));
        (workflow, origins, diags)
    } else {
        compile_source(
            source,
            decode_diagnostics,
            file,
            &FsFiles::new(root.clone()),
        )
    };
    let mut out = Vec::new();
    let command_ids = lints.command_ids_for(&root, files, &mut out);
    if let Some(wf) = &workflow {
        diags.extend(check_action_ids(wf, &origins, command_ids));
    }
    let diags = hensu_sema::suppress::apply(&origins.suppressions, file, diags);
    let levels = lints.levels_for(&root, files, &mut out);
    out.extend(hensu_diagnostics::lints::apply(levels, diags));
    let diags = out;
    let unit = Unit {
        file,
        path,
        workflow,
        origins,
        explicit,
    };
    (Some(unit), diags)
}

/// The project-level checks over the loaded units, and the diagnostics in order.
fn finish(files: Files, units: Vec<Unit>, mut diagnostics: Vec<Diagnostic>) -> Project {
    let project_units: Vec<hensu_sema::check::ProjectUnit<'_>> = units
        .iter()
        .filter_map(|u| {
            u.workflow.as_ref().map(|w| hensu_sema::check::ProjectUnit {
                file: u.file,
                workflow: w,
                origins: &u.origins,
            })
        })
        .collect();
    diagnostics.extend(hensu_sema::check::check_project(&project_units));
    hensu_diagnostics::sort_diagnostics(&mut diagnostics);
    Project {
        files,
        units,
        diagnostics,
    }
}

/// `hensuc run NAME -d DIR`: a name that is not a file resolves to
/// `DIR/workflows/NAME.{hwf,kt,json}` (the first that exists).
pub fn resolve_workflow_name(name: &Path, dir: Option<&Path>) -> PathBuf {
    if name.is_file() || name.extension().is_some() || name.components().count() != 1 {
        return name.to_path_buf();
    }
    let base = dir.unwrap_or(Path::new(".")).join("workflows");
    ["hwf", "kt", "json"]
        .iter()
        .map(|ext| base.join(name).with_extension(ext))
        .find(|p| p.is_file())
        .unwrap_or_else(|| name.to_path_buf())
}

/// The `[lints]` tables of the projects seen so far (docs/language.md, *Suppressing a
/// warning*), and their `commands.yaml` ids, each read once per project directory.
#[derive(Default)]
struct ProjectLints {
    by_root: std::collections::BTreeMap<PathBuf, Vec<(&'static str, LintLevel)>>,
    commands: std::collections::BTreeMap<PathBuf, Option<Vec<String>>>,
}

impl ProjectLints {
    /// The command ids of `<root>/commands.yaml` (`None`: no such file, or one that is not a
    /// commands file — a run reports that). On first use, an E0211 for each command whose
    /// placeholders cannot be passed safely goes to `out`, pointing into `commands.yaml`: a
    /// run refuses the whole file, so `check` reports them all before any run does.
    fn command_ids_for(
        &mut self,
        root: &Path,
        files: &mut Files,
        out: &mut Vec<Diagnostic>,
    ) -> Option<&[String]> {
        self.commands
            .entry(root.to_path_buf())
            .or_insert_with(|| {
                let path = root.join("commands.yaml");
                let text = std::fs::read_to_string(&path).ok()?;
                let (ids, unsafe_commands) = hensu_host::audit_commands(&text).ok()?;
                if !unsafe_commands.is_empty() {
                    let file = files.add(path.display().to_string(), text.clone());
                    out.extend(
                        unsafe_commands
                            .iter()
                            .map(|c| unsafe_command(&text, c).in_file(file)),
                    );
                }
                Some(ids)
            })
            .as_deref()
    }

    /// The levels of `<root>/hensu.toml`; on first use its W0315 diagnostics go to `out`. A
    /// `hensu.toml` that does not parse is reported by `hensuc run`; it sets no level here.
    fn levels_for(
        &mut self,
        root: &Path,
        files: &mut Files,
        out: &mut Vec<Diagnostic>,
    ) -> &[(&'static str, LintLevel)] {
        self.by_root.entry(root.to_path_buf()).or_insert_with(|| {
            let path = root.join("hensu.toml");
            let Ok(text) = std::fs::read_to_string(&path) else {
                return Vec::new();
            };
            let Ok(entries) = hensu_providers::load_lints(&text) else {
                return Vec::new();
            };
            if entries.is_empty() {
                return Vec::new();
            }
            let settings: Vec<LintSetting<'_>> = entries
                .iter()
                .map(|e| LintSetting {
                    code: &e.code,
                    code_span: Span::from_range(e.code_span.clone()),
                    level: &e.level,
                    level_span: Span::from_range(e.level_span.clone()),
                })
                .collect();
            let (levels, problems) = hensu_diagnostics::lints::resolve(&settings);
            if !problems.is_empty() {
                let file = files.add(path.display().to_string(), text.clone());
                out.extend(problems.into_iter().map(|d| d.in_file(file)));
            }
            levels
        })
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

/// E0210: `execute`/`send` ids against the project's `commands.yaml` (`command_ids`) and the
/// host's handlers. Without a `commands.yaml`, or with one that is not a commands file
/// (reported when a run loads it), command ids are not checked here.
fn check_action_ids(
    wf: &Workflow,
    origins: &Origins,
    command_ids: Option<&[String]>,
) -> Vec<Diagnostic> {
    let handlers = hensu_host::action_handlers(None);
    let command_ids: Option<Vec<&str>> =
        command_ids.map(|ids| ids.iter().map(String::as_str).collect());
    let mut handler_ids = handlers.ids();
    // `send("mcp", …)` is served by the MCP servers of hensu.toml (docs/mcp.md).
    handler_ids.push("mcp");
    hensu_sema::check::check_actions(
        wf,
        origins,
        hensu_sema::check::KnownActions {
            commands: command_ids.as_deref(),
            handlers: &handler_ids,
        },
    )
}

fn read_source(path: &Path) -> Result<Vec<u8>, String> {
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    // A FIFO or device would block or never end; only regular files are read.
    if !meta.is_file() {
        return Err("not a regular file".to_string());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "the file is {} bytes; at most {MAX_FILE_BYTES} are supported",
            meta.len()
        ));
    }
    std::fs::read(path).map_err(|e| e.to_string())
}

/// `.hwf` / `.kt`: parse, lower, check.
pub fn compile_source(
    source: &str,
    decode_diagnostics: Vec<Diagnostic>,
    file: FileId,
    files: &dyn hensu_sema::files::FileProvider,
) -> (Option<Workflow>, Origins, Vec<Diagnostic>) {
    let lowered = hensu_sema::lower_decoded(source, decode_diagnostics, file, files);
    let mut diagnostics = lowered.diagnostics;
    if let Some(wf) = &lowered.workflow {
        diagnostics.extend(hensu_sema::check::check_workflow(
            wf,
            &lowered.origins,
            hensu_sema::check::InputKind::Source,
        ));
    }
    let diagnostics = diagnostics.into_iter().map(|d| d.in_file(file)).collect();
    (lowered.workflow, lowered.origins, diagnostics)
}

/// `.json`: deserialize (upstream wire format), then the same checks with spans into the JSON.
pub fn compile_json(source: &str, file: FileId) -> (Option<Workflow>, Origins, Vec<Diagnostic>) {
    match hensu_ir::from_json_with_spans(source) {
        Ok((wf, map)) => {
            let origins = hensu_sema::origins_from_json(&wf, &map, file);
            let diagnostics = hensu_sema::check::check_workflow(
                &wf,
                &origins,
                hensu_sema::check::InputKind::Json,
            )
            .into_iter()
            .map(|d| d.in_file(file))
            .collect();
            (Some(wf), origins, diagnostics)
        }
        Err(err) => {
            let origins = Origins {
                file,
                ..Origins::default()
            };
            let span = err
                .span
                .map(|s| Span::from_range(s.start..s.end))
                .unwrap_or_default();
            let label = if err.path.is_empty() {
                err.message.clone()
            } else {
                format!("at `{}`: {}", err.path, err.message)
            };
            let diag = Diagnostic::new(codes::E0902, "invalid json workflow", span, label)
                .with_help(
                    "a JSON workflow must follow the Hensu wire format (`hensuc build` writes one)",
                )
                .in_file(file);
            (None, origins, vec![diag])
        }
    }
}
