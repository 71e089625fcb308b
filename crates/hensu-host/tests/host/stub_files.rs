//! Stub files on disk: path tricks in a scenario or node id never reach the filesystem.

use super::*;

#[tokio::test]
async fn stub_file_paths_stay_under_their_root() {
    let fs = FsStubFiles::new("/");
    assert_eq!(fs.read("../etc", "passwd").await, Ok(None));
    assert_eq!(fs.read("etc", "../passwd").await, Ok(None));
}
