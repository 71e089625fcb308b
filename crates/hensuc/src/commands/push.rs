//! `hensuc push FILE|DIR`: compile workflows and push them to a server, children before
//! parents (a parent's sub-workflows must exist when it arrives).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::Value;

use super::remote::{Remote, RemoteArgs, fail};

#[derive(Args, Debug)]
#[command(after_help = "Examples:\n  \
    hensuc push examples --server http://127.0.0.1:8080\n  \
    hensuc push examples/workflows/content-pipeline.hwf --server http://127.0.0.1:8080")]
pub struct PushArgs {
    /// A workflow file (`.hwf`, `.kt`, `.json`) or a directory of them (its `workflows/` too).
    pub path: PathBuf,
    #[command(flatten)]
    pub remote: RemoteArgs,
}

/// Compiles every workflow at `path` with the project's checks (as `hensuc build`).
fn compile_all(path: &std::path::Path) -> anyhow::Result<Vec<hensu_ir::Workflow>> {
    let mut files = Vec::new();
    if path.is_dir() {
        for sub in [path.to_path_buf(), path.join("workflows")] {
            let Ok(rd) = std::fs::read_dir(&sub) else {
                continue;
            };
            let mut found: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    matches!(
                        p.extension().and_then(|e| e.to_str()),
                        Some("hwf" | "kt" | "json")
                    )
                })
                .collect();
            found.sort();
            files.extend(found);
        }
    } else {
        files.push(path.to_path_buf());
    }
    if files.is_empty() {
        anyhow::bail!("no workflow files in {}", path.display());
    }
    let dir = if path.is_dir() { Some(path) } else { None };
    compile_files(files, dir)
}

/// Compiles `files` with `hensuc build` (the project in `dir`, else each file's directory).
fn compile_files(
    files: Vec<PathBuf>,
    dir: Option<&std::path::Path>,
) -> anyhow::Result<Vec<hensu_ir::Workflow>> {
    let out = tempfile::tempdir()?;
    let exe = std::env::current_exe()?;
    let mut out_wfs = Vec::new();
    for f in files {
        let project = match dir {
            Some(d) => d.to_path_buf(),
            None => crate::project::working_dir_for(&f, None),
        };
        let status = std::process::Command::new(&exe)
            .arg("build")
            .arg(&f)
            .arg("-d")
            .arg(&project)
            .arg("-o")
            .arg(out.path())
            .status()?;
        if !status.success() {
            anyhow::bail!("{} does not compile; nothing was pushed", f.display());
        }
    }
    for e in std::fs::read_dir(out.path())? {
        let p = e?.path();
        let text = std::fs::read_to_string(&p)?;
        let wf =
            hensu_ir::from_json(&text).map_err(|e| anyhow::anyhow!("{}: {e:?}", p.display()))?;
        out_wfs.push(wf);
    }
    Ok(out_wfs)
}

/// Children before parents (ties by id).
fn push_order(wfs: &[hensu_ir::Workflow]) -> Vec<usize> {
    let ids: BTreeMap<&str, usize> = wfs
        .iter()
        .enumerate()
        .map(|(i, w)| (w.id.as_str(), i))
        .collect();
    let mut done = BTreeSet::new();
    let mut order = Vec::new();
    fn visit(
        i: usize,
        wfs: &[hensu_ir::Workflow],
        ids: &BTreeMap<&str, usize>,
        done: &mut BTreeSet<usize>,
        order: &mut Vec<usize>,
        stack: &mut BTreeSet<usize>,
    ) {
        if done.contains(&i) || !stack.insert(i) {
            return;
        }
        for n in wfs[i].nodes.values() {
            if let Some(child) = n.called_workflow()
                && let Some(&c) = ids.get(child)
            {
                visit(c, wfs, ids, done, order, stack);
            }
        }
        stack.remove(&i);
        if done.insert(i) {
            order.push(i);
        }
    }
    for &i in ids.values() {
        visit(i, wfs, &ids, &mut done, &mut order, &mut BTreeSet::new());
    }
    order
}

/// Pushes one workflow file (its sub-workflows must be on the server: `hensuc push DIR`);
/// returns its id.
pub fn push_file(
    remote: &Remote,
    file: &std::path::Path,
    dir: Option<&std::path::Path>,
) -> anyhow::Result<String> {
    let wfs = compile_files(vec![file.to_path_buf()], dir)?;
    let root = wfs.first().map(|w| w.id.clone()).unwrap_or_default();
    push_all(remote, &wfs, false)?;
    Ok(root)
}

/// Pushes `wfs` children first; one line per workflow on stdout (`hensuc push`) or stderr
/// (`hensuc run --server`, whose stdout is the run's outcome).
fn push_all(remote: &Remote, wfs: &[hensu_ir::Workflow], to_stdout: bool) -> anyhow::Result<()> {
    for i in push_order(wfs) {
        let wf = &wfs[i];
        let body: Value = serde_json::from_str(&hensu_ir::to_json(wf))?;
        let a = remote.post("/api/v1/workflows", &body)?;
        if !a.ok() {
            if let Some(d) = a.body.get("diagnostics") {
                eprintln!("{}", serde_json::to_string_pretty(d)?);
            }
            return Err(fail(&format!("push {}", wf.id), &a));
        }
        let created = a.body.get("created").and_then(Value::as_bool) == Some(true);
        let line = format!(
            "{} {} v{}",
            if created { "created " } else { "replaced" },
            wf.id,
            wf.version
        );
        if to_stdout {
            println!("{line}");
        } else {
            eprintln!("{line}");
        }
    }
    Ok(())
}

pub fn execute(args: PushArgs) -> anyhow::Result<ExitCode> {
    let remote = Remote::required(&args.remote)?;
    let wfs = compile_all(&args.path)?;
    push_all(&remote, &wfs, true)?;
    Ok(ExitCode::SUCCESS)
}
