//! The sub-workflow graph of a push: every referenced workflow must exist for the tenant
//! (children are pushed before parents), and no reference cycle may form.

use std::collections::{BTreeMap, BTreeSet};

use hensu_ir::Workflow;
use hensu_runtime::MapRepository;
use hensu_store::WorkflowRegistry;

use crate::error::{ApiError, ApiResult};

/// The workflow ids a workflow's sub-workflow nodes name.
pub fn children(wf: &Workflow) -> BTreeSet<String> {
    wf.nodes
        .values()
        .filter_map(|n| n.called_workflow().map(str::to_string))
        .collect()
}

async fn load(reg: &dyn WorkflowRegistry, tenant: &str, id: &str) -> ApiResult<Option<Workflow>> {
    let Some(stored) = reg.get_workflow(tenant, id).await? else {
        return Ok(None);
    };
    hensu_ir::from_json(&stored.definition.to_string())
        .map(Some)
        .map_err(|e| ApiError::internal(format!("stored workflow {id} does not load: {e:?}")))
}

/// 400 when `incoming` names unknown sub-workflows or closes a cycle.
pub async fn check_graph(
    reg: &dyn WorkflowRegistry,
    tenant: &str,
    incoming: &Workflow,
) -> ApiResult<()> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut missing = BTreeSet::new();
    let mut todo = vec![incoming.id.clone()];
    while let Some(id) = todo.pop() {
        if graph.contains_key(&id) {
            continue;
        }
        let wf = if id == incoming.id {
            Some(incoming.clone())
        } else {
            load(reg, tenant, &id).await?
        };
        let Some(wf) = wf else {
            missing.insert(id);
            continue;
        };
        let kids = children(&wf);
        todo.extend(kids.iter().cloned());
        graph.insert(id, kids);
    }
    let mut problems = Vec::new();
    if !missing.is_empty() {
        problems.push(format!(
            "Workflow '{}' references unknown sub-workflows: {}",
            incoming.id,
            missing.into_iter().collect::<Vec<_>>().join(", ")
        ));
    }
    if let Some(cycle) = find_cycle(&graph, &incoming.id) {
        problems.push(format!(
            "Sub-workflow reference cycle detected:\n  - {}",
            cycle.join(" -> ")
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::bad_request(problems.join("\n")))
    }
}

fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>, start: &str) -> Option<Vec<String>> {
    fn dfs(
        g: &BTreeMap<String, BTreeSet<String>>,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(i) = path.iter().position(|p| p == node) {
            let mut c = path[i..].to_vec();
            c.push(node.to_string());
            return Some(c);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for k in g.get(node).into_iter().flatten() {
            if let Some(c) = dfs(g, k, path, done) {
                return Some(c);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    dfs(graph, start, &mut Vec::new(), &mut BTreeSet::new())
}

/// The tenant's workflows reachable from `root`, for the engine's sub-workflow nodes.
pub async fn repository(
    reg: &dyn WorkflowRegistry,
    tenant: &str,
    root: &Workflow,
) -> ApiResult<MapRepository> {
    let mut repo = MapRepository::new();
    let mut seen = BTreeSet::new();
    let mut todo: Vec<String> = children(root).into_iter().collect();
    while let Some(id) = todo.pop() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if let Some(wf) = load(reg, tenant, &id).await? {
            todo.extend(children(&wf));
            repo.insert(wf);
        }
    }
    repo.insert(root.clone());
    Ok(repo)
}
