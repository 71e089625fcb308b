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
    let code = match hensu_lsp::run_stdio_with_trim(return_free_memory)? {
        hensu_lsp::SessionEnd::AfterShutdown => exit::SUCCESS,
        hensu_lsp::SessionEnd::WithoutShutdown => exit::FAILURE,
    };
    Ok(ExitCode::from(code))
}

/// Returns mimalloc's free pages to the system (hensuc's global allocator, `main.rs`): the
/// server calls it once idle after an analysis (`hensu_lsp::IDLE_TRIM`), so a large document's
/// resident set falls back to its live heap between bursts of edits.
#[allow(unsafe_code)]
fn return_free_memory() {
    // SAFETY: `mi_collect` takes no pointer and may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}
