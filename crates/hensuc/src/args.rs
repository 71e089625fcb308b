//! Flags that several commands share. Each is defined once here and flattened
//! (`#[command(flatten)]`) into every command that takes it, so `-d/--dir`, `--color` and
//! `-v/--verbose` have the same spelling, default and help everywhere.

use std::path::PathBuf;

use clap::Args;

use crate::output::Color;

/// `-d/--dir DIR`: the project directory.
#[derive(Args, Clone, Debug, Default)]
pub struct ProjectDir {
    /// Project directory: sub-workflows in its `workflows/`, `.md` files in `prompts/` and
    /// `rubrics/`; runs also use `stubs/`, `commands.yaml` and the store `.hensu/`.
    #[arg(short = 'd', long = "dir", value_name = "DIR")]
    pub dir: Option<PathBuf>,
}

/// `--store URL`: the durable store, for the commands that read or write runs.
#[derive(Args, Clone, Debug, Default)]
pub struct StoreFlag {
    /// The store: `postgres://…` or a SQLite path. Default: `HENSU_DATABASE_URL`, else
    /// `hensu.toml` `[store] url`, else `<DIR>/.hensu/state.db`.
    #[arg(long = "store", value_name = "URL", global = true)]
    pub store: Option<String>,
}

/// The two forms of a command's report: for people, or JSON (docs/schemas/).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum ReportFormat {
    #[default]
    Human,
    Json,
}

/// `--format human|json`, with `--json` as its alias, as on every command with a JSON form.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct FormatFlag {
    /// Output format (`json`: the documented JSON of docs/schemas/).
    #[arg(long, value_enum, default_value_t = ReportFormat::Human, global = true)]
    pub format: ReportFormat,
    /// The same as `--format json`.
    #[arg(long, global = true)]
    pub json: bool,
}

impl FormatFlag {
    /// JSON was asked for (`--format json` or `--json`).
    pub fn json(&self) -> bool {
        self.json || self.format == ReportFormat::Json
    }
}

/// `--color WHEN`: colours in human output.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct ColorFlag {
    /// When to use colours in human output (`auto`: on a terminal, unless `NO_COLOR` is set).
    #[arg(long, value_enum, default_value_t = Color::Auto)]
    pub color: Color,
}

/// `-v/--verbose`: show more of what happens; `-q/--quiet`: less.
#[derive(Args, Clone, Copy, Debug, Default)]
pub struct Verbosity {
    /// Show prompts, outputs and transition reasons.
    #[arg(short, long)]
    pub verbose: bool,
    /// No header, status line or per-step lines: only problems (failures, retries, warnings)
    /// and the final summary. For scripts and benchmarks of runs.
    #[arg(short, long, conflicts_with = "verbose")]
    pub quiet: bool,
}
