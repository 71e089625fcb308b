//! Where sub-workflow nodes find their child workflows.

use std::sync::Arc;

use hensu_ir::Workflow;
use indexmap::IndexMap;

/// Where sub-workflow nodes find their child workflows.
pub trait WorkflowRepository: Send + Sync {
    /// The workflow with this id.
    fn get(&self, id: &str) -> Option<Arc<Workflow>>;

    /// The workflow with this id for a tenant (`_tenant_id`, default `"default"`); the default
    /// implementation ignores the tenant.
    fn get_for_tenant(&self, _tenant: &str, id: &str) -> Option<Arc<Workflow>> {
        self.get(id)
    }
}

/// An in-memory repository keyed by workflow id.
#[derive(Clone, Debug, Default)]
pub struct MapRepository {
    workflows: IndexMap<String, Arc<Workflow>>,
}

impl MapRepository {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds (or replaces) a workflow under its id.
    pub fn insert(&mut self, workflow: impl Into<Arc<Workflow>>) {
        let wf = workflow.into();
        self.workflows.insert(wf.id.clone(), wf);
    }

    pub fn len(&self) -> usize {
        self.workflows.len()
    }

    pub fn is_empty(&self) -> bool {
        self.workflows.is_empty()
    }

    /// The workflows, in insertion order.
    pub fn workflows(&self) -> impl Iterator<Item = &Workflow> {
        self.workflows.values().map(|w| w.as_ref())
    }
}

impl FromIterator<Workflow> for MapRepository {
    fn from_iter<T: IntoIterator<Item = Workflow>>(iter: T) -> Self {
        let mut r = MapRepository::new();
        for wf in iter {
            r.insert(wf);
        }
        r
    }
}

impl WorkflowRepository for MapRepository {
    fn get(&self, id: &str) -> Option<Arc<Workflow>> {
        self.workflows.get(id).cloned()
    }
}
