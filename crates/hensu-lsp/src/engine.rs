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
use crate::index::{Occ, SymKind};

pub(crate) struct Doc {
    pub uri: Uri,
    pub root: Option<String>,
    pub version: i32,
    pub analysis: Arc<Analysis>,
}

/// A workflow of a project: an open document or a file of the project folder.
#[derive(Clone)]
pub(crate) struct Member {
    pub uri: Uri,
    pub analysis: Arc<Analysis>,
}

pub struct Engine {
    host: Box<dyn Host>,
    pub(crate) docs: HashMap<Uri, Doc>,
    /// Stable file ids: key (path, or the URI for non-file documents) → id, and back to the URI.
    /// Interior mutability: the table only grows, also while answering a request.
    files: RefCell<FileTable>,
    /// Analyses of unopened project files, by path, with the text they were made from.
    disk: RefCell<HashMap<String, (String, Arc<Analysis>)>>,
}

#[derive(Default)]
struct FileTable {
    ids: HashMap<String, FileId>,
    uris: Vec<Uri>,
}

fn doc_key(uri: &Uri) -> String {
    uri_to_path(uri).unwrap_or_else(|| uri.as_str().to_string())
}

impl Engine {
    pub fn new(host: impl Host + 'static) -> Engine {
        Engine {
            host: Box::new(host),
            docs: HashMap::new(),
            files: RefCell::new(FileTable::default()),
            disk: RefCell::new(HashMap::new()),
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

    fn analyze(&self, file: FileId, root: Option<&str>, text: String) -> Analysis {
        match root {
            Some(root) => Analysis::new(
                file,
                text,
                &RootFiles {
                    host: self.host.as_ref(),
                    root,
                },
            ),
            None => Analysis::new(file, text, &hensu_sema::files::NoFiles),
        }
    }

    /// Opens (or replaces) a document.
    pub fn open(&mut self, uri: Uri, version: i32, text: String) {
        let file = self.file_id(&uri);
        let root = uri_to_path(&uri).map(|p| project_root(&p));
        let analysis = Arc::new(self.analyze(file, root.as_deref(), text));
        self.docs.insert(
            uri.clone(),
            Doc {
                uri,
                root,
                version,
                analysis,
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
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        let mut text = doc.analysis.text.clone();
        let mut lines = doc.analysis.lines.clone();
        let mut first = true;
        for change in changes {
            match change.range {
                None => text = change.text,
                Some(range) => {
                    if !first {
                        lines = crate::line_index::LineIndex::new(&text);
                    }
                    let span = lines.span(&text, range);
                    let (a, b) = (span.start as usize, span.end as usize);
                    if a <= b
                        && b <= text.len()
                        && text.is_char_boundary(a)
                        && text.is_char_boundary(b)
                    {
                        text.replace_range(a..b, &change.text);
                    }
                }
            }
            first = false;
        }
        let file = doc.analysis.file;
        let root = doc.root.clone();
        let analysis = Arc::new(self.analyze(file, root.as_deref(), text));
        if let Some(doc) = self.docs.get_mut(uri) {
            let old = std::mem::replace(&mut doc.analysis, analysis);
            doc.version = version;
            // Freeing the previous analysis of a large file takes milliseconds: do it off the
            // request path.
            if old.text.len() > 64 * 1024 {
                let _ = std::thread::Builder::new()
                    .name("hensu-lsp-drop".to_string())
                    .spawn(move || drop(old));
            }
        }
    }

    pub fn close(&mut self, uri: &Uri) {
        self.docs.remove(uri);
    }

    /// The analysis of an open document.
    pub fn analysis(&self, uri: &Uri) -> Option<Arc<Analysis>> {
        self.docs.get(uri).map(|d| Arc::clone(&d.analysis))
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
        if let Some((t, a)) = self.disk.borrow().get(path)
            && *t == text
        {
            return Some(Arc::clone(a));
        }
        let file = self.file_id(uri);
        let a = Arc::new(self.analyze(file, Some(root), text.clone()));
        self.disk
            .borrow_mut()
            .insert(path.to_string(), (text, Arc::clone(&a)));
        Some(a)
    }

    /// Every occurrence of a symbol across the project (workflow ids) or in the document
    /// (nodes, agents, variables are local to their workflow).
    pub(crate) fn occurrences(
        &self,
        uri: &Uri,
        kind: SymKind,
        name: &str,
    ) -> Vec<(Uri, Arc<Analysis>, Occ)> {
        let mut out = Vec::new();
        let members = if kind == SymKind::Workflow {
            self.project(uri)
        } else {
            match self.docs.get(uri) {
                Some(d) => vec![Member {
                    uri: d.uri.clone(),
                    analysis: Arc::clone(&d.analysis),
                }],
                None => Vec::new(),
            }
        };
        for m in members {
            for o in m.analysis.index.occs_of(kind, name) {
                out.push((m.uri.clone(), Arc::clone(&m.analysis), o.clone()));
            }
        }
        out
    }
}
