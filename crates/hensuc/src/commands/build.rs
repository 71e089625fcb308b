//! `hensuc build PATH [-d DIR] [-o FILE|DIR] [--timestamp]` — the JSON artifact.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use crate::exit;
use crate::output::{self, Color, DiagnosticFormat};
use crate::project;

#[derive(Args, Debug)]
pub struct BuildArgs {
    /// The workflow to build (`.hwf`, `.kt` or `.json`).
    pub path: PathBuf,
    /// Working directory (sub-workflows in `workflows/`, `prompts/`, `rubrics/`); the artifact
    /// goes to `<DIR>/build/<id>.json` unless `-o` is given.
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
    /// Output file, or a directory to write `<id>.json` into; `-` writes to stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE|DIR")]
    pub output: Option<PathBuf>,
    /// Record the build time in `metadata.created` (off by default: builds are reproducible).
    #[arg(long)]
    pub timestamp: bool,
    /// Output format of diagnostics.
    #[arg(long, value_enum, default_value_t = DiagnosticFormat::Human)]
    pub format: DiagnosticFormat,
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

pub fn execute(args: BuildArgs) -> anyhow::Result<ExitCode> {
    let project = project::load(std::slice::from_ref(&args.path), args.dir.as_deref())?;
    output::emit(
        &project.files,
        &project.diagnostics,
        args.format,
        args.color,
    );
    if project.error_count() > 0 {
        return Ok(ExitCode::from(exit::FAILURE));
    }
    let Some(mut workflow) = project.explicit_units().find_map(|u| u.workflow.clone()) else {
        anyhow::bail!("`{}` did not produce a workflow", args.path.display());
    };
    if args.timestamp {
        workflow.metadata.created = Some(now_iso8601());
    }
    let json = hensu_ir::to_json(&workflow);
    let target = output_path(&args, &workflow.id);
    match target {
        None => print!("{json}"),
        Some(path) => {
            if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                std::fs::create_dir_all(parent)
                    .map_err(|e| anyhow::anyhow!("cannot create `{}`: {e}", parent.display()))?;
            }
            crate::atomic_write::write_atomically(&path, json.as_bytes())
                .map_err(|e| anyhow::anyhow!("cannot write `{}`: {e}", path.display()))?;
            eprintln!("compiled {} v{}", workflow.id, workflow.version);
            eprintln!("output   {}", path.display());
        }
    }
    Ok(ExitCode::from(exit::SUCCESS))
}

fn output_path(args: &BuildArgs, id: &str) -> Option<PathBuf> {
    match &args.output {
        Some(p) if p.as_os_str() == "-" => None,
        Some(p) if p.is_dir() => Some(p.join(format!("{id}.json"))),
        Some(p) => Some(p.clone()),
        None => {
            let root = project::working_dir_for(&args.path, args.dir.as_deref());
            Some(Path::new(&root).join("build").join(format!("{id}.json")))
        }
    }
}

/// UTC now as ISO-8601 with microseconds (`2026-01-15T09:30:00.123456Z`), as upstream writes it.
fn now_iso8601() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = now.as_secs() as i64;
    let micros = now.subsec_micros();
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{micros:06}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// Days since 1970-01-01 to (year, month, day) — Howard Hinnant's algorithm.
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

#[cfg(test)]
mod tests {
    use super::civil_from_days;

    #[test]
    fn civil_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(20_468), (2026, 1, 15));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
    }
}
