//! The context SessionStart injects for a project (`solaria context`,
//! `memory_get_context`, `/api/context`), and which project a name means.

use super::{OpError, OpResult};
use crate::app::App;
use crate::context;
use crate::store::Store;
use serde::Serialize;
use solaria_shared::{Project, UnixMillis};

/// The context of one project.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectContext {
    pub project: Project,
    /// What SessionStart would inject; `None` when there is nothing to say.
    pub context: Option<String>,
    /// About how many tokens `context` costs.
    pub tokens: usize,
    /// What was chosen and what was left out, one sentence each.
    pub explanation: Vec<String>,
}

impl ProjectContext {
    /// The context, or what an empty memory says.
    pub fn text(&self) -> String {
        match &self.context {
            Some(text) => text.clone(),
            None => solaria_shared::render::context::nothing_yet(&self.project),
        }
    }
}

/// The project a caller named (`ops::project::resolve`: the most recent one
/// when a name is shared), or the current directory's.
pub fn project(app: &App, store: &Store, name: Option<&str>) -> OpResult<Project> {
    match name {
        None => Ok(app.current_project()),
        Some(name) => super::project::resolve(store, name)?
            .into_iter()
            .next()
            .ok_or_else(|| OpError::UnknownProject {
                name: name.chars().take(80).collect(),
                suggestions: Vec::new(),
            }),
    }
}

/// The context of the named project (or the current directory's).
pub fn context_of(app: &App, project_name: Option<&str>) -> OpResult<ProjectContext> {
    let store = app.store()?;
    let project = project(app, &store, project_name)?;
    // The current directory's branch comes first when it is this project's.
    let branch = std::env::current_dir()
        .ok()
        .filter(|cwd| crate::project::detect(cwd).key == project.key)
        .and_then(|cwd| crate::project::branch(&cwd));
    let built = context::build(
        &store,
        (&project, branch.as_deref()),
        &app.config.context,
        UnixMillis::now(),
    )?;
    Ok(ProjectContext {
        tokens: built.text.as_deref().map_or(0, context::estimate_tokens),
        project,
        context: built.text,
        explanation: built.explanation,
    })
}
