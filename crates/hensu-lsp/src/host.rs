//! What the engine needs from the outside world, behind a trait: prompt and rubric files, and the
//! workflow files of a project folder. The stdio server implements it over the filesystem
//! ([`crate::server::FsHost`]); tests use [`MemoryHost`]. Paths are plain `/`-separated strings
//! decoded from `file://` URIs ([`uri_to_path`]); the project root of a document is the parent of
//! its `workflows/` folder, as the CLI computes it ([`project_root`]).

use std::collections::BTreeMap;
use std::str::FromStr;
use std::sync::{Arc, PoisonError, RwLock};

use hensu_sema::files::{FileError, FileProvider, ResourceDir};
use lsp_types::Uri;

/// The I/O the engine delegates. `Send + Sync`: analyses run on a worker thread.
pub trait Host: Send + Sync {
    /// Reads `relative` from `<root>/prompts/` or `<root>/rubrics/` (jailed to that directory).
    fn read_resource(
        &self,
        root: &str,
        dir: ResourceDir,
        relative: &str,
    ) -> Result<String, FileError>;

    /// The workflow files (`.hwf`, `.kt`) in `<root>/workflows/`: `(path, text)`, sorted by path.
    fn workflow_files(&self, root: &str) -> Vec<(String, String)>;

    /// The text of `<root>/hensu.toml`; `Ok(None)` when the project has none.
    fn project_file(&self, root: &str) -> std::io::Result<Option<String>>;
}

/// The project's own files (`hensu.toml`) through a [`Host`], for `hensu_project::Workspace`.
pub(crate) struct HostProjectFiles<'a>(pub &'a dyn Host);

impl hensu_project::ProjectFiles for HostProjectFiles<'_> {
    fn read(&self, path: &std::path::Path) -> std::io::Result<Option<String>> {
        match path.parent().and_then(std::path::Path::to_str) {
            Some(root) if path.ends_with(hensu_project::PROJECT_FILE) => self.0.project_file(root),
            _ => Ok(None),
        }
    }
}

/// A [`FileProvider`] for the lowering of one document: resources of its project root.
pub(crate) struct RootFiles<'a> {
    pub host: &'a dyn Host,
    pub root: &'a str,
}

impl FileProvider for RootFiles<'_> {
    fn read(&self, dir: ResourceDir, relative: &str) -> Result<String, FileError> {
        hensu_sema::files::check_relative_path(relative)?;
        self.host.read_resource(self.root, dir, relative)
    }
}

/// An in-memory host: files by absolute path (`/p/prompts/a.md`, `/p/workflows/b.hwf`). Clones
/// share the files, so a test can change them while an engine holds the host.
#[derive(Clone, Debug, Default)]
pub struct MemoryHost {
    files: Arc<RwLock<BTreeMap<String, String>>>,
}

impl MemoryHost {
    pub fn new() -> Self {
        MemoryHost::default()
    }

    pub fn insert(&mut self, path: impl Into<String>, text: impl Into<String>) {
        self.files
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(path.into(), text.into());
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, BTreeMap<String, String>> {
        self.files.read().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn with(mut self, path: impl Into<String>, text: impl Into<String>) -> Self {
        self.insert(path, text);
        self
    }
}

impl Host for MemoryHost {
    fn read_resource(
        &self,
        root: &str,
        dir: ResourceDir,
        relative: &str,
    ) -> Result<String, FileError> {
        hensu_sema::files::check_relative_path(relative)?;
        let rel: Vec<&str> = relative
            .split('/')
            .filter(|c| !c.is_empty() && *c != ".")
            .collect();
        let path = format!(
            "{}/{}/{}",
            root.trim_end_matches('/'),
            dir.as_str(),
            rel.join("/")
        );
        self.read().get(&path).cloned().ok_or(FileError::NotFound)
    }

    fn project_file(&self, root: &str) -> std::io::Result<Option<String>> {
        let path = format!(
            "{}/{}",
            root.trim_end_matches('/'),
            hensu_project::PROJECT_FILE
        );
        Ok(self.read().get(&path).cloned())
    }

    fn workflow_files(&self, root: &str) -> Vec<(String, String)> {
        let prefix = format!("{}/workflows/", root.trim_end_matches('/'));
        self.read()
            .iter()
            .filter(|(p, _)| {
                p.starts_with(&prefix) && !p[prefix.len()..].contains('/') && is_workflow_path(p)
            })
            .map(|(p, t)| (p.clone(), t.clone()))
            .collect()
    }
}

/// `.hwf` or `.kt`.
pub fn is_workflow_path(path: &str) -> bool {
    path.ends_with(".hwf") || path.ends_with(".kt")
}

/// The path of a `file://` URI, percent-decoded (`None` for other schemes). A Windows drive
/// (`file:///c%3A/x`) keeps its `/c:/x` form.
pub fn uri_to_path(uri: &Uri) -> Option<String> {
    let s = uri.as_str();
    let rest = s.strip_prefix("file://")?;
    // Skip an authority (`file://host/path`): the path starts at the first `/`.
    let path = match rest.find('/') {
        Some(i) => &rest[i..],
        None => return None,
    };
    let path = path.split(['?', '#']).next().unwrap_or(path);
    Some(percent_decode(path))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(h), Some(l)) = (
                bytes.get(i + 1).and_then(|b| (*b as char).to_digit(16)),
                bytes.get(i + 2).and_then(|b| (*b as char).to_digit(16)),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The `file://` URI of an absolute path (percent-encoding what a URI path cannot hold).
pub fn path_to_uri(path: &str) -> Option<Uri> {
    let mut s = String::from("file://");
    if !path.starts_with('/') {
        s.push('/');
    }
    for b in path.bytes() {
        let c = b as char;
        if c.is_ascii_alphanumeric() || "/-_.~!$&'()*+,;=@".contains(c) {
            s.push(c);
        } else if c == ':' && s.len() > 8 && s.ends_with(|p: char| p.is_ascii_alphabetic()) {
            // Keep a drive letter colon readable (`/c:/x`).
            s.push(':');
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).ok()
}

/// The working directory of a workflow file: the parent of its `workflows/` folder, else its own
/// folder (as `hensuc` computes it).
pub fn project_root(path: &str) -> String {
    let parent = match path.rfind('/') {
        Some(0) => "/",
        Some(i) => &path[..i],
        None => ".",
    };
    if let Some(grand) = parent.strip_suffix("/workflows") {
        return if grand.is_empty() {
            "/".to_string()
        } else {
            grand.to_string()
        };
    }
    if parent == "workflows" {
        return ".".to_string();
    }
    parent.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_and_roots() {
        let uri = Uri::from_str("file:///home/a%20b/proj/workflows/x.hwf").ok();
        let path = uri.as_ref().and_then(uri_to_path);
        assert_eq!(path.as_deref(), Some("/home/a b/proj/workflows/x.hwf"));
        assert_eq!(
            project_root("/home/a b/proj/workflows/x.hwf"),
            "/home/a b/proj"
        );
        assert_eq!(project_root("/tmp/x.hwf"), "/tmp");
        let back = path_to_uri("/home/a b/proj/workflows/x.hwf");
        assert_eq!(
            back.as_ref().map(|u| u.as_str()),
            Some("file:///home/a%20b/proj/workflows/x.hwf")
        );
    }
}
