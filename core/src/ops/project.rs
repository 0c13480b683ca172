//! Which project a caller means: the one resolver behind `--project` (CLI
//! `search` and `context`), the MCP tools' `project` and the local API's
//! `project`. A project is named by its key, its name, its `owner/repo` slug
//! (`store::records::matching_projects`) or a path inside it (detected like a
//! hook detects it). A name that means nothing is an error that lists the
//! closest projects, never an empty answer.

use super::{OpError, OpResult};
use crate::store::{Store, records};
use solaria_shared::Project;
use solaria_shared::text::edit_distance;
use std::path::{Path, PathBuf};

/// The most projects an unknown name's error suggests.
const MAX_SUGGESTIONS: usize = 3;

/// The projects `text` names, most recent first (several only when they share
/// a name or a slug), or [`OpError::UnknownProject`] with the closest ones.
pub fn resolve(store: &Store, text: &str) -> OpResult<Vec<Project>> {
    let text = text.trim();
    let conn = store.conn();
    let found = records::matching_projects(conn, text)?;
    if !found.is_empty() {
        return Ok(found);
    }
    let known = records::known_projects(conn)?;
    if let Some(dir) = as_path(text)
        && let Some(project) = project_at(&dir, &known)
    {
        let project = records::resolve_project(conn, &project.key)?.unwrap_or(project);
        return Ok(vec![project]);
    }
    Err(OpError::UnknownProject {
        name: text.chars().take(80).collect(),
        suggestions: closest(&known, text),
    })
}

/// `text` as a directory path when it looks like one (`/…`, `./…`, `../…`,
/// `~/…`, `.`), made absolute and canonical when it exists.
fn as_path(text: &str) -> Option<PathBuf> {
    let path = if let Some(rest) = text.strip_prefix("~/") {
        PathBuf::from(std::env::var_os("HOME")?).join(rest)
    } else if text.starts_with('/') || text.starts_with('.') {
        PathBuf::from(text)
    } else {
        return None;
    };
    Some(std::fs::canonicalize(&path).unwrap_or(path))
}

/// The known project a path lies in: the one its git remote names, else the
/// one whose key (a directory, for projects without a remote) holds it.
fn project_at(dir: &Path, known: &[Project]) -> Option<Project> {
    let detected = crate::project::detect(dir);
    if let Some(p) = known.iter().find(|p| p.key == detected.key) {
        return Some(p.clone());
    }
    known
        .iter()
        .filter(|p| p.key.starts_with('/') && dir.starts_with(&p.key))
        .max_by_key(|p| p.key.len())
        .cloned()
}

/// At most three known projects closest to `text` (a substring of the name or
/// key first, then by edit distance), as `name (key)`.
fn closest(known: &[Project], text: &str) -> Vec<String> {
    let wanted = text.to_lowercase();
    let mut scored: Vec<(usize, &Project)> = known
        .iter()
        .map(|p| {
            let name = p.name.to_lowercase();
            let key = p.key.to_lowercase();
            let distance = if name.contains(&wanted) || key.contains(&wanted) {
                0
            } else {
                let slug = key.split('/').skip(1).collect::<Vec<_>>().join("/");
                edit_distance(&wanted, &name)
                    .min(edit_distance(&wanted, &key))
                    .min(edit_distance(&wanted, &slug))
            };
            (distance, p)
        })
        .collect();
    scored.sort_by_key(|(d, _)| *d);
    scored
        .into_iter()
        .take(MAX_SUGGESTIONS)
        .map(|(_, p)| format!("{} ({})", p.name, p.key))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(key: &str, name: &str) -> Project {
        Project {
            key: key.into(),
            name: name.into(),
        }
    }

    #[test]
    fn the_closest_projects_come_first_and_at_most_three() {
        let known = [
            p("github.com/acme/web", "web"),
            p("github.com/acme/billing-api", "billing-api"),
            p("github.com/acme/billing-ui", "billing-ui"),
            p("/home/u/notes", "notes"),
            p("github.com/acme/api", "api"),
        ];
        let got = closest(&known, "biling-api");
        assert_eq!(got.len(), 3);
        assert_eq!(got[0], "billing-api (github.com/acme/billing-api)");
        assert_eq!(
            closest(&known, "billing")[1],
            "billing-ui (github.com/acme/billing-ui)"
        );
        assert!(closest(&[], "x").is_empty());
    }

    #[test]
    fn a_path_inside_a_project_without_a_remote_is_that_project() {
        let known = [p("/srv/notes", "notes"), p("/srv/notes/deep", "deep")];
        let found = project_at(Path::new("/srv/notes/deep/src"), &known).expect("found");
        assert_eq!(found.key, "/srv/notes/deep", "the innermost project");
        assert!(project_at(Path::new("/srv/other"), &known).is_none());
    }
}
