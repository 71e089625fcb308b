//! The engine: open documents in memory, their analyses, and the project each belongs to (open
//! documents plus the workflow files of the same project folder, read through [`Host`]). One
//! method per LSP request lives in `crate::methods`, each in its own file; they take and return
//! `lsp_types` values, so tests call them directly without JSON-RPC.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use hensu_diagnostics::FileId;
use lsp_types::{TextDocumentContentChangeEvent, Uri};

use crate::analysis::Analysis;
use crate::host::{Host, RootFiles, path_to_uri, project_root, uri_to_path};
use crate::index::{Occ, Role, SymKind};
use crate::line_index::LineIndex;
use crate::shift::{ByteEdit, Shift};

pub(crate) struct Doc {
    pub uri: Uri,
    pub root: Option<String>,
    pub version: i32,
    /// The current text and its line index; ahead of `analysis` while edits are pending. Shared
    /// with the analyses of the same text; an edit copies it only while one of them holds it.
    text: Arc<String>,
    lines: LineIndex,
    /// The last full analysis (of `analysis.text`, which `shift` turns into `text`).
    pub analysis: Arc<Analysis>,
    shift: Shift,
    /// Bumped by every edit and by every change of a file the analysis read; an analysis of an
    /// older generation is installed but leaves the document dirty.
    generation: u64,
    /// Which opening of the URI this is: a job made before the document was reopened is of
    /// another text and is dropped.
    opening: u64,
    /// `analysis` is out of date (edited text, or a prompt/rubric/project file changed).
    dirty: bool,
    /// The generation of `analysis`, and the generation a file it may read last changed at: an
    /// analysis older than that change is not re-analysed node by node.
    analysed: u64,
    files_changed: u64,
    /// `analysis` moved onto `text`, made on the first request after an edit.
    /// With the number of edits of `shift` it includes: an older one is moved on in place
    /// through the later edits when nothing else holds it.
    provisional: RefCell<Option<(Arc<Analysis>, usize)>>,
    /// The tokens of `text` once some request lexed it, kept up to date through edits
    /// (`crate::relex`) and handed to the analyses of the same text.
    lexed: RefCell<Option<Arc<hensu_syntax::Lexed>>>,
}

/// A workflow of a project: an open document or a file of the project folder.
#[derive(Clone)]
pub(crate) struct Member {
    pub uri: Uri,
    pub analysis: Arc<Analysis>,
}

pub struct Engine {
    host: Arc<dyn Host>,
    pub(crate) docs: HashMap<Uri, Doc>,
    /// Stable file ids: key (path, or the URI for non-file documents) → id, and back to the URI.
    /// Interior mutability: the table only grows, also while answering a request.
    files: RefCell<FileTable>,
    /// Analyses of unopened project files, by path, with the text they were made from.
    disk: RefCell<HashMap<String, Arc<Analysis>>>,
    /// Open `.md` prompt files (`<root>/prompts/…`): not analysed, but their `{placeholders}`
    /// answer definition, references and rename (`crate::methods::prompt_file`).
    pub(crate) prompts: HashMap<Uri, PromptDoc>,
    /// Counts `open` calls (see `Doc::opening`).
    openings: u64,
    /// Replaced analyses of large documents, to be freed on the thread that builds the next
    /// analysis (see [`Retired`]).
    retired: RefCell<Vec<Arc<Analysis>>>,
}

/// Replaced analyses, freed when dropped. The server hands them to its analysis thread, which
/// keeps them for its next job: the job frees them before it builds the next analysis, or
/// splices into the one its base was made from (`crate::reuse`; docs/performance.md, *Language
/// server, round 3*, *Fourth step*). Memory freed by the thread that allocates next is reused
/// by it at once, while blocks freed from another thread wait in the owning thread's
/// delayed-free list (with mimalloc, `hensuc lsp`'s allocator) and the next analysis takes fresh
/// pages, which the kernel must zero (*Third step*).
#[derive(Default)]
pub struct Retired(pub(crate) Vec<Arc<Analysis>>);

impl Retired {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Adds the analyses of `other`.
    pub fn append(&mut self, mut other: Retired) {
        self.0.append(&mut other.0);
    }
}

/// An open prompt file.
pub(crate) struct PromptDoc {
    pub text: String,
    pub lines: LineIndex,
    /// The project root (the parent of its `prompts/` folder).
    pub root: String,
    /// The path relative to `prompts/`.
    pub relative: String,
}

/// `<root>/prompts/<relative>` of a `.md` path.
fn prompt_path(uri: &Uri) -> Option<(String, String)> {
    let path = uri_to_path(uri)?;
    if !path.ends_with(".md") {
        return None;
    }
    let at = path.rfind("/prompts/")?;
    Some((
        if at == 0 {
            "/".to_string()
        } else {
            path[..at].to_string()
        },
        path[at + "/prompts/".len()..].to_string(),
    ))
}

/// The full analysis of one document version, to run off the main thread
/// ([`AnalysisJob::run`]) and hand back with [`Engine::install`].
pub struct AnalysisJob {
    pub uri: Uri,
    file: FileId,
    root: Option<String>,
    text: Arc<String>,
    host: Arc<dyn Host>,
    generation: u64,
    opening: u64,
    /// How many pending edits the job's text includes.
    edits: usize,
    /// The analysis the job's text was edited from, those edits as one, and the text's line
    /// index: when the edits fall inside one graph node, only that node is analysed again
    /// (`crate::incremental`).
    base: Option<(Arc<Analysis>, ByteEdit, LineIndex)>,
    /// Freed first, on the thread that runs the job.
    retired: Retired,
}

/// A finished [`AnalysisJob`].
pub struct AnalysisDone {
    pub uri: Uri,
    analysis: Analysis,
    generation: u64,
    opening: u64,
    edits: usize,
    incremental: bool,
}

impl AnalysisDone {
    /// Whether the analysis was made by re-analysing one graph node (`crate::incremental`).
    pub fn incremental(&self) -> bool {
        self.incremental
    }

    /// Whether the node was spliced into the parts of the analysis replaced before the base,
    /// brought up to the base, instead of copies of the base's (`crate::reuse`).
    pub fn reused(&self) -> bool {
        self.analysis.spliced.as_ref().is_some_and(|s| s.reused)
    }
}

impl AnalysisJob {
    /// Adds replaced analyses for the job to free first (one of them may be reused to splice
    /// into: `crate::reuse`).
    pub fn free_first(&mut self, retired: Retired) {
        self.retired.append(retired);
    }

    pub fn run(self) -> AnalysisDone {
        let host = self.host.as_ref();
        let retired = self.retired.0;
        let text = match self.base {
            Some((base, edit, lines)) => {
                let done = match self.root.as_deref() {
                    Some(root) => crate::incremental::reanalyse(
                        &base,
                        retired,
                        self.text,
                        lines,
                        edit,
                        &RootFiles { host, root },
                    ),
                    None => crate::incremental::reanalyse(
                        &base,
                        retired,
                        self.text,
                        lines,
                        edit,
                        &hensu_sema::files::NoFiles,
                    ),
                };
                match done {
                    Ok(analysis) => {
                        return AnalysisDone {
                            uri: self.uri,
                            analysis,
                            generation: self.generation,
                            opening: self.opening,
                            edits: self.edits,
                            incremental: true,
                        };
                    }
                    Err(text) => text,
                }
            }
            None => {
                drop(retired);
                self.text
            }
        };
        let analysis = analyze(host, self.file, self.root.as_deref(), text);
        AnalysisDone {
            uri: self.uri,
            analysis,
            generation: self.generation,
            opening: self.opening,
            edits: self.edits,
            incremental: false,
        }
    }
}

#[derive(Default)]
struct FileTable {
    ids: HashMap<String, FileId>,
    uris: Vec<Uri>,
}

fn doc_key(uri: &Uri) -> String {
    uri_to_path(uri).unwrap_or_else(|| uri.as_str().to_string())
}

fn analyze(host: &dyn Host, file: FileId, root: Option<&str>, text: Arc<String>) -> Analysis {
    match root {
        Some(root) => Analysis::new(file, text, &RootFiles { host, root }),
        None => Analysis::new(file, text, &hensu_sema::files::NoFiles),
    }
}

fn to_u32(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

impl Engine {
    pub fn new(host: impl Host + 'static) -> Engine {
        Engine {
            host: Arc::new(host),
            docs: HashMap::new(),
            files: RefCell::new(FileTable::default()),
            disk: RefCell::new(HashMap::new()),
            prompts: HashMap::new(),
            openings: 0,
            retired: RefCell::new(Vec::new()),
        }
    }

    fn file_id(&self, uri: &Uri) -> FileId {
        let key = doc_key(uri);
        let mut table = self.files.borrow_mut();
        if let Some(id) = table.ids.get(&key) {
            return *id;
        }
        let id = FileId(u32::try_from(table.uris.len()).unwrap_or(u32::MAX));
        table.ids.insert(key, id);
        table.uris.push(uri.clone());
        id
    }

    fn analyze(&self, file: FileId, root: Option<&str>, text: Arc<String>) -> Analysis {
        analyze(self.host.as_ref(), file, root, text)
    }

    /// Opens (or replaces) a document and analyses it.
    pub fn open(&mut self, uri: Uri, version: i32, text: String) {
        self.open_pending(uri.clone(), version, text);
        self.analyze_now(&uri);
    }

    /// Opens (or replaces) a document without analysing it: requests are answered at once (from
    /// an empty analysis moved onto the text) and the analysis is an [`AnalysisJob`].
    pub fn open_pending(&mut self, uri: Uri, version: i32, text: String) {
        if let Some((root, relative)) = prompt_path(&uri) {
            let lines = LineIndex::new(&text);
            self.prompts.insert(
                uri,
                PromptDoc {
                    text,
                    lines,
                    root,
                    relative,
                },
            );
            return;
        }
        let file = self.file_id(&uri);
        let root = uri_to_path(&uri).map(|p| project_root(&p));
        let empty = Arc::new(Analysis::new(
            file,
            Arc::default(),
            &hensu_sema::files::NoFiles,
        ));
        let mut shift = Shift::default();
        shift.push(ByteEdit {
            start: 0,
            old_end: 0,
            new_len: to_u32(text.len()),
        });
        let generation = self.docs.get(&uri).map_or(0, |d| d.generation + 1);
        self.openings += 1;
        let opening = self.openings;
        self.docs.insert(
            uri.clone(),
            Doc {
                uri,
                root,
                version,
                lines: LineIndex::new(&text),
                text: Arc::new(text),
                analysis: empty,
                shift,
                generation,
                opening,
                dirty: true,
                analysed: generation,
                files_changed: generation,
                provisional: RefCell::new(None),
                lexed: RefCell::new(None),
            },
        );
    }

    /// Applies content changes (full or incremental, UTF-16 ranges) and re-analyses.
    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) {
        self.edit(uri, version, changes);
        self.analyze_now(uri);
    }

    /// Applies content changes without analysing: the document is dirty until the next
    /// analysis is installed; requests meanwhile see the new text.
    pub fn edit(&mut self, uri: &Uri, version: i32, changes: Vec<TextDocumentContentChangeEvent>) {
        if let Some(p) = self.prompts.get_mut(uri) {
            for change in changes {
                match change.range {
                    None => p.text = change.text,
                    Some(range) => {
                        let span = p.lines.span(&p.text, range);
                        let (a, b) = (span.start as usize, span.end as usize);
                        if a <= b
                            && b <= p.text.len()
                            && p.text.is_char_boundary(a)
                            && p.text.is_char_boundary(b)
                        {
                            p.text.replace_range(a..b, &change.text);
                        }
                    }
                }
                p.lines = LineIndex::new(&p.text);
            }
            return;
        }
        let Some(doc) = self.docs.get_mut(uri) else {
            return;
        };
        // The tokens of the text before these changes, if any request needed them.
        let mut lexed = doc.lexed.take().or_else(|| {
            let current = doc
                .provisional
                .borrow()
                .as_ref()
                .filter(|(_, n)| *n == doc.shift.len())
                .map(|(p, _)| Arc::clone(p));
            match current {
                Some(p) => p.lexed_if_known(),
                None if doc.shift.is_empty() => doc.analysis.lexed_if_known(),
                None => None,
            }
        });
        // The provisional analysis lets go of the text (so the edit does not copy it) and is
        // kept to be moved on; one held elsewhere is dropped.
        let edits_before = doc.shift.len();
        {
            let mut cached = doc.provisional.borrow_mut();
            match cached.as_mut().map(|(p, _)| Arc::get_mut(p)) {
                Some(Some(p)) => p.release_text(),
                Some(None) => *cached = None,
                None => {}
            }
        }
        for change in changes {
            match change.range {
                None => {
                    doc.shift.push(ByteEdit {
                        start: 0,
                        old_end: to_u32(doc.text.len()),
                        new_len: to_u32(change.text.len()),
                    });
                    doc.text = Arc::new(change.text);
                    doc.lines = LineIndex::new(&doc.text);
                    lexed = None;
                }
                Some(range) => {
                    let span = doc.lines.span(&doc.text, range);
                    let (a, b) = (span.start as usize, span.end as usize);
                    if a <= b
                        && b <= doc.text.len()
                        && doc.text.is_char_boundary(a)
                        && doc.text.is_char_boundary(b)
                    {
                        let edit = ByteEdit {
                            start: span.start,
                            old_end: span.end,
                            new_len: to_u32(change.text.len()),
                        };
                        doc.shift.push(edit);
                        // Copied only when an analysis holds it.
                        Arc::make_mut(&mut doc.text).replace_range(a..b, &change.text);
                        lexed = lexed.map(|l| Arc::new(crate::relex::relex(&l, &doc.text, edit)));
                        let new_end = to_u32(a + change.text.len());
                        doc.lines.edit(&doc.text, span.start, span.end, new_end);
                    }
                }
            }
        }
        if doc.shift.len() == edits_before {
            // No change applied: the provisional analysis let go of its text for nothing.
            doc.provisional.replace(None);
        }
        doc.version = version;
        doc.generation += 1;
        doc.dirty = true;
        doc.lexed.replace(lexed);
    }

    /// The analysis job of a dirty document (`None` when it is up to date or not open).
    pub fn job(&self, uri: &Uri) -> Option<AnalysisJob> {
        let doc = self.docs.get(uri).filter(|d| d.dirty)?;
        let base = doc
            .shift
            .envelope()
            .filter(|_| doc.files_changed <= doc.analysed && doc.analysis.workflow.is_some())
            .map(|edit| (Arc::clone(&doc.analysis), edit, doc.lines.clone()));
        Some(AnalysisJob {
            uri: uri.clone(),
            file: doc.analysis.file,
            root: doc.root.clone(),
            text: Arc::clone(&doc.text),
            host: Arc::clone(&self.host),
            generation: doc.generation,
            opening: doc.opening,
            edits: doc.shift.len(),
            base,
            retired: self.take_retired(),
        })
    }

    /// The replaced analyses not yet freed: the caller frees them (see [`Retired`]).
    pub fn take_retired(&self) -> Retired {
        Retired(std::mem::take(&mut *self.retired.borrow_mut()))
    }

    /// Installs a finished analysis. Returns whether the document is now up to date (its
    /// diagnostics can be published); an analysis of an older generation is kept as the base
    /// for requests, with the edits made since still pending.
    pub fn install(&mut self, done: AnalysisDone) -> bool {
        let Some(doc) = self.docs.get_mut(&done.uri) else {
            return false;
        };
        if done.opening != doc.opening
            || done.generation > doc.generation
            || done.edits > doc.shift.len()
        {
            return false;
        }
        let up_to_date = done.edits == doc.shift.len();
        if up_to_date && let Some(l) = doc.lexed.borrow().as_ref() {
            done.analysis.seed_lexed(Arc::clone(l));
        }
        let old = std::mem::replace(&mut doc.analysis, Arc::new(done.analysis));
        doc.shift.drain_front(done.edits);
        doc.analysed = done.generation;
        doc.dirty = done.generation != doc.generation;
        doc.provisional.replace(None);
        // Freeing the previous analysis of a large file takes milliseconds: not on the request
        // path, but where the next analysis is built (`Retired`); and the next node-by-node
        // analysis may reuse the one the new analysis was spliced from (`crate::reuse`).
        let spliced_from_old = doc
            .analysis
            .spliced
            .as_ref()
            .is_some_and(|s| s.from == old.serial);
        if old.text.len() > 64 * 1024 || spliced_from_old {
            self.retired.get_mut().push(old);
        }
        !doc.dirty
    }

    /// Analyses a dirty document on this thread.
    pub fn analyze_now(&mut self, uri: &Uri) {
        if let Some(job) = self.job(uri) {
            let done = job.run();
            self.install(done);
            drop(self.take_retired());
        }
    }

    /// Whether the document waits for an analysis.
    pub fn is_dirty(&self, uri: &Uri) -> bool {
        self.docs.get(uri).is_some_and(|d| d.dirty)
    }

    /// Files changed on disk (absolute paths: prompts, rubrics, `commands.yaml`, `hensu.toml`,
    /// workflow files): every open document of a project containing one of them is marked dirty
    /// (they read prompts and rubrics, and see the project's workflows). Returns those
    /// documents, sorted.
    pub fn files_changed(&mut self, paths: &[String]) -> Vec<Uri> {
        let inside = |root: &str, path: &str| {
            let root = root.trim_end_matches('/');
            path.strip_prefix(root)
                .is_some_and(|rest| rest.starts_with('/'))
        };
        let mut out = Vec::new();
        let mut roots: Vec<String> = Vec::new();
        for doc in self.docs.values_mut() {
            let Some(root) = &doc.root else { continue };
            if paths
                .iter()
                .any(|p| inside(root, p) && *p != doc_key(&doc.uri))
            {
                doc.generation += 1;
                doc.files_changed = doc.generation;
                doc.dirty = true;
                doc.provisional.replace(None);
                out.push(doc.uri.clone());
                roots.push(root.clone());
            }
        }
        // The unopened workflows of those projects read prompts too: forget their analyses.
        self.disk
            .borrow_mut()
            .retain(|cached, _| !roots.iter().any(|r| inside(r, cached)));
        out.sort();
        out
    }

    pub fn close(&mut self, uri: &Uri) {
        self.docs.remove(uri);
        self.prompts.remove(uri);
    }

    /// The workflows of a project root: its open documents and the workflow files of its
    /// `workflows/` folder.
    pub(crate) fn root_members(&self, root: &str) -> Vec<Member> {
        let mut members: Vec<Member> = Vec::new();
        let mut open: Vec<&Doc> = self
            .docs
            .values()
            .filter(|d| d.root.as_deref() == Some(root))
            .collect();
        open.sort_by(|a, b| a.uri.cmp(&b.uri));
        let mut keys = Vec::new();
        for d in open {
            keys.push(doc_key(&d.uri));
            if let Some(analysis) = self.analysis(&d.uri) {
                members.push(Member {
                    uri: d.uri.clone(),
                    analysis,
                });
            }
        }
        for (path, text) in self.host.workflow_files(root) {
            if keys.contains(&path) {
                continue;
            }
            let Some(uri) = path_to_uri(&path) else {
                continue;
            };
            if let Some(a) = self.disk_analysis(&path, &uri, root, text) {
                members.push(Member { uri, analysis: a });
            }
        }
        members
    }

    /// The analysis of an open document's current text: the last full analysis, moved onto
    /// the edits typed since when one is pending (see the `shift` module).
    pub fn analysis(&self, uri: &Uri) -> Option<Arc<Analysis>> {
        let doc = self.docs.get(uri)?;
        if doc.shift.is_empty() {
            return Some(Arc::clone(&doc.analysis));
        }
        let mut cached = doc.provisional.borrow_mut();
        let edits = doc.shift.len();
        match cached.as_mut() {
            Some((p, n)) if *n == edits => return Some(Arc::clone(p)),
            // Moved on in place through the edits typed since it was made.
            Some((p, n)) if *n < edits => {
                let clean_until = doc.analysis.clean_until_after(&doc.text, &doc.shift);
                if let Some(pm) = Arc::get_mut(p) {
                    pm.move_on(
                        Arc::clone(&doc.text),
                        doc.lines.clone(),
                        &doc.shift.since(*n),
                        clean_until,
                    );
                    if let Some(l) = doc.lexed.borrow().as_ref() {
                        pm.seed_lexed(Arc::clone(l));
                    }
                    *n = edits;
                    return Some(Arc::clone(p));
                }
            }
            _ => {}
        }
        let a = doc
            .analysis
            .provisional(Arc::clone(&doc.text), doc.lines.clone(), &doc.shift);
        if let Some(l) = doc.lexed.borrow().as_ref() {
            a.seed_lexed(Arc::clone(l));
        }
        let a = Arc::new(a);
        *cached = Some((Arc::clone(&a), edits));
        Some(a)
    }

    pub fn version(&self, uri: &Uri) -> Option<i32> {
        self.docs.get(uri).map(|d| d.version)
    }

    pub(crate) fn host(&self) -> &dyn Host {
        self.host.as_ref()
    }

    /// The project root of an open `file://` document.
    pub(crate) fn root_of(&self, uri: &Uri) -> Option<String> {
        self.docs.get(uri).and_then(|d| d.root.clone())
    }

    /// Open documents' URIs.
    pub fn open_uris(&self) -> Vec<Uri> {
        let mut v: Vec<Uri> = self.docs.keys().cloned().collect();
        v.sort();
        v
    }

    /// The other open documents of `uri`'s project.
    pub fn project_open_uris(&self, uri: &Uri) -> Vec<Uri> {
        let Some(root) = self.docs.get(uri).and_then(|d| d.root.clone()) else {
            return Vec::new();
        };
        let mut v: Vec<Uri> = self
            .docs
            .values()
            .filter(|d| d.uri != *uri && d.root.as_deref() == Some(root.as_str()))
            .map(|d| d.uri.clone())
            .collect();
        v.sort();
        v
    }

    /// The workflows of `uri`'s project: the document itself, other open documents of the same
    /// project root, and the unopened workflow files of `<root>/workflows/`.
    pub(crate) fn project(&self, uri: &Uri) -> Vec<Member> {
        let Some(doc) = self.docs.get(uri) else {
            return Vec::new();
        };
        let mut members = vec![Member {
            uri: doc.uri.clone(),
            analysis: Arc::clone(&doc.analysis),
        }];
        let Some(root) = &doc.root else {
            return members;
        };
        let mut open_keys = vec![doc_key(uri)];
        let mut others: Vec<&Doc> = self
            .docs
            .values()
            .filter(|d| d.uri != *uri && d.root.as_ref() == Some(root))
            .collect();
        others.sort_by(|a, b| a.uri.cmp(&b.uri));
        for d in others {
            open_keys.push(doc_key(&d.uri));
            members.push(Member {
                uri: d.uri.clone(),
                analysis: Arc::clone(&d.analysis),
            });
        }
        for (path, text) in self.host.workflow_files(root) {
            if open_keys.contains(&path) {
                continue;
            }
            let Some(uri) = path_to_uri(&path) else {
                continue;
            };
            if let Some(a) = self.disk_analysis(&path, &uri, root, text) {
                members.push(Member { uri, analysis: a });
            }
        }
        members
    }

    fn disk_analysis(
        &self,
        path: &str,
        uri: &Uri,
        root: &str,
        text: String,
    ) -> Option<Arc<Analysis>> {
        if let Some(a) = self.disk.borrow().get(path)
            && *a.text == text
        {
            return Some(Arc::clone(a));
        }
        let file = self.file_id(uri);
        let a = Arc::new(self.analyze(file, Some(root), Arc::new(text)));
        self.disk
            .borrow_mut()
            .insert(path.to_string(), Arc::clone(&a));
        Some(a)
    }

    /// Every occurrence of a symbol across the project (workflow ids) or in the document
    /// (nodes, agents, variables are local to their workflow), with a variable's `{name}`
    /// placeholders in the document's `.md` prompt files.
    pub(crate) fn occurrences(&self, uri: &Uri, kind: SymKind, name: &str) -> Vec<Found> {
        let mut out = Vec::new();
        let members = if kind == SymKind::Workflow {
            self.project(uri)
        } else {
            match self.analysis(uri) {
                Some(analysis) => vec![Member {
                    uri: uri.clone(),
                    analysis,
                }],
                None => Vec::new(),
            }
        };
        for m in &members {
            for o in m.analysis.index.occs_of(kind, name) {
                out.push(Found {
                    uri: m.uri.clone(),
                    range: m.analysis.range(o.span),
                    occ: o.clone(),
                });
            }
        }
        if kind == SymKind::Variable
            && let (Some(root), Some(m)) = (self.root_of(uri), members.first())
        {
            placeholders_in_prompts(&root, &m.analysis, name, &mut out);
        }
        out
    }
}

/// The `{name}` placeholders in the `.md` prompt files `a` names (files under `<root>/prompts/`).
pub(crate) fn placeholders_in_prompts(root: &str, a: &Analysis, name: &str, out: &mut Vec<Found>) {
    for p in a.prompt_files.iter() {
        let path = format!(
            "{}/prompts/{}",
            root.trim_end_matches('/'),
            p.relative.trim_start_matches("./")
        );
        let Some(file) = path_to_uri(&path) else {
            continue;
        };
        for (n, span) in p.placeholders.iter().filter(|(n, _)| n == name) {
            out.push(Found {
                uri: file.clone(),
                range: p.lines.range(&p.text, *span),
                occ: Occ {
                    kind: SymKind::Variable,
                    name: std::sync::Arc::from(n.as_str()),
                    span: *span,
                    quoted: false,
                    role: Role::Placeholder,
                    node: None,
                    stmt: *span,
                },
            });
        }
    }
}

/// One occurrence found by [`Engine::occurrences`], with its file and LSP range.
pub(crate) struct Found {
    pub uri: Uri,
    pub range: lsp_types::Range,
    pub occ: Occ,
}
