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
