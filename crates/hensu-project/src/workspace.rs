//! A project directory and its `hensu.toml`, read through [`ProjectFiles`] (the file system for
//! the CLI; open buffers first for the language server), and the walk up to the nearest
//! project (docs/cli.md, *Project discovery*).

use std::path::{Path, PathBuf};

use crate::load::{PROJECT_FILE, ProjectFile};

/// Reads the project's own files (`hensu.toml`). `Ok(None)`: there is no such file.
pub trait ProjectFiles {
    fn read(&self, path: &Path) -> std::io::Result<Option<String>>;
}

/// [`ProjectFiles`] over the file system.
#[derive(Clone, Copy, Debug, Default)]
pub struct FsProjectFiles;

impl ProjectFiles for FsProjectFiles {
    fn read(&self, path: &Path) -> std::io::Result<Option<String>> {
        match std::fs::read_to_string(path) {
            Ok(text) => Ok(Some(text)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// A project: its directory and its parsed `hensu.toml` (the defaults without one).
#[derive(Clone, Debug, Default)]
pub struct Workspace {
    pub root: PathBuf,
    pub file: ProjectFile,
}

impl Workspace {
    /// Reads `<root>/hensu.toml`. A file that exists but cannot be read is an error (never
    /// treated as "no file"); a file with problems loads, its problems in
    /// [`ProjectFile::diagnostics`].
    pub fn load(root: &Path, files: &dyn ProjectFiles) -> Result<Workspace, String> {
        let path = root.join(PROJECT_FILE);
        let file = match files.read(&path) {
            Ok(Some(text)) => ProjectFile::parse(&text),
            Ok(None) => ProjectFile::default(),
            Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        };
        Ok(Workspace {
            root: root.to_path_buf(),
            file,
        })
    }

    /// [`Workspace::load`] from the file system.
    pub fn load_dir(root: &Path) -> Result<Workspace, String> {
        Workspace::load(root, &FsProjectFiles)
    }

    /// The path of the project file (whether or not it exists).
    pub fn project_file_path(&self) -> PathBuf {
        self.root.join(PROJECT_FILE)
    }

    /// The settings, or the first error of `hensu.toml` as a message naming the file, for a
    /// command that must not run with a broken project file.
    pub fn config_or_refusal(&self) -> Result<&crate::ProjectConfig, String> {
        match self.file.refusal() {
            Some(problem) => Err(format!("{}/{problem}", self.root.display())),
            None => Ok(&self.file.config),
        }
    }
}

/// The nearest directory at or above `start` that holds a `hensu.toml`, like cargo's search
/// for `Cargo.toml`; `None` when no ancestor has one.
pub fn discover(start: &Path) -> Option<PathBuf> {
    let start = if start.is_absolute() {
        start.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(start)
    };
    start
        .ancestors()
        .find(|dir| dir.join(PROJECT_FILE).is_file())
        .map(Path::to_path_buf)
}
