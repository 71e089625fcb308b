//! The part of `hensuc check` that needs the MCP servers of `hensu.toml` (docs/mcp.md): W0601
//! for a tool an agent names that no server offers. Only with `check --tools`: listing the tools
//! starts the servers' commands, which a plain `check` never does. Skipped with a note
//! otherwise, or when a server cannot be listed.

use std::path::Path;

use hensu_diagnostics::Diagnostic;

use crate::project::Project;

/// W0601 diagnostics of every workflow of `project` whose agents declare tools.
pub fn offered_tools_diagnostics(
    project: &Project,
    workdir: &Path,
    skip_servers: bool,
) -> Vec<Diagnostic> {
    let with_tools: Vec<_> = project
        .units
        .iter()
        .filter_map(|u| u.workflow.as_ref().map(|wf| (wf, &u.origins)))
        .filter(|(wf, _)| wf.agents.values().any(|a| !a.tools.is_empty()))
        .collect();
    if with_tools.is_empty() {
        return Vec::new();
    }
    // A broken hensu.toml is reported by `check` itself (E0906/E0907); its tools are not listed.
    let config = match crate::project::settings(workdir) {
        Ok(c) if c.mcp.servers.is_empty() => return Vec::new(),
        Ok(c) => c.mcp,
        Err(_) => return Vec::new(),
    };
    if skip_servers {
        eprintln!(
            "note: agent tools not checked against the MCP servers of hensu.toml (`hensuc check --tools` starts them to list their tools)"
        );
        return Vec::new();
    }
    let mcp = match hensu_mcp::LocalMcp::start(&config, workdir) {
        Ok(mcp) => mcp,
        Err(e) => {
            eprintln!("note: agent tools not checked: {e}");
            return Vec::new();
        }
    };
    let mut offered: Vec<String> = hensu_mcp::ToolSource::tools(&mcp)
        .into_iter()
        .map(|t| t.name)
        .collect();
    // Agents may also call `send` handlers (the run's executor falls back to them).
    offered.extend(
        hensu_host::action_handlers(None)
            .ids()
            .into_iter()
            .map(str::to_string),
    );
    offered.push("mcp".to_string());
    with_tools
        .into_iter()
        .flat_map(|(wf, origins)| hensu_sema::check::check_offered_tools(wf, origins, &offered))
        .collect()
}

/// W0332: an agent's tool loop may call a tool of an MCP server whose call policy is not
/// declared (docs/security.md, *Call journal*): a run stopped during such a call fails the
/// node when it resumes (`unsafe`, the default). A tool is declared when a server's
/// `tool_policy` names it or when every server declares a `policy` (whichever serves it has
/// one); `send` handler ids agents may call are not MCP tools. No server is started.
pub fn tool_policy_diagnostics(project: &Project, workdir: &Path) -> Vec<Diagnostic> {
    let config = match crate::project::settings(workdir) {
        Ok(c) if !c.mcp.servers.is_empty() => c.mcp,
        _ => return Vec::new(),
    };
    let every_server = config.servers.values().all(|s| s.policy.is_some());
    let handlers = hensu_host::action_handlers(None);
    let declared = |tool: &str| {
        every_server
            || tool == "mcp"
            || handlers.get(tool).is_some()
            || config
                .servers
                .values()
                .any(|s| s.tool_policy.contains_key(tool))
    };
    let mut out = Vec::new();
    for unit in &project.units {
        let Some(wf) = &unit.workflow else { continue };
        let origins = &unit.origins;
        for (id, agent) in &wf.agents {
            let origin = origins.agents.get(id);
            for (i, tool) in agent.tools.iter().enumerate() {
                if declared(tool) {
                    continue;
                }
                let span = origin
                    .and_then(|o| {
                        o.tools
                            .get(i)
                            .copied()
                            .or_else(|| o.props.get("tools").copied())
                    })
                    .or(origin.map(|o| o.decl))
                    .unwrap_or(origins.fallback);
                let d = Diagnostic::new(
                    hensu_diagnostics::codes::W0332,
                    format!(
                        "agent `{id}` may call tool `{tool}`, whose call policy is not declared"
                    ),
                    span,
                    "a run stopped during this call fails the node when it resumes",
                )
                .with_help(format!(
                    "declare it in hensu.toml: `tool_policy = {{ {tool} = \"idempotent\" }}` (or \"unsafe\") under the `[mcp.servers.NAME]` that serves it, or `policy = …` for the whole server"
                ));
                out.push(origins.place(d.in_file(origins.file)));
            }
        }
    }
    out
}
