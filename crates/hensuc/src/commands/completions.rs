//! `hensuc completions SHELL` — a shell completion script on stdout (clap_complete), and
//! `hensuc man [--out DIR]` — manual pages (clap_mangen). Both are generated from the same clap
//! definition the parser uses, so they never drift from the real flags (docs/cli.md).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use clap_complete::Shell;

use crate::atomic_write::write_atomically;
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc completions bash > ~/.local/share/bash-completion/completions/hensuc\n  \
    hensuc completions zsh > ~/.zfunc/_hensuc\n  \
    hensuc completions fish > ~/.config/fish/completions/hensuc.fish")]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Prints the completion script of `command` (the whole `hensuc` CLI) for one shell.
pub fn completions(args: CompletionsArgs, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    let name = command.get_name().to_string();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, name, &mut script);
    use std::io::Write as _;
    std::io::stdout().write_all(&script)?;
    Ok(ExitCode::from(exit::SUCCESS))
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc man | man -l -\n  \
    hensuc man --out /usr/local/share/man/man1")]
pub struct ManArgs {
    /// Write `hensuc.1` and one `hensuc-COMMAND.1` per command into DIR (created if missing).
    /// Without it, the main page is printed to stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Renders the manual pages of `command`: the main page, and with `--out` one page per command.
pub fn man(args: ManArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    let command = command.version(env!("CARGO_PKG_VERSION"));
    let Some(dir) = args.out else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        use std::io::Write as _;
        std::io::stdout().write_all(&page)?;
        return Ok(ExitCode::from(exit::SUCCESS));
    };
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut pages = vec![("hensuc.1".to_string(), command.clone())];
    for sub in command.get_subcommands() {
        // The page's title and synopsis read `hensuc-run` / `hensuc run`, as git's do.
        let page = sub
            .clone()
            .display_name(format!("hensuc-{}", sub.get_name()))
            .bin_name(format!("hensuc {}", sub.get_name()));
        pages.push((format!("hensuc-{}.1", sub.get_name()), page));
    }
    for (file, page_command) in pages {
        let mut page = Vec::new();
        clap_mangen::Man::new(page_command).render(&mut page)?;
        let path = dir.join(&file);
        write_atomically(&path, &page).with_context(|| format!("writing {}", path.display()))?;
    }
    println!(
        "wrote {} manual pages to {}",
        command.get_subcommands().count() + 1,
        dir.display()
    );
    Ok(ExitCode::from(exit::SUCCESS))
}
