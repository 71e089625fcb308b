//! `hensuc` — the hensu command line. One file per command under `commands/`.

use std::process::ExitCode;

use clap::{CommandFactory as _, Parser, Subcommand};
use hensuc::{commands, exit};

/// mimalloc: compiling a large workflow makes about a million small allocations; glibc's
/// allocator spent a quarter of the check pipeline in malloc/free and grew superlinearly when
/// freeing the syntax tree and the IR.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `hensuc --version`: the package version and the commit it was built from (build.rs).
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("HENSU_BUILD_COMMIT"),
    ")"
);

#[derive(Parser, Debug)]
#[command(
    name = "hensuc",
    version = VERSION,
    about = "Compile, check and run hensu workflows (.hwf, .kt, .json)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Report every error and warning of the given workflows at once.
    Check(commands::check::CheckArgs),
    /// Compile a workflow to its JSON artifact (the upstream Hensu wire format).
    Build(commands::build::BuildArgs),
    /// Draw a workflow's graph as mermaid, dot, JSON topology or text.
    Graph(commands::graph::GraphArgs),
    /// Explain a diagnostic code with an example.
    Explain(commands::explain::ExplainArgs),
    /// Run a workflow (real models when credentials are configured, stub agents otherwise).
    Run(commands::run::RunArgs),
    /// Format workflow files in the canonical style.
    Fmt(commands::fmt::FmtArgs),
    /// Run the language server on stdin/stdout.
    Lsp(commands::lsp::LspArgs),
    /// List the runs of the state store (`runs show ID`: one run's history).
    Runs(commands::runs::RunsArgs),
    /// Continue a paused or crashed run from its last checkpoint.
    Resume(commands::resume::ResumeArgs),
    /// Fork a stored run at a step of its log: a new run with its history up to there,
    /// continued here with context edits or another workflow.
    Fork(commands::fork::ForkArgs),
    /// Redrive a failed run: a fork at the step before its failure; only failed branches of a
    /// parallel or fork node run again.
    Redrive(commands::fork::RedriveArgs),
    /// Replay a stored run (or every ended run: `--all`) from its recorded outputs — no model
    /// call, no side effect — and report the first step where it diverges.
    Replay(commands::replay::ReplayArgs),
    /// Cancel a run (a running one stops at its next node boundary).
    Cancel(commands::cancel::ControlArgs),
    /// Pause a running run after its current node (continue with `resume`).
    Pause(commands::cancel::ControlArgs),
    /// Send a signal to a run (an `awaitSignal` node takes it; docs/language.md, *Timers and
    /// signals*).
    Signal(commands::signal::SignalArgs),
    /// Run the workflow tests `tests/*.test.toml` (stub agents, scripted reviews, snapshots).
    Test(commands::test::TestArgs),
    /// Execute queued and orphaned runs of the store (`run --detach` queues them); many
    /// workers on many machines can share one PostgreSQL store.
    Worker(commands::worker::WorkerArgs),
    /// Follow a run's steps live from the store's log, until it ends or pauses.
    Attach(commands::attach::AttachArgs),
    /// Serve workflows and executions over HTTP (REST + SSE; docs/server.md).
    #[cfg(feature = "server")]
    Serve(commands::serve::ServeArgs),
    /// Push workflows to a server (children before parents).
    Push(commands::push::PushArgs),
    /// Print a workflow pushed to a server.
    Pull(commands::pull::PullArgs),
    /// List the workflows pushed to a server.
    Workflows(commands::workflows::WorkflowsArgs),
    /// Delete a workflow from a server.
    Delete(commands::delete::DeleteArgs),
    /// Offer the MCP servers of hensu.toml to a server's runs of your tenant (`mcp connect`).
    Mcp(commands::mcp::McpArgs),
    /// Probe a server's /health (or /ready): exit 0 when it answers 200, 1 otherwise.
    Health(commands::health::HealthArgs),
    /// Create a project: `hensu.toml`, one workflow and its test.
    Init(commands::init::InitArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(commands::completions::CompletionsArgs),
    /// Print or write the manual pages.
    Man(commands::completions::ManArgs),
}

fn main() -> ExitCode {
    install_panic_hook();
    // Lets the test suite prove the panic hook; never set in normal use.
    if std::env::var_os("HENSUC_INTERNAL_TEST_PANIC").is_some() {
        panic!("panic requested by HENSUC_INTERNAL_TEST_PANIC");
    }
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() {
                exit::USAGE
            } else {
                exit::SUCCESS
            };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let result = match cli.command {
        Command::Check(args) => commands::check::execute(args),
        Command::Build(args) => commands::build::execute(args),
        Command::Graph(args) => commands::graph::execute(args),
        Command::Run(args) => commands::run::execute(args),
        Command::Fmt(args) => commands::fmt::execute(args),
        Command::Lsp(args) => commands::lsp::execute(args),
        Command::Explain(args) => commands::explain::execute(args),
        Command::Runs(args) => commands::runs::execute(args),
        Command::Resume(args) => commands::resume::execute(args),
        Command::Fork(args) => commands::fork::execute(args),
        Command::Redrive(args) => commands::fork::redrive(args),
        Command::Replay(args) => commands::replay::execute(args),
        Command::Cancel(args) => commands::cancel::cancel(args),
        Command::Pause(args) => commands::cancel::pause(args),
        Command::Signal(args) => commands::signal::execute(args),
        Command::Test(args) => commands::test::execute(args),
        Command::Worker(args) => commands::worker::execute(args),
        Command::Attach(args) => commands::attach::execute(args),
        #[cfg(feature = "server")]
        Command::Serve(args) => commands::serve::execute(args),
        Command::Push(args) => commands::push::execute(args),
        Command::Pull(args) => commands::pull::execute(args),
        Command::Workflows(args) => commands::workflows::execute(args),
        Command::Delete(args) => commands::delete::execute(args),
        Command::Mcp(args) => commands::mcp::execute(args),
        Command::Health(args) => commands::health::execute(args),
        Command::Init(args) => commands::init::execute(args),
        Command::Completions(args) => commands::completions::completions(args, Cli::command()),
        Command::Man(args) => commands::completions::man(args, Cli::command()),
    };
    match result {
        Ok(code) => code,
        Err(err) if is_broken_pipe(&err) => ExitCode::from(exit::SUCCESS),
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::from(exit::USAGE)
        }
    }
}

/// The reader of our output went away (`hensuc graph … | head`): like other Unix tools,
/// stop quietly. Rust ignores SIGPIPE, so the write fails with EPIPE instead of killing us.
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// `print!` / `eprint!` panic when their stream is a closed pipe, with the message
/// "failed printing to stdout: Broken pipe (os error 32)" (EPIPE is 32 on Linux and macOS).
fn is_broken_pipe_panic(payload: &str) -> bool {
    payload.starts_with("failed printing to std") && payload.contains("(os error 32)")
}

/// A panic anywhere is a bug in hensuc: say so, say where, exit 101 — except a closed stdout
/// pipe, which is the reader's choice: exit 0 without a word.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()))
            .unwrap_or_else(|| "unknown location".to_string());
        let payload = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if is_broken_pipe_panic(&payload) {
            std::process::exit(i32::from(exit::SUCCESS));
        }
        eprintln!(
            "internal error: please report this bug at https://github.com/hensu/hensu/issues"
        );
        eprintln!("  panicked at {location}: {payload}");
        std::process::exit(i32::from(exit::INTERNAL));
    }));
}
