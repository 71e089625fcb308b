//! How diagnostics leave the process: human (ariadne), JSON or SARIF on the chosen stream.

use std::io::IsTerminal;

use clap::ValueEnum;
use hensu_diagnostics::{Diagnostic, Files};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum DiagnosticFormat {
    #[default]
    Human,
    Json,
    Sarif,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum Color {
    #[default]
    Auto,
    Always,
    Never,
}

impl Color {
    /// Colour only on a terminal (and never when `NO_COLOR` is set), unless forced.
    pub fn enabled_for_stderr(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
            }
        }
    }

    pub fn enabled_for_stdout(self) -> bool {
        match self {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal()
            }
        }
    }
}

/// Print diagnostics: human text goes to stderr, machine formats to stdout (always, even when
/// empty, so tools can parse the envelope).
pub fn emit(files: &Files, diagnostics: &[Diagnostic], format: DiagnosticFormat, color: Color) {
    match format {
        DiagnosticFormat::Human => {
            if !diagnostics.is_empty() {
                eprint!(
                    "{}",
                    hensu_diagnostics::render_human(files, diagnostics, color.enabled_for_stderr())
                );
                if let Some(hint) = hensu_diagnostics::explain_hint(diagnostics) {
                    eprint!("\n{hint}");
                }
            }
        }
        DiagnosticFormat::Json => {
            println!("{}", hensu_diagnostics::render_json(files, diagnostics))
        }
        DiagnosticFormat::Sarif => {
            println!("{}", hensu_diagnostics::render_sarif(files, diagnostics))
        }
    }
}

pub fn error_count(diagnostics: &[Diagnostic]) -> usize {
    diagnostics.iter().filter(|d| d.is_error()).count()
}
