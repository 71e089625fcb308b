//! `hensuc lsp` — the language server on stdin/stdout (diagnostics, hover, go-to-definition,
//! references, rename, completion, signature help, outline, workspace symbols, folding,
//! highlights, selection ranges, inlay hints, formatting, semantic tokens, quick fixes). The
//! engine is `hensu-lsp`; prompts, rubrics and the sibling workflows of a document are read from
//! its project folder (the parent of its `workflows/` folder, as `check` computes it).

use std::process::ExitCode;

use clap::Args;

use crate::exit;

#[derive(Args, Debug)]
pub struct LspArgs {
    /// Accepted and ignored: stdio is the only transport. LSP clients (vscode-languageclient
    /// with `TransportKind.stdio`, among others) append `--stdio` to the server command.
    #[arg(long)]
    pub stdio: bool,
}

/// Exit code 0 after `shutdown` + `exit`; 1 when the client exits (or closes stdin) without
/// `shutdown`, as the protocol asks.
pub fn execute(_args: LspArgs) -> anyhow::Result<ExitCode> {
    let code = match hensu_lsp::run_stdio()? {
        hensu_lsp::SessionEnd::AfterShutdown => exit::SUCCESS,
        hensu_lsp::SessionEnd::WithoutShutdown => exit::FAILURE,
    };
    Ok(ExitCode::from(code))
}
