//! Loading a project: the files named on the command line plus every workflow in
//! `<dir>/workflows/` when `-d DIR` is given ([`load`]), or the named files and what they
//! reference ([`load_scoped`]); each is read, parsed, lowered and checked, then the
//! project-level checks (sub-workflow references) run over all of them.

use std::path::{Path, PathBuf};

use hensu_diagnostics::{Diagnostic, FileId, Files, Span, codes};
use hensu_ir::Workflow;
use hensu_sema::origins::Origins;

pub use hensu_project::compile::compile_json;
use hensu_project::compile::read_json;

use crate::fs_files::FsFiles;
use crate::project_files::ProjectLints;

/// The settings of `<workdir>/hensu.toml` (the defaults without one) for a command that acts on
/// them (`run`, `serve`, the store commands): the file's first error refuses, with its place
/// and code, exactly what `hensuc check` reports.
pub fn settings(workdir: &Path) -> anyhow::Result<hensu_project::ProjectConfig> {
    let workspace = hensu_project::Workspace::load_dir(workdir).map_err(anyhow::Error::msg)?;
    workspace
        .config_or_refusal()
        .cloned()
        .map_err(anyhow::Error::msg)
}

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
    /// `extends("…")` and `routes` of the file; `workflow` and `origins` are the merged ones
    /// once the project is loaded (docs/language.md, *Workflow extension*).
    pub extension: Option<hensu_sema::extend::Extension>,
    /// The working directory of the file ([`working_dir_for`]).
    pub(crate) root: PathBuf,
    input: hensu_sema::check::InputKind,
    /// The length of the file's text.
    len: u32,
    /// Diagnostics of the reading and lowering, until [`finish`] adds the checks.
    pending: Vec<Diagnostic>,
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
/// parent of the `workflows/` directory holding the file (however the path was typed: from
/// inside `workflows/`, `x.hwf` is the project's too), else the nearest directory at or above
/// the file's that has a `hensu.toml`, else the file's own directory.
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
    let Ok(absolute) = parent.canonicalize() else {
        return parent.to_path_buf();
    };
    if absolute.file_name().is_some_and(|n| n == "workflows") {
        return parent.join("..");
    }
    match hensu_project::discover(&absolute) {
        Some(root) if root != absolute => relative_ancestor(parent, &absolute, &root),
        _ => parent.to_path_buf(),
    }
}

/// `ancestor` (an ancestor of `absolute`, the canonical form of `written`) written relative to
/// `written`, so printed paths keep the form the user typed: `sub` → `sub/..`.
fn relative_ancestor(written: &Path, absolute: &Path, ancestor: &Path) -> PathBuf {
    let up = absolute
        .strip_prefix(ancestor)
        .map_or(0, |rest| rest.components().count());
    let mut out = written.to_path_buf();
    for _ in 0..up {
        out.push("..");
    }
    out
}

/// The project of a command given no directory and no file: the nearest directory at or above
/// the current one that has a `hensu.toml` (like cargo's search for `Cargo.toml`), written
/// relative to the current directory (`.`, `..`, …).
pub fn discover_project() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    let root = hensu_project::discover(&cwd)?;
    Some(relative_ancestor(Path::new("."), &cwd, &root))
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
            for (entry, _) in workflow_files(p)? {
                push(entry, true, &mut out);
            }
        } else {
            push(p.clone(), true, &mut out);
        }
    }
    if let Some(dir) = dir {
        let wf_dir = dir.join("workflows");
        if wf_dir.is_dir() {
            let explicit_all = paths.is_empty();
            for (entry, _) in workflow_files(&wf_dir)? {
                push(entry, explicit_all, &mut out);
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

/// The workflow files of `dir`, sorted, each with whether it is a symbolic link. The type of a
/// directory entry comes with the listing, so only links cost a `stat` (to follow them).
fn workflow_files(dir: &Path) -> anyhow::Result<Vec<(PathBuf, bool)>> {
    let mut entries: Vec<(PathBuf, bool)> = std::fs::read_dir(dir)
        .map_err(|e| anyhow::anyhow!("cannot read directory `{}`: {e}", dir.display()))?
        .filter_map(|e| {
            let e = e.ok()?;
            let path = e.path();
            if !is_workflow_file(&path) {
                return None;
            }
            let link = match e.file_type() {
                Ok(t) if t.is_file() => false,
                Ok(t) if !t.is_symlink() => return None,
                Ok(_) => true,
                Err(_) => true,
            };
            (!link || path.is_file()).then_some((path, link))
        })
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
    let mut search: Vec<PathBuf> = Vec::new();
    for (path, explicit) in collect_paths(paths, dir)? {
        let wf_dir = working_dir_for(&path, dir).join("workflows");
        if !search.contains(&wf_dir) {
            search.push(wf_dir);
        }
        let (unit, mut diags) = compile_file(&mut files, path, explicit, dir, &mut lints);
        diagnostics.append(&mut diags);
        units.extend(unit);
    }
    // An extending workflow is compiled with its base (docs/language.md, *Workflow extension*).
    let wanted = References {
        sub_workflows: false,
    };
    pull_references(
        &mut files,
        &mut units,
        &mut diagnostics,
        &search,
        dir,
        wanted,
        &mut lints,
    )?;
    Ok(finish(files, units, diagnostics, &mut lints, dir.is_some()))
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
    let wanted = References {
        sub_workflows: true,
    };
    pull_references(
        &mut files,
        &mut units,
        &mut diagnostics,
        &search,
        dir,
        wanted,
        &mut lints,
    )?;
    Ok(finish(files, units, diagnostics, &mut lints, false))
}

/// Which references [`pull_references`] follows.
#[derive(Clone, Copy)]
struct References {
    /// Sub-workflow targets too (else only the bases of extending workflows).
    sub_workflows: bool,
}

/// Compiles, from the `search` directories, the workflows the units reference by id and,
/// transitively, theirs: `workflows/<id>.{hwf,kt,json}` first, then the other files of those
/// directories until the id is found.
fn pull_references(
    files: &mut Files,
    units: &mut Vec<Unit>,
    diagnostics: &mut Vec<Diagnostic>,
    search: &[PathBuf],
    dir: Option<&Path>,
    wanted: References,
    lints: &mut ProjectLints,
) -> anyhow::Result<()> {
    // Listed when the first referenced id is not among the units already loaded (most
    // workflows reference none): the files of the search directories, minus those units.
    let mut candidates: Option<Vec<PathBuf>> = None;
    // Compiled while looking for an id, not (yet) referenced: kept aside with their diagnostics.
    let mut aside: Vec<(Unit, Vec<Diagnostic>)> = Vec::new();
    let mut next = 0;
    while next < units.len() {
        // Sub-workflow targets and the base of an extending workflow.
        let wanted: Vec<String> = units[next]
            .workflow
            .iter()
            .filter(|_| wanted.sub_workflows)
            .flat_map(|w| w.nodes.values())
            .filter_map(|n| n.called_workflow().filter(|id| !id.is_empty()))
            .map(str::to_string)
            .chain(
                units[next]
                    .extension
                    .iter()
                    .filter_map(|e| e.base.as_ref().map(|(id, _)| base_search_id(id))),
            )
            .collect();
        next += 1;
        for id in wanted {
            let has = |u: &Unit| u.workflow.as_ref().is_some_and(|w| w.id == id);
            if units.iter().any(&has) {
                continue;
            }
            if let Some(i) = aside.iter().position(|(u, _)| has(u)) {
                let (unit, mut diags) = aside.swap_remove(i);
                diagnostics.append(&mut diags);
                units.push(unit);
                continue;
            }
            let candidates = match &mut candidates {
                Some(listed) => listed,
                None => candidates.insert(unloaded_files(search, units)?),
            };
            // The file named after the id first, then the rest in order.
            candidates.sort_by_key(|p| p.file_stem().is_none_or(|s| *s != *id.as_str()));
            while !candidates.is_empty() {
                let path = candidates.remove(0);
                let (unit, diags) = compile_file(files, path, false, dir, lints);
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
    Ok(())
}

/// The workflow files of the `search` directories that are none of `units` (compared by
/// canonical path). A file that is not a link is compared under its canonical directory, so
/// each directory is resolved once instead of each file.
fn unloaded_files(search: &[PathBuf], units: &[Unit]) -> anyhow::Result<Vec<PathBuf>> {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let loaded: std::collections::HashSet<PathBuf> =
        units.iter().map(|u| canonical(&u.path)).collect();
    let mut out = Vec::new();
    for d in search {
        if !d.is_dir() {
            continue;
        }
        let dir = canonical(d);
        for (path, link) in workflow_files(d)? {
            let key = match path.file_name() {
                Some(name) if !link => dir.join(name),
                _ => canonical(&path),
            };
            if !loaded.contains(&key) {
                out.push(path);
            }
        }
    }
    Ok(out)
}

/// The id to look for for `extends(base)`: a file path (an error, E0506) is looked up by its
/// file stem, so the error can name the id of that file.
fn base_search_id(base: &str) -> String {
    let name = base.rsplit(['/', '\\']).next().unwrap_or(base);
    match name.rsplit_once('.') {
        Some((stem, "hwf" | "kt" | "json")) => stem.to_string(),
        _ => base.to_string(),
    }
}

/// Reads and lowers one file; an unreadable file is an E0901 diagnostic and no unit. The
/// checks run in [`finish`], once every base of an extending workflow is loaded.
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
    let len = u32::try_from(source.len()).unwrap_or(u32::MAX);
    let root = working_dir_for(&path, dir);
    let is_json = path.extension().is_some_and(|e| e == "json");
    let (lowered, input) = if is_json {
        let mut lowered = read_json(source, file);
        lowered
            .diagnostics
            .extend(decode_diagnostics.into_iter().map(|d| d.in_file(file)));
        (lowered, hensu_sema::check::InputKind::Json)
    } else {
        let lowered = hensu_sema::lower_decoded(
            source,
            decode_diagnostics,
            file,
            &FsFiles::new(root.clone()),
        );
        (lowered, hensu_sema::check::InputKind::Source)
    };
    // The project's `[lints]` are read (and their W0315 reported) when its first file is.
    let mut lint_problems = Vec::new();
    lints.levels_for(&root, files, &mut lint_problems);
    let unit = Unit {
        file,
        path,
        workflow: lowered.workflow,
        origins: lowered.origins,
        explicit,
        extension: lowered.extension,
        root,
        input,
        len,
        pending: lowered
            .diagnostics
            .into_iter()
            .map(|d| d.in_file(file))
            .collect(),
    };
    (Some(unit), lint_problems)
}

/// The project's lowered workflows by id, for the merge of extending workflows.
struct ProjectBases<'a>(&'a [Unit]);

impl hensu_sema::extend::Bases for ProjectBases<'_> {
    fn base(&self, id: &str) -> Option<hensu_sema::extend::Part<'_>> {
        self.0.iter().find_map(|u| {
            let workflow = u.workflow.as_ref().filter(|w| w.id == id)?;
            Some(hensu_sema::extend::Part {
                file: u.file,
                len: u.len,
                workflow,
                origins: &u.origins,
                extension: u.extension.as_ref(),
            })
        })
    }

    fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .0
            .iter()
            .filter_map(|u| u.workflow.as_ref().map(|w| w.id.clone()))
            .collect();
        ids.sort();
        ids.dedup();
        ids
    }
}

/// Merges every extending workflow with its base chain (docs/language.md, *Workflow
/// extension*). A workflow whose base cannot be merged has no IR afterwards: its error says why.
fn resolve_extensions(units: &mut [Unit]) {
    let merged: Vec<_> = units
        .iter()
        .map(|u| {
            u.extension.as_ref().filter(|e| e.base.is_some())?;
            let workflow = u.workflow.as_ref()?;
            let part = hensu_sema::extend::Part {
                file: u.file,
                len: u.len,
                workflow,
                origins: &u.origins,
                extension: u.extension.as_ref(),
            };
            Some(hensu_sema::extend::resolve(part, &ProjectBases(units)))
        })
        .collect();
    for (unit, merged) in units.iter_mut().zip(merged) {
        let Some((merged, diags)) = merged else {
            continue;
        };
        unit.pending.extend(diags);
        match merged {
            Some(m) => {
                unit.workflow = Some(m.workflow);
                unit.origins = m.origins;
            }
            None => unit.workflow = None,
        }
    }
}

/// The checks of each unit (on the merged workflow of an extending one), then the
/// project-level checks over all of them, and the diagnostics in order. A diagnostic found
/// both in a base and in a workflow that inherits it is reported once.
fn finish(
    mut files: Files,
    mut units: Vec<Unit>,
    mut diagnostics: Vec<Diagnostic>,
    lints: &mut ProjectLints,
    whole_project: bool,
) -> Project {
    resolve_extensions(&mut units);
    for unit in &mut units {
        let mut diags = std::mem::take(&mut unit.pending);
        // E0211 of the project's commands.yaml (once per project) go straight to `out`.
        let mut out = Vec::new();
        let handlers = lints.declared_handlers(&unit.root, &mut files, &mut out);
        let commands = lints.command_ids_for(&unit.root, &mut files, &mut out);
        if let Some(wf) = &unit.workflow {
            diags.extend(hensu_sema::check::check_workflow(
                wf,
                &unit.origins,
                unit.input,
            ));
            let ids = commands.and_then(|(audit, _)| audit.ids.as_deref());
            diags.extend(check_action_ids(
                wf,
                &unit.origins,
                ids,
                handlers.as_deref(),
            ));
            if let Some((audit, file)) = commands {
                diags.extend(crate::commands_yaml::check_placeholders(wf, audit, *file));
            }
        }
        // `@Suppress` of this file; check_workflow already applied them to its own findings.
        let diags = hensu_sema::suppress::apply(&unit.origins.suppressions, unit.file, diags);
        // Every diagnostic already names its file: those of an extending workflow may point into
        // its base, whatever that file's id (so no `in_file` here, which would move a label of
        // file 0).
        let levels = lints.levels_for(&unit.root, &mut files, &mut out);
        out.extend(hensu_diagnostics::lints::apply(levels, diags));
        diagnostics.extend(out);
    }
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
    drop(project_units);
    // Only with every workflow loaded does "no agent uses this model" hold.
    if whole_project {
        let loaded: Vec<(&Path, &Workflow)> = units
            .iter()
            .filter_map(|u| Some((u.root.as_path(), u.workflow.as_ref()?)))
            .collect();
        diagnostics.extend(lints.pricing_problems(&loaded, &mut files));
        diagnostics.extend(lints.approval_problems(&loaded, &mut files));
        diagnostics.extend(lints.schedule_problems(&loaded, &mut files, hensu_store::now_ms()));
    }
    hensu_diagnostics::sort_diagnostics(&mut diagnostics);
    dedup_inherited(&mut diagnostics);
    Project {
        files,
        units,
        diagnostics,
    }
}

/// Drops the copies of a diagnostic that the check of a derived workflow found again in an
/// inherited declaration (same code, place and message; the copy has an extra note).
fn dedup_inherited(diagnostics: &mut Vec<Diagnostic>) {
    let key = |d: &Diagnostic| (d.code, d.primary.file, d.primary.span, d.message.clone());
    let mut seen = std::collections::HashSet::new();
    let mut keep = vec![true; diagnostics.len()];
    // The base's own diagnostic (fewer notes) wins over the inherited copy.
    let mut order: Vec<usize> = (0..diagnostics.len()).collect();
    order.sort_by_key(|&i| diagnostics[i].notes.len());
    for i in order {
        if !seen.insert(key(&diagnostics[i])) {
            keep[i] = false;
        }
    }
    let mut keep = keep.into_iter();
    diagnostics.retain(|_| keep.next().unwrap_or(true));
}

/// `hensuc run NAME -d DIR`: a name that is not a file resolves to
/// `DIR/workflows/NAME.{hwf,kt,json}` (the first that exists); without `-d`, DIR is the
/// project found by [`discover_project`].
pub fn resolve_workflow_name(name: &Path, dir: Option<&Path>) -> PathBuf {
    if name.is_file() || name.extension().is_some() || name.components().count() != 1 {
        return name.to_path_buf();
    }
    // Without `-d`, the project found by walking up from the current directory.
    let base = dir
        .map(Path::to_path_buf)
        .or_else(discover_project)
        .unwrap_or_else(|| PathBuf::from("."))
        .join("workflows");
    ["hwf", "kt", "json"]
        .iter()
        .map(|ext| base.join(name).with_extension(ext))
        .find(|p| p.is_file())
        .unwrap_or_else(|| name.to_path_buf())
}

/// E0210: `execute`/`send` ids against the project's `commands.yaml` (`command_ids`) and the
/// handlers: the host's, `mcp` and the project's `[handlers.NAME]` (`declared`; `None` for a
/// served project, whose runs forward any other id to the tenant's MCP tools, so `send` ids
/// are not checked — docs/mcp.md, *Declared action handlers*). Without a `commands.yaml`, or
/// with one that is not a commands file (reported when a run loads it), command ids are not
/// checked here.
fn check_action_ids(
    wf: &Workflow,
    origins: &Origins,
    command_ids: Option<&[String]>,
    declared: Option<&[String]>,
) -> Vec<Diagnostic> {
    let handlers = hensu_host::action_handlers(None);
    let command_ids: Option<Vec<&str>> =
        command_ids.map(|ids| ids.iter().map(String::as_str).collect());
    let handler_ids: Option<Vec<&str>> = declared.map(|declared| {
        let mut ids = handlers.ids();
        // `send("mcp", …)` is served by the MCP servers of hensu.toml (docs/mcp.md).
        ids.push("mcp");
        ids.extend(declared.iter().map(String::as_str));
        ids
    });
    hensu_sema::check::check_actions(
        wf,
        origins,
        hensu_sema::check::KnownActions {
            commands: command_ids.as_deref(),
            handlers: handler_ids.as_deref(),
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
