//! `run`, `runs`, `resume` and `cancel` against a server (`--server URL`): the same commands,
//! executed remotely; `run` streams the execution's events like a local run's progress.

use std::path::Path;
use std::process::ExitCode;

use serde_json::{Value, json};

use super::remote::{Remote, fail, print_event};
use super::runs_json::{RUNS_FORMAT_VERSION, record_of_execution};
use crate::exit;

/// Follows `id` from `from` and prints the outcome; the exit code follows the status.
fn follow_and_report(remote: &Remote, id: &str, from: Option<String>) -> anyhow::Result<ExitCode> {
    remote.follow(id, from, print_event)?;
    let a = remote.get(&format!("/api/v1/executions/{id}"))?;
    if !a.ok() {
        return Err(fail("status", &a));
    }
    let status = a
        .body
        .get("status")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_string();
    println!("{}", serde_json::to_string_pretty(&a.body)?);
    if status == "paused" {
        eprintln!(
            "continue with `hensuc resume {id} --server … --approve` (or --reject, --backtrack)"
        );
    }
    // The same exit codes as a local run (docs/cli.md): 0 at a SUCCESS end, 3 paused, 1 for
    // any other end (a FAILURE end node, failed, rejected, cancelled).
    let success_end = status == "completed"
        && a.body
            .get("exitStatus")
            .and_then(Value::as_str)
            .is_none_or(|x| x == "SUCCESS");
    Ok(ExitCode::from(if success_end {
        exit::SUCCESS
    } else if status == "paused" {
        exit::PAUSED
    } else {
        exit::FAILURE
    }))
}

/// `hensuc run WORKFLOW --server URL`: pushes the file (when it is one), starts it, streams.
pub fn run(
    remote: &Remote,
    workflow: &Path,
    dir: Option<&Path>,
    context: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let id = if workflow.is_file() {
        super::push::push_file(remote, workflow, dir)?
    } else {
        workflow.display().to_string()
    };
    let context: Value = match context {
        None => json!({}),
        Some(c) => {
            let text = match c.strip_prefix('@') {
                Some(f) => std::fs::read_to_string(f)
                    .map_err(|e| anyhow::anyhow!("cannot read `{f}`: {e}"))?,
                None => c.to_string(),
            };
            serde_json::from_str(&text)
                .map_err(|e| anyhow::anyhow!("--context is not JSON: {e}"))?
        }
    };
    let a = remote.post(
        "/api/v1/executions",
        &json!({"workflowId": id, "context": context}),
    )?;
    if !a.ok() {
        return Err(fail(&format!("start {id}"), &a));
    }
    let exec = a
        .body
        .get("executionId")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    eprintln!("execution {exec}");
    follow_and_report(remote, &exec, None)
}

/// Contexts per batch request of [`queue`]: well under the server's default caps (1,000
/// runs and 1 MiB a batch; docs/server.md, *Batch starts*).
const BATCH_RUNS: usize = 500;
const BATCH_BYTES: usize = 512 * 1024;

/// `hensuc run WORKFLOW --server URL --detach [--contexts FILE]`: pushes the file (when it
/// is one) and queues one execution per context through the batch route, in requests of at
/// most `BATCH_RUNS` contexts or `BATCH_BYTES`; prints each id as its request answers
/// (what is printed is queued, even when a later request fails).
pub fn queue(
    remote: &Remote,
    workflow: &Path,
    dir: Option<&Path>,
    contexts: Vec<serde_json::Map<String, Value>>,
) -> anyhow::Result<ExitCode> {
    let id = if workflow.is_file() {
        super::push::push_file(remote, workflow, dir)?
    } else {
        workflow.display().to_string()
    };
    let mut queued = 0usize;
    let mut rest = contexts.as_slice();
    while !rest.is_empty() {
        let mut take = 0;
        let mut bytes = 0;
        while take < rest.len() && take < BATCH_RUNS {
            bytes += serde_json::to_string(&rest[take])?.len() + 1;
            if take > 0 && bytes > BATCH_BYTES {
                break;
            }
            take += 1;
        }
        let (chunk, tail) = rest.split_at(take);
        let a = remote.post(
            "/api/v1/executions/batch",
            &json!({"workflowId": id, "contexts": chunk}),
        )?;
        if !a.ok() {
            return Err(fail(&format!("queue {id}"), &a));
        }
        for e in a.body["executions"].as_array().into_iter().flatten() {
            println!("{}", e["executionId"].as_str().unwrap_or_default());
            queued += 1;
        }
        rest = tail;
    }
    let noun = if queued == 1 {
        "execution"
    } else {
        "executions"
    };
    eprintln!("{queued} {noun} queued on the server; list them with `hensuc runs --server …`");
    Ok(ExitCode::from(exit::SUCCESS))
}

/// `hensuc runs --server URL`: every execution of the tenant, newest first, read page by page
/// (500 a page, following `X-Next-Cursor`; docs/server.md, *Paging*).
pub fn runs(remote: &Remote, as_json: bool) -> anyhow::Result<ExitCode> {
    let mut list: Vec<Value> = Vec::new();
    let mut path = "/api/v1/executions?limit=500".to_string();
    loop {
        let a = remote.get(&path)?;
        if !a.ok() {
            return Err(fail("runs", &a));
        }
        list.extend(a.body.as_array().cloned().unwrap_or_default());
        match a.next_cursor {
            // The cursor is hex: safe in a query as is.
            Some(c) if c.bytes().all(|b| b.is_ascii_hexdigit()) => {
                let next = format!("/api/v1/executions?limit=500&cursor={c}");
                if next == path {
                    break; // A server repeating its cursor must not loop this for ever.
                }
                path = next;
            }
            _ => break,
        }
    }
    if as_json {
        // The local `runs --json` shape (docs/schemas/runs.schema.json): one contract whether
        // the runs come from a store or from a server.
        let rows: Vec<Value> = list.iter().map(record_of_execution).collect();
        println!(
            "{}",
            json!({"format_version": RUNS_FORMAT_VERSION, "runs": rows})
        );
        return Ok(ExitCode::SUCCESS);
    }
    if list.is_empty() {
        println!("no runs");
    }
    for r in list {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        println!(
            "{:<38} {:<24} {:<10} {:<16} {}",
            s("executionId"),
            s("workflowId"),
            s("status"),
            s("currentNodeId"),
            s("startedAt")
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// `hensuc runs show ID --server URL`: the execution's record, in the shape of a local
/// `runs show` (docs/schemas/runs-show.schema.json). The API does not expose the run's log, so
/// `history` and `claims` are absent and `source`, `path`, `steps` are `null`; an unknown id is
/// the server's 404 (exit 2, as for a local store), never the list.
pub fn show(remote: &Remote, id: &str, as_json: bool) -> anyhow::Result<ExitCode> {
    let a = remote.get(&format!("/api/v1/executions/{id}"))?;
    if !a.ok() {
        return Err(fail(&format!("run `{id}`"), &a));
    }
    let record = record_of_execution(&a.body);
    if as_json {
        println!(
            "{}",
            json!({
                "format_version": RUNS_FORMAT_VERSION,
                "record": record,
                "source": Value::Null,
                "path": Value::Null,
                "steps": Value::Null,
                "error": a.body.get("error"),
            })
        );
        return Ok(ExitCode::SUCCESS);
    }
    let field = |k: &str| record.get(k).and_then(Value::as_str).map(str::to_string);
    let mut status = field("status").unwrap_or_default();
    if let Some(e) = field("exit_status") {
        status.push_str(&format!(" ({e})"));
    }
    println!("run         {}", field("run_id").unwrap_or_default());
    println!("workflow    {}", field("workflow").unwrap_or_default());
    println!("status      {status}");
    if let Some(e) = a.body.get("error").and_then(Value::as_str) {
        println!("error       {e}");
    }
    for (label, key) in [
        ("node       ", "current_node"),
        ("correlation", "correlation_id"),
        ("started    ", "started"),
        ("updated    ", "updated"),
    ] {
        if let Some(v) = field(key) {
            println!("{label} {v}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// What `hensuc resume` asks of the server.
pub struct ResumeRequest<'a> {
    pub id: &'a str,
    pub approve: bool,
    pub reject: Option<&'a str>,
    pub backtrack: Option<&'a str>,
    pub reason: Option<&'a str>,
    pub correlation: Option<&'a str>,
    pub edits: Option<serde_json::Map<String, Value>>,
    /// The edited arguments of a gated tool call (docs/mcp.md, *Tool approval*).
    pub arguments: Option<serde_json::Map<String, Value>>,
}

/// `hensuc resume ID --server URL [--approve | --reject R | --backtrack N]`.
pub fn resume(remote: &Remote, r: ResumeRequest<'_>) -> anyhow::Result<ExitCode> {
    let status = remote.get(&format!("/api/v1/executions/{}", r.id))?;
    if !status.ok() {
        return Err(fail(&format!("resume {}", r.id), &status));
    }
    let decision = if r.approve {
        Some("approve")
    } else if r.reject.is_some() {
        Some("reject")
    } else if r.backtrack.is_some() {
        Some("backtrack")
    } else {
        None
    };
    let mut body = serde_json::Map::new();
    if let Some(d) = decision {
        body.insert("decision".into(), json!(d));
        let corr = r.correlation.map(str::to_string).or_else(|| {
            status
                .body
                .get("correlationId")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
        body.insert("correlationId".into(), json!(corr));
    }
    if let Some(reason) = r.reject.or(r.reason) {
        body.insert("reason".into(), json!(reason));
    }
    if let Some(t) = r.backtrack {
        body.insert("targetStep".into(), json!(t));
    }
    if let Some(e) = r.edits {
        body.insert("contextEdits".into(), Value::Object(e));
    }
    if let Some(a) = r.arguments {
        body.insert("arguments".into(), Value::Object(a));
    }
    let from = status
        .body
        .get("step")
        .and_then(Value::as_u64)
        .map(|s| s.to_string());
    let a = remote.post(
        &format!("/api/v1/executions/{}/resume", r.id),
        &Value::Object(body),
    )?;
    if !a.ok() {
        return Err(fail(&format!("resume {}", r.id), &a));
    }
    follow_and_report(remote, r.id, from)
}

/// `hensuc cancel ID --server URL`.
/// `POST …/pause`: 202 pausing, 200 paused already (`hensuc pause --server`).
pub fn pause(remote: &Remote, id: &str) -> anyhow::Result<ExitCode> {
    let a = remote.post(&format!("/api/v1/executions/{id}/pause"), &json!({}))?;
    if !a.ok() {
        return Err(fail(&format!("pause {id}"), &a));
    }
    match a.body.get("status").and_then(Value::as_str) {
        Some("paused") => eprintln!("run {id} is already paused"),
        _ => println!(
            "pause of run {id} requested: it stops after its current node; continue it with `hensuc resume {id} --server …`"
        ),
    }
    Ok(ExitCode::SUCCESS)
}

pub fn cancel(remote: &Remote, id: &str) -> anyhow::Result<ExitCode> {
    let a = remote.post(&format!("/api/v1/executions/{id}/cancel"), &json!({}))?;
    if !a.ok() {
        return Err(fail(&format!("cancel {id}"), &a));
    }
    match a.body.get("status").and_then(Value::as_str) {
        Some("cancelled") => println!("run {id} cancelled"),
        _ => println!("run {id}: cancellation requested; it stops at its next node boundary"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `hensuc fork|redrive ID --server URL`: `POST /api/v1/executions/{id}/{op}` with `body`;
/// follows the new execution it names until it ends or pauses.
pub fn time_travel(remote: &Remote, id: &str, op: &str, body: Value) -> anyhow::Result<ExitCode> {
    let a = remote.post(&format!("/api/v1/executions/{id}/{op}"), &body)?;
    if !a.ok() {
        return Err(fail(&format!("{op} {id}"), &a));
    }
    let Some(new_id) = a.body.get("executionId").and_then(Value::as_str) else {
        anyhow::bail!("{op} {id}: the server's answer names no execution");
    };
    eprintln!("{op}: new run {new_id} from {id}");
    follow_and_report(remote, new_id, None)
}
