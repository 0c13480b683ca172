//! Right to erasure over HTTP: `DELETE` a record, a session, a project, a
//! machine's data or the whole account of the caller. A person erases what they
//! wrote; an admin also what others wrote in shared projects, and the account
//! (`storage::Reach`).
//!
//! Records become tombstones (content erased, a newer version in the change feed) so
//! that the deletion reaches every edge; the answer counts them per kind:
//! `{"sessions": 1, "observations": 12, "summaries": 1, "knowledge": 0}` (a session's
//! knowledge is not erased with it: it outlives the conversation). Deleting the account removes
//! it outright and answers what it held. Anything the caller's account does not hold
//! answers 404, the same whether it is unknown or another account's.

use super::error::ApiError;
use super::metrics;
use super::state::AppState;
use crate::ops::Caller;
use crate::storage::{AccountErasure, ErasedCounts, ErasureTarget, Reach, Role, StorageError};
use axum::Json;
use axum::extract::{Path, State};
use solaria_shared::MachineId;
use uuid::Uuid;

fn parse_id(text: &str, what: &str) -> Result<Uuid, ApiError> {
    text.trim().parse().map_err(|_| {
        ApiError::bad_request(format!("`{text}` is not a {what} id: {what} ids are UUIDs"))
    })
}

async fn erase(
    state: &AppState,
    caller: Caller,
    target: ErasureTarget,
    missing: String,
) -> Result<Json<ErasedCounts>, ApiError> {
    let counts = state
        .storage
        .erase(
            caller.account,
            caller.machine,
            &target,
            Reach::Person {
                person: caller.person,
                role: caller.role,
            },
        )
        .await?
        .ok_or_else(|| ApiError::not_found(missing))?;
    metrics::count_erased(&counts);
    tracing::info!(
        account = %caller.account,
        machine = %caller.machine,
        target = ?target,
        sessions = counts.sessions,
        observations = counts.observations,
        summaries = counts.summaries,
        knowledge = counts.knowledge,
        "erased"
    );
    Ok(Json(counts))
}

/// `DELETE /memory/records/{id}`: one record of any kind (a session's id erases the
/// session with its observations and summary).
pub async fn erase_record(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ErasedCounts>, ApiError> {
    let id = parse_id(&id, "record")?;
    let missing = format!("no record {id} in this account");
    erase(&state, caller, ErasureTarget::Record(id), missing).await
}

/// `DELETE /memory/sessions/{id}`: a session, its observations and its summary (not
/// the knowledge recorded in it).
pub async fn erase_session(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ErasedCounts>, ApiError> {
    let id = parse_id(&id, "session")?;
    let missing = format!("no session {id} in this account");
    erase(&state, caller, ErasureTarget::Session(id), missing).await
}

/// `DELETE /memory/projects/{project}`: every record of a project, by key (URL-encoded:
/// `github.com%2Facme%2Fapi`) or by name.
pub async fn erase_project(
    State(state): State<AppState>,
    caller: Caller,
    Path(project): Path<String>,
) -> Result<Json<ErasedCounts>, ApiError> {
    let project = project.trim().to_string();
    if project.is_empty() {
        return Err(ApiError::bad_request(
            "name the project by its key or its name",
        ));
    }
    let missing =
        format!("no project {project:?} in this account (give its key, URL-encoded, or its name)");
    erase(&state, caller, ErasureTarget::Project(project), missing).await
}

/// `DELETE /memory/machines/{id}/data`: every record a machine of the account wrote
/// last. The machine stays enrolled (revoking it is the operator's `machines revoke`).
pub async fn erase_machine(
    State(state): State<AppState>,
    caller: Caller,
    Path(id): Path<String>,
) -> Result<Json<ErasedCounts>, ApiError> {
    let id = MachineId::from_uuid(parse_id(&id, "machine")?);
    let missing = format!("no machine {id} in this account");
    erase(&state, caller, ErasureTarget::Machine(id), missing).await
}

/// `DELETE /memory/account`: the caller's whole account — records, machines, tokens,
/// logs. Every machine of it is refused from the next request on.
pub async fn erase_account(
    State(state): State<AppState>,
    caller: Caller,
) -> Result<Json<AccountErasure>, ApiError> {
    if caller.role != Role::Admin {
        return Err(StorageError::NotAllowed(
            "erasing the whole account is an admin's act: a member erases their own records \
             (by record, session, project or machine); ask an admin of the account"
                .into(),
        )
        .into());
    }
    let held = state.storage.erase_account(caller.account).await?;
    metrics::count_erased(&ErasedCounts {
        sessions: held.sessions,
        observations: held.observations,
        summaries: held.summaries,
        knowledge: held.knowledge,
    });
    tracing::info!(
        account = %caller.account,
        machine = %caller.machine,
        sessions = held.sessions,
        observations = held.observations,
        summaries = held.summaries,
        knowledge = held.knowledge,
        machines = held.machines,
        "account erased"
    );
    Ok(Json(held))
}
