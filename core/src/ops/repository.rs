//! Where a project's git repository is, found from a directory (a session's, the
//! current one): what commit completion, anchors, staleness and review ask git
//! about. Nothing here runs git; the git dir is read.

use crate::gitdir;
use solaria_shared::Project;
use solaria_shared::redact::redact;
use std::path::Path;

/// The project of a repository directory, redacted like every captured path.
pub fn project_at(dir: &Path) -> Project {
    let p = crate::project::detect(dir);
    Project {
        key: redact(&p.key).into_owned(),
        name: redact(&p.name).into_owned(),
    }
}

/// The repository `dir` is in, if it holds `project` (the same key, after
/// redaction): where git may be asked about the project's history.
pub fn repository_of_project(dir: &Path, project: &Project) -> Option<gitdir::GitDirs> {
    gitdir::locate(dir).filter(|dirs| project_at(&dirs.work).key == project.key)
}
