//! `hensuc fmt [PATH...] [--check] [--diff] [--stdin]` — the canonical formatter.
//!
//! * Files are replaced atomically (temporary file + rename, permissions kept); a directory
//!   means every `.hwf` / `.kt` file below it, symlinks below it skipped (docs/security.md).
//! * `--check` writes nothing, prints the name of every file that would change and exits 1 if
//!   there is one.
//! * `--diff` writes nothing, prints a unified diff of every change and exits 1 if there is one.
//! * `--stdin` formats standard input to standard output (with `--check` / `--diff`: as above,
//!   for the file `<stdin>`).
//! * A file with syntax errors is left untouched; its diagnostics go to stderr and the exit code
//!   is 1. I/O errors exit 2.
//! * Output uses LF line endings (a CRLF file is rewritten with LF; see `hensu_fmt`).

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use hensu_diagnostics::Files;
use hensu_fmt::FormatError;

use crate::args::ColorFlag;
use crate::exit;
use crate::output::Color;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc fmt examples\n  \
    hensuc fmt --check examples\n  \
    hensuc fmt --stdin < flow.hwf")]
pub struct FmtArgs {
    /// Workflow files, or directories searched recursively for `.hwf` and `.kt` files (default:
    /// the `workflows/` of the project at or above the current directory).
    pub paths: Vec<PathBuf>,
    /// Write nothing; list the files that are not formatted and exit 1 if there is one.
    #[arg(long)]
    pub check: bool,
    /// Write nothing; print a unified diff of the changes and exit 1 if there is one.
    #[arg(long)]
    pub diff: bool,
    /// Format standard input and write the result to standard output.
    #[arg(long, conflicts_with = "paths")]
    pub stdin: bool,
    #[command(flatten)]
    pub display: ColorFlag,
}

/// What happened to one input.
enum Outcome {
    Unchanged,
    Changed,
    /// Syntax errors (reported) or an internal formatter error (reported).
    Failed,
    /// Could not be read or written (reported).
    Io,
}

pub fn execute(mut args: FmtArgs) -> anyhow::Result<ExitCode> {
    if args.stdin {
        let outcome = format_stdin(&args);
        return Ok(ExitCode::from(exit_code(&[outcome], &args)));
    }
    if args.paths.is_empty() {
        // No arguments: the workflows of the project at or above the current directory.
        match crate::project::discover_project() {
            Some(root) => args.paths.push(root.join("workflows")),
            None => anyhow::bail!(
                "nothing to format: no hensu.toml in this directory or above; give workflow files or directories, or `--stdin`"
            ),
        }
    }
    let mut outcomes = Vec::new();
    let mut files = Vec::new();
    for path in &args.paths {
        if path.is_dir() {
            if let Err(e) = collect_dir(path, &mut files) {
                eprintln!("error: cannot read directory {}: {e}", path.display());
                outcomes.push(Outcome::Io);
            }
        } else {
            files.push(path.clone());
        }
    }
    let (mut changed, mut failed) = (0usize, 0usize);
    for path in &files {
        let outcome = format_file(path, &args);
        match outcome {
            Outcome::Changed => changed += 1,
            Outcome::Failed | Outcome::Io => failed += 1,
            Outcome::Unchanged => {}
        }
        outcomes.push(outcome);
    }
    if !args.check && !args.diff {
        let n = files.len();
        let mut summary = format!(
            "{n} file{}: {changed} reformatted",
            if n == 1 { "" } else { "s" }
        );
        if failed > 0 {
            summary.push_str(&format!(", {failed} left untouched because of errors"));
        }
        eprintln!("{summary}");
    }
    Ok(ExitCode::from(exit_code(&outcomes, &args)))
}

fn exit_code(outcomes: &[Outcome], args: &FmtArgs) -> u8 {
    if outcomes.iter().any(|o| matches!(o, Outcome::Io)) {
        return exit::USAGE;
    }
    let failed = outcomes.iter().any(|o| matches!(o, Outcome::Failed));
    let would_change =
        (args.check || args.diff) && outcomes.iter().any(|o| matches!(o, Outcome::Changed));
    if failed || would_change {
        exit::FAILURE
    } else {
        exit::SUCCESS
    }
}

/// Every `.hwf` / `.kt` file below `dir`, sorted, hidden directories skipped.
///
/// Symlinks below `dir` are skipped, to files and to directories alike: following them could
/// loop for ever or rewrite a file outside the tree the user asked for.
fn collect_dir(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)?
        .map(|e| e.and_then(|e| Ok((e.path(), e.file_type()?))))
        .collect::<Result<_, _>>()?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    for (path, file_type) in entries {
        let hidden = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with('.'));
        if file_type.is_symlink() {
            continue;
        }
        if file_type.is_dir() {
            if !hidden {
                collect_dir(&path, out)?;
            }
        } else if file_type.is_file()
            && matches!(
                path.extension().and_then(|e| e.to_str()),
                Some("hwf" | "kt")
            )
        {
            out.push(path);
        }
    }
    Ok(())
}

/// Format `text` (the contents of `name`); prints diagnostics on failure.
fn format_text(name: &str, text: &str, color: Color) -> Result<String, Outcome> {
    match hensu_fmt::format(text) {
        Ok(out) => Ok(out),
        Err(FormatError::Syntax(diagnostics)) => {
            let files = Files::single(name, text);
            eprint!(
                "{}",
                hensu_diagnostics::render_human(&files, &diagnostics, color.enabled_for_stderr())
            );
            eprintln!("{name}: not formatted (syntax errors)");
            Err(Outcome::Failed)
        }
        Err(e @ FormatError::Internal(_)) => {
            eprintln!("error: {name}: {e}; the file is left untouched");
            Err(Outcome::Failed)
        }
    }
}

/// Decode bytes as UTF-8; invalid UTF-8 is reported like a syntax error.
fn decode(name: &str, bytes: &[u8], color: Color) -> Result<String, Outcome> {
    let (text, diagnostics) = hensu_syntax::decode_source(bytes);
    if diagnostics.is_empty() {
        return Ok(text.into_owned());
    }
    let files = Files::single(name, text.as_ref());
    eprint!(
        "{}",
        hensu_diagnostics::render_human(&files, &diagnostics, color.enabled_for_stderr())
    );
    eprintln!("{name}: not formatted (invalid UTF-8)");
    Err(Outcome::Failed)
}

fn unified_diff(name: &str, old: &str, new: &str) -> String {
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(name, &format!("{name} (formatted)"))
        .to_string()
}

fn format_file(path: &Path, args: &FmtArgs) -> Outcome {
    let name = path.display().to_string();
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: cannot read {name}: {e}");
            return Outcome::Io;
        }
    };
    let text = match decode(&name, &bytes, args.display.color) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let formatted = match format_text(&name, &text, args.display.color) {
        Ok(f) => f,
        Err(o) => return o,
    };
    if formatted == text {
        return Outcome::Unchanged;
    }
    if args.check {
        println!("{name}");
    }
    if args.diff {
        print!("{}", unified_diff(&name, &text, &formatted));
    }
    if !args.check
        && !args.diff
        && let Err(e) = crate::atomic_write::write_atomically(path, formatted.as_bytes())
    {
        eprintln!("error: cannot write {name}: {e}");
        return Outcome::Io;
    }
    Outcome::Changed
}

fn format_stdin(args: &FmtArgs) -> Outcome {
    let name = "<stdin>";
    let mut bytes = Vec::new();
    if let Err(e) = std::io::stdin().read_to_end(&mut bytes) {
        eprintln!("error: cannot read standard input: {e}");
        return Outcome::Io;
    }
    let text = match decode(name, &bytes, args.display.color) {
        Ok(t) => t,
        Err(o) => return o,
    };
    let formatted = match format_text(name, &text, args.display.color) {
        Ok(f) => f,
        Err(o) => return o,
    };
    let changed = formatted != text;
    let mut stdout = std::io::stdout().lock();
    let written = if args.check {
        if changed {
            writeln!(stdout, "{name}")
        } else {
            Ok(())
        }
    } else if args.diff {
        write!(stdout, "{}", unified_diff(name, &text, &formatted))
    } else {
        stdout.write_all(formatted.as_bytes())
    };
    if let Err(e) = written.and_then(|()| stdout.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            // The reader went away (`| head`): not an error of ours, like other Unix tools.
            return if changed {
                Outcome::Changed
            } else {
                Outcome::Unchanged
            };
        }
        eprintln!("error: cannot write standard output: {e}");
        return Outcome::Io;
    }
    if changed {
        Outcome::Changed
    } else {
        Outcome::Unchanged
    }
}
