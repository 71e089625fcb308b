//! `hensuc explain CODE` — the catalogue entry of a diagnostic code.

use std::process::ExitCode;

use clap::Args;

use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc explain E0204")]
pub struct ExplainArgs {
    /// A diagnostic code such as E0201 or W0303 (case-insensitive).
    pub code: String,
}

pub fn execute(args: ExplainArgs) -> anyhow::Result<ExitCode> {
    let code = args.code.trim().to_ascii_uppercase();
    match hensu_diagnostics::lookup(&code) {
        Some(info) => {
            print!("{}", hensu_diagnostics::catalogue::render_explanation(info));
            Ok(ExitCode::from(exit::SUCCESS))
        }
        None => {
            let known: Vec<&str> = hensu_diagnostics::catalogue::all()
                .iter()
                .map(|c| c.code)
                .collect();
            eprintln!("error: unknown diagnostic code `{}`", args.code);
            eprintln!("help: known codes are {}", known.join(", "));
            Ok(ExitCode::from(exit::USAGE))
        }
    }
}
