//! Everything computed once per version of a document: the line index, the syntax-tree symbol
//! index, the lowered IR with its origins, and the file's own diagnostics (lexical, syntax,
//! lowering and single-workflow checks). Tokens for completion and semantic tokens are lexed
//! lazily on first use.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use hensu_diagnostics::{Diagnostic, FileId};
use hensu_ir::Workflow;
use hensu_sema::check::{InputKind, check_workflow};
use hensu_sema::files::FileProvider;
use hensu_sema::origins::Origins;
use hensu_syntax::Lexed;

use crate::index::Index;
use crate::line_index::LineIndex;
use crate::shift::{ByteEdit, Shift};

#[derive(Debug)]
pub struct Analysis {
    pub file: FileId,
    /// Shared with the document while it is not edited, and with the analyses of the same text
    /// (the provisional one, the job's): a 13 MB document is held once, not three times.
    pub text: Arc<String>,
    pub(crate) lines: LineIndex,
    pub(crate) index: Index,
    /// Shared, so a provisional analysis (see the `shift` module) reuses it without a copy.
    pub workflow: Option<Arc<Workflow>>,
    pub(crate) origins: Arc<Origins>,
    /// Lexical, syntax, lowering and single-workflow check diagnostics, in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// The lexical, syntax and lowering diagnostics of `diagnostics` (those of the checks are
    /// made again from the spliced IR when one node is re-analysed: `crate::incremental`).
    pub(crate) front: Vec<Diagnostic>,
    /// No lexical or syntax diagnostic: the whole file took the parser's fast path.
    pub(crate) syntax_clean: bool,
    /// The text before this offset is free of syntax errors and laid out as the index says, so
    /// the cursor context may start at a graph node's block (`crate::context`): `u32::MAX` for
    /// an analysis of a clean text, the first edited byte for one moved through edits.
    pub(crate) clean_until: u32,
    /// The `.md` prompt files the document names, with their `{placeholders}` (read when the
    /// document is analysed, so references and rename reach into them).
    pub(crate) prompt_files: Arc<Vec<PromptFile>>,
    /// `extends("…")` and `routes` of an extending workflow: its checks run on the workflow
    /// merged with its base, by the engine (which knows the project; see `crate::extends`).
    pub(crate) extension: Option<Arc<hensu_sema::extend::Extension>>,
    /// The tokens of `text`: lexed on first use, or handed over by the engine, which keeps them
    /// up to date through edits (`crate::relex`).
    pub(crate) lexed: OnceLock<Arc<Lexed>>,
    /// This analysis's number, and how it was made from another one by re-analysing one node
    /// (`crate::reuse`: the other one's parts are brought up to this one's when it is retired).
    pub(crate) serial: u64,
    pub(crate) spliced: Option<Spliced>,
}

/// A number for each analysis made, so a splice can name the analysis it was made from.
pub(crate) fn next_serial() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// How an analysis was made from another (`from`, by serial) by re-analysing one node: what
/// replaying it on that analysis's parts needs.
#[derive(Clone, Debug)]
pub(crate) struct Spliced {
    pub from: u64,
    /// The text of `from` to this analysis's text.
    pub edit: ByteEdit,
    /// The node's place in the IR's nodes and the origins' nodes.
    pub at: usize,
    /// The node's place in the symbol index's nodes.
    pub node: usize,
    /// The node's entries in the index's occurrences, keywords, comments and resources (in
    /// that order): where they were in `from`'s lists and where they are in this one's.
    pub runs: [Run; 4],
    /// The parts spliced into were a retired analysis's brought up (not copies).
    pub reused: bool,
}

/// A node's entries in one list of the symbol index, before and after a splice.
#[derive(Clone, Debug, Default)]
pub(crate) struct Run {
    pub old: Range<usize>,
    pub new: Range<usize>,
}

/// A prompt file of a document (`prompt = "write.md"` → `prompts/write.md`).
#[derive(Debug)]
pub(crate) struct PromptFile {
    /// The path relative to `prompts/`, as written.
    pub relative: String,
    pub text: String,
    pub lines: LineIndex,
    /// `{name}` placeholders: the name and the span of the name (without braces).
    pub placeholders: Vec<(String, hensu_diagnostics::Span)>,
}

impl PromptFile {
    fn read(files: &dyn FileProvider, relative: &str) -> Option<PromptFile> {
        let text = files
            .read(hensu_sema::files::ResourceDir::Prompts, relative)
            .ok()?;
        let placeholders = crate::index::placeholders(&text)
            .into_iter()
            .map(|(name, r)| (name, hensu_diagnostics::Span::from_range(r)))
            .collect();
        Some(PromptFile {
            relative: relative.to_string(),
            lines: LineIndex::new(&text),
            text,
            placeholders,
        })
    }
}

/// The diagnostics of a file from its front-end ones and those of the checks, in source order.
pub(crate) fn own_diagnostics(
    file: FileId,
    front: &[Diagnostic],
    checked: Vec<Diagnostic>,
) -> Vec<Diagnostic> {
    let mut diagnostics: Vec<Diagnostic> = front
        .iter()
        .cloned()
        .chain(checked)
        .map(|d| d.in_file(file))
        .collect();
    hensu_diagnostics::sort_diagnostics(&mut diagnostics);
    diagnostics
}

/// A diagnostic of `file` with its spans in that file moved by `f`.
pub(crate) fn moved_diagnostic(
    d: &Diagnostic,
    file: FileId,
    f: &dyn Fn(hensu_diagnostics::Span) -> hensu_diagnostics::Span,
) -> Diagnostic {
    let mut d = d.clone();
    d.primary.span = f(d.primary.span);
    for l in d.secondary.iter_mut().filter(|l| l.file == file) {
        l.span = f(l.span);
    }
    for s in d.suggestions.iter_mut().filter(|s| s.file == file) {
        s.span = f(s.span);
    }
    d
}

impl Analysis {
    pub fn new(file: FileId, text: Arc<String>, files: &dyn FileProvider) -> Analysis {
        let parsed = hensu_syntax::parse(&text);
        // The symbol index and the line index are built on a second thread while the compiler
        // lowers and checks (they only read the syntax tree).
        let (index, lines, lowered, checked) = std::thread::scope(|scope| {
            let side = scope.spawn(|| (Index::build(&text, &parsed.file), LineIndex::new(&text)));
            let lowered = hensu_sema::lower(&parsed.file, file, files);
            let extends = lowered.extension.as_ref().is_some_and(|e| e.base.is_some());
            let checked = lowered
                .workflow
                .as_ref()
                .filter(|_| !extends)
                .map(|wf| check_workflow(wf, &lowered.origins, InputKind::Source))
                .unwrap_or_default();
            let (index, lines) = side
                .join()
                .unwrap_or_else(|_| (Index::default(), LineIndex::new(&text)));
            (index, lines, lowered, checked)
        });
        let syntax_clean = parsed.diagnostics.is_empty();
        let mut front: Vec<Diagnostic> = parsed
            .diagnostics
            .into_iter()
            .map(|d| d.in_file(file))
            .collect();
        front.extend(lowered.diagnostics.into_iter().map(|d| d.in_file(file)));
        // In source order, as `crate::incremental` keeps them when it replaces a node's.
        hensu_diagnostics::sort_diagnostics(&mut front);
        let diagnostics = own_diagnostics(file, &front, checked);
        drop(parsed.file);
        let mut prompt_files: Vec<PromptFile> = Vec::new();
        for (_, dir, relative) in &index.resources {
            if *dir == hensu_sema::files::ResourceDir::Prompts
                && relative.ends_with(".md")
                && !prompt_files.iter().any(|p| p.relative == *relative)
                && let Some(p) = PromptFile::read(files, relative)
            {
                prompt_files.push(p);
            }
        }
        Analysis {
            file,
            text,
            lines,
            index,
            workflow: lowered.workflow.map(Arc::new),
            origins: Arc::new(lowered.origins),
            diagnostics,
            front,
            syntax_clean,
            clean_until: if syntax_clean { u32::MAX } else { 0 },
            prompt_files: Arc::new(prompt_files),
            extension: lowered.extension.map(Arc::new),
            lexed: OnceLock::new(),
            serial: next_serial(),
            spliced: None,
        }
    }

    /// This analysis moved onto `text`, the analysed text after the edits of `shift`: the
    /// symbol index and the diagnostics' spans are shifted, the IR is shared. Cheap next to a
    /// full analysis (no parse, no lowering), for requests while the full one is pending.
    pub(crate) fn provisional(
        &self,
        text: Arc<String>,
        lines: LineIndex,
        shift: &Shift,
    ) -> Analysis {
        let f = |s: hensu_diagnostics::Span| shift.span(s);
        let moved = |d: &Diagnostic| moved_diagnostic(d, self.file, &f);
        let clean_until = self.clean_until_after(&text, shift);
        Analysis {
            file: self.file,
            text,
            lines,
            index: crate::index_moves::shifted_index(&self.index, &f),
            workflow: self.workflow.clone(),
            origins: Arc::clone(&self.origins),
            diagnostics: self.diagnostics.iter().map(moved).collect(),
            front: self.front.iter().map(moved).collect(),
            syntax_clean: self.syntax_clean,
            clean_until,
            prompt_files: Arc::clone(&self.prompt_files),
            extension: self.extension.clone(),
            lexed: OnceLock::new(),
            serial: next_serial(),
            spliced: None,
        }
    }

    /// How much of `text`, this analysis's text after the edits of `shift`, is clean (see
    /// `clean_until`).
    pub(crate) fn clean_until_after(&self, text: &str, shift: &Shift) -> u32 {
        if self.syntax_clean {
            crate::index_moves::clean_until(&self.index, text, shift)
        } else {
            0
        }
    }

    /// A provisional analysis lets go of its text (the document edits it in place meanwhile);
    /// [`Analysis::move_on`] gives it the new one.
    pub(crate) fn release_text(&mut self) {
        self.text = Arc::default();
        self.lexed = OnceLock::new();
    }

    /// A provisional analysis moved on in place through the later edits of `shift` onto `text`
    /// (the same result as [`Analysis::provisional`] from its base through all the edits, as
    /// spans move through edits one after the other), without copying the symbol index.
    pub(crate) fn move_on(
        &mut self,
        text: Arc<String>,
        lines: LineIndex,
        shift: &Shift,
        clean_until: u32,
    ) {
        let f = |s: hensu_diagnostics::Span| shift.span(s);
        crate::index_moves::shift_index(&mut self.index, &f);
        let file = self.file;
        for d in self.diagnostics.iter_mut().chain(self.front.iter_mut()) {
            *d = moved_diagnostic(d, file, &f);
        }
        self.text = text;
        self.lines = lines;
        self.clean_until = clean_until;
        self.lexed = OnceLock::new();
    }

    /// Everything the analysis computed, printed (the text, line index, symbol index, IR,
    /// origins and diagnostics; not the tokens, which are lexed on demand), so a test can check
    /// an analysis made node by node against a full one.
    #[doc(hidden)]
    pub fn fingerprint(&self) -> String {
        format!(
            "{}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{:?}\n{} {}\n{:?}",
            self.text,
            self.lines,
            self.index,
            self.workflow,
            self.origins,
            self.diagnostics,
            self.front,
            self.syntax_clean,
            self.clean_until,
            self.prompt_files
                .iter()
                .map(|p| &p.relative)
                .collect::<Vec<_>>(),
        )
    }

    /// The tokens and comments of the text (lexed on first use).
    pub fn lexed(&self) -> &Lexed {
        self.lexed
            .get_or_init(|| Arc::new(hensu_syntax::lex(&self.text)))
    }

    /// The tokens, if they were lexed (or handed over) already.
    pub(crate) fn lexed_if_known(&self) -> Option<Arc<Lexed>> {
        self.lexed.get().cloned()
    }

    /// Hands over the tokens of `self.text`, lexed elsewhere (no effect once they are known).
    pub(crate) fn seed_lexed(&self, lexed: Arc<Lexed>) {
        let _ = self.lexed.set(lexed);
    }

    pub fn offset(&self, pos: lsp_types::Position) -> u32 {
        self.lines.offset(&self.text, pos)
    }

    pub fn range(&self, span: hensu_diagnostics::Span) -> lsp_types::Range {
        self.lines.range(&self.text, span)
    }

    pub fn slice(&self, span: hensu_diagnostics::Span) -> &str {
        self.text.get(span.range()).unwrap_or("")
    }
}
