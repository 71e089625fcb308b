//! `hensuc init [DIR]` — a new project: `hensu.toml`, one workflow and its test, ready for
//! `hensuc check`, `hensuc run` and `hensuc test` (docs/cli.md). Nothing is overwritten: when one
//! of the files exists, nothing is written and the command says which.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

use crate::atomic_write::write_atomically;
use crate::exit;

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc init my-project\n  \
    hensuc init . --name triage\n  \
    cd my-project && hensuc run hello -d . -c '{\"name\": \"Ada\"}'")]
pub struct InitArgs {
    /// The project directory (created if missing; default: the current directory).
    #[arg(value_name = "DIR", default_value = ".")]
    pub dir: PathBuf,
    /// The id of the first workflow (default: `hello`).
    #[arg(long, default_value = "hello")]
    pub name: String,
}

const HENSU_TOML: &str = r#"# Project settings (docs/cli.md). Every section is optional.

# Real models: with an API key in the environment (ANTHROPIC_API_KEY, OPENAI_API_KEY, …) agents
# call them; without one they are stub agents (stubs/<scenario>/<node>.txt, or a generated
# answer). Providers can also be configured here, e.g.
# [providers.openai]
# base_url = "http://127.0.0.1:11434/v1"

# Hosts that webhook / api-caller nodes may reach in an offline run (otherwise simulated).
# [network]
# allow_hosts = ["hooks.example.com"]
"#;

/// What the stub agent answers at `greet` when no API key is set (docs/language.md, *Stubs*).
const STUB_GREETING: &str = "Hello Ada, lovely to meet you!";

const GITIGNORE: &str = "# the run store (hensuc run records every step here)\n.hensu/\n";

fn workflow(id: &str) -> String {
    format!(
        r#"/**
 * {id}: greet someone by name. Run it with `hensuc run {id} -d . -c '{{"name": "Ada"}}'`.
 */
workflow("{id}") {{
    description = "Greet someone by name"

    state {{
        input("name", VarType.STRING)
        variable("greeting", VarType.STRING, "the greeting, one sentence")
    }}

    agents {{
        agent("greeter") {{ role = "Friendly greeter"; model = Models.CLAUDE_HAIKU_4_5 }}
    }}

    graph {{
        start at "greet"

        node("greet") {{
            agent = "greeter"
            prompt = "Greet {{name}} in one sentence."
            writes("greeting")
            onSuccess goto "done"
        }}

        end("done")
    }}
}}
"#
    )
}

fn test(id: &str) -> String {
    format!(
        r#"# `hensuc test` runs this with a stub agent (docs/testing.md).
workflow = "{id}.hwf"
snapshot = false

[context]
name = "Ada"

[expect]
status = "SUCCESS"
end = "done"
path = ["greet", "done"]
outputs.greeting = {{ equals = "Hello Ada, lovely to meet you!" }}
"#
    )
}

pub fn execute(args: InitArgs) -> anyhow::Result<ExitCode> {
    if !hensu_sema::is_valid_identifier(&args.name) {
        eprintln!(
            "error: `{}` is not a valid workflow id\n  = help: use letters, digits, `.`, `_` and `-`, starting with a letter or digit",
            args.name
        );
        return Ok(ExitCode::from(exit::USAGE));
    }
    let files: Vec<(PathBuf, String)> = vec![
        (PathBuf::from("hensu.toml"), HENSU_TOML.to_string()),
        (PathBuf::from(".gitignore"), GITIGNORE.to_string()),
        (
            Path::new("workflows").join(format!("{}.hwf", args.name)),
            workflow(&args.name),
        ),
        (
            Path::new("stubs").join("default").join("greet.txt"),
            STUB_GREETING.to_string(),
        ),
        (
            Path::new("tests").join(format!("{}-default.test.toml", args.name)),
            test(&args.name),
        ),
    ];
    let existing: Vec<String> = files
        .iter()
        .filter(|(rel, _)| args.dir.join(rel).exists())
        .map(|(rel, _)| rel.display().to_string())
        .collect();
    if !existing.is_empty() {
        eprintln!(
            "error: {} already has {}; nothing was written",
            args.dir.display(),
            existing.join(", ")
        );
        eprintln!("  = help: choose another directory, or another id with `--name`");
        return Ok(ExitCode::from(exit::USAGE));
    }
    for (rel, contents) in &files {
        let path = args.dir.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        write_atomically(&path, contents.as_bytes())
            .with_context(|| format!("writing {}", path.display()))?;
    }
    println!("created a hensu project in {}", args.dir.display());
    for (rel, _) in &files {
        println!("  {}", rel.display());
    }
    let cd = if args.dir == Path::new(".") {
        String::new()
    } else {
        format!("cd {} && ", args.dir.display())
    };
    println!(
        "next: {cd}hensuc check -d . && hensuc test -d . && hensuc run {} -d . -c '{{\"name\": \"Ada\"}}'",
        args.name
    );
    Ok(ExitCode::from(exit::SUCCESS))
}
