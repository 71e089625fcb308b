//! Where a tenant's stub answers come from (docs/server.md, *Stub scenarios*). A run picks a
//! scenario with the context key `stub_scenario`; on a server with tenants, one tenant must
//! never read answers meant for another, nor learn the names of their scenarios (an unknown
//! scenario's error lists the scenarios the run could have used).

use std::path::PathBuf;

use hensu_host::launch::StubRoot;

/// The stub files a server's runs read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StubScenarios {
    /// Every run reads `<dir>/<scenario>/<id>.txt`: dev mode, where the one tenant is the
    /// developer of the project (`<project>/stubs`, as `hensuc run`).
    Shared(PathBuf),
    /// Tenant `T`'s runs read `<dir>/T/<scenario>/<id>.txt` (`[server] tenant_stubs`).
    PerTenant(PathBuf),
    /// No stub files: stub agents answer with the generated fall-back, and the only scenario
    /// is `default` (a server with tenants and no `tenant_stubs`).
    None,
}

impl From<PathBuf> for StubScenarios {
    fn from(dir: PathBuf) -> StubScenarios {
        StubScenarios::Shared(dir)
    }
}

impl StubScenarios {
    /// Where one run of `tenant` reads its stub answers (its run setup's `stubs.files`).
    pub fn root_for(&self, tenant: &str) -> StubRoot {
        match self {
            StubScenarios::Shared(dir) => StubRoot::Dir(dir.clone()),
            // A tenant id that is not a plain name never becomes a path.
            StubScenarios::PerTenant(dir) if crate::validate::valid_id(tenant) => {
                StubRoot::Dir(dir.join(tenant))
            }
            StubScenarios::PerTenant(_) | StubScenarios::None => StubRoot::None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_tenant_sees_only_its_own_scenarios() {
        let dir = tempfile::tempdir().expect("tempdir");
        for (tenant, scenario) in [("acme", "acme-private"), ("other", "mine")] {
            let d = dir.path().join(tenant).join(scenario);
            std::fs::create_dir_all(&d).expect("dir");
            std::fs::write(d.join("draft.txt"), format!("{tenant} answer")).expect("file");
        }
        let per = StubScenarios::PerTenant(dir.path().to_path_buf());
        let files = |tenant: &str| per.root_for(tenant).files(std::path::Path::new("unused"));
        let other = files("other").expect("files");
        assert_eq!(other.scenarios().await, vec!["mine".to_string()]);
        assert_eq!(other.read("acme-private", "draft").await, Ok(None));
        let acme = files("acme").expect("files");
        assert_eq!(
            acme.read("acme-private", "draft").await,
            Ok(Some("acme answer".into()))
        );
        assert_eq!(per.root_for("../acme"), StubRoot::None);
        assert_eq!(StubScenarios::None.root_for("acme"), StubRoot::None);
    }
}
