//! Names to ids within one account: a project by its key or name, a machine by its
//! id or name, and the names of machines (to label what they wrote).

use super::Storage;
use super::base::{AccountId, StorageError, Viewer};
use super::sql;
use super::visibility::visible_sql;
use solaria_shared::render::person_handle;
use solaria_shared::wire::MachineName;
use solaria_shared::{MachineId, Project};
use sqlx::{AssertSqlSafe, Row};
use std::collections::HashMap;
use uuid::Uuid;

impl Storage {
    /// The live projects `viewer` sees named by `key_or_name`: the project with that
    /// key if there is one, else every project with that name (newest name per key).
    pub async fn resolve_project(
        &self,
        viewer: Viewer,
        key_or_name: &str,
    ) -> Result<Vec<Project>, StorageError> {
        let visible = visible_sql("", "$1", "$3");
        let by_key: Option<String> = sql::query_scalar(AssertSqlSafe(format!(
            "SELECT project_name FROM memory_sessions
             WHERE account_id = $1 AND project_key = $2 AND NOT deleted AND {visible}
             ORDER BY started_at DESC LIMIT 1"
        )))
        .bind(viewer.account.0)
        .bind(key_or_name)
        .bind(viewer.person.0)
        .fetch_optional(&mut *self.lagging_session().await?)
        .await?;
        // Observations whose session record has not arrived still name a project; so
        // does knowledge, which may be all a project holds (decisions recorded by hand).
        let mut by_key = by_key;
        for table in ["memory_observations_remote", "memory_knowledge"] {
            if by_key.is_some() {
                break;
            }
            by_key = sql::query_scalar(AssertSqlSafe(format!(
                "SELECT project_name FROM {table}
                 WHERE account_id = $1 AND project_key = $2 AND NOT deleted AND {visible}
                 ORDER BY created_at DESC LIMIT 1"
            )))
            .bind(viewer.account.0)
            .bind(key_or_name)
            .bind(viewer.person.0)
            .fetch_optional(&mut *self.lagging_session().await?)
            .await?;
        }
        if let Some(name) = by_key {
            return Ok(vec![Project {
                key: key_or_name.to_string(),
                name,
            }]);
        }
        let rows = sql::query(AssertSqlSafe(format!(
            "SELECT DISTINCT ON (project_key) project_key, project_name FROM (
                 SELECT project_key, project_name, started_at AS at FROM memory_sessions
                 WHERE account_id = $1 AND project_name = $2 AND NOT deleted AND {visible}
                 UNION ALL
                 SELECT project_key, project_name, created_at AS at FROM memory_knowledge
                 WHERE account_id = $1 AND project_name = $2 AND NOT deleted AND {visible}
             ) AS named
             ORDER BY project_key, at DESC"
        )))
        .bind(viewer.account.0)
        .bind(key_or_name)
        .bind(viewer.person.0)
        .fetch_all(&mut *self.lagging_session().await?)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(Project {
                    key: r.try_get("project_key")?,
                    name: r.try_get("project_name")?,
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }

    /// The account's machines with this id or name (revoked ones included: their
    /// records stay).
    pub async fn resolve_machine(
        &self,
        account: AccountId,
        id_or_name: &str,
    ) -> Result<Vec<MachineId>, StorageError> {
        let id = Uuid::parse_str(id_or_name.trim()).ok();
        let ids: Vec<Uuid> = sql::query_scalar(
            "SELECT id FROM memory_machines WHERE account_id = $1 AND (id = $2 OR machine_name = $3)",
        )
        .bind(account.0)
        .bind(id)
        .bind(id_or_name)
        .fetch_all(&mut *self.session().await?)
        .await?;
        Ok(ids.into_iter().map(MachineId::from_uuid).collect())
    }

    /// The account's machines among `ids`, sorted by id, as `viewer` reads them:
    /// their names, and for a teammate's machine whose it is.
    pub async fn machine_names(
        &self,
        viewer: Viewer,
        ids: &[MachineId],
    ) -> Result<Vec<MachineName>, StorageError> {
        let mut ids: Vec<Uuid> = ids.iter().map(|m| *m.as_uuid()).collect();
        ids.sort_unstable();
        ids.dedup();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = sql::query(
            "SELECT m.id, m.machine_name, m.person_id = $3 AS own, p.email
             FROM memory_machines m JOIN people p ON p.account_id = m.account_id AND p.id = m.person_id
             WHERE m.account_id = $1 AND m.id = ANY($2) ORDER BY m.id",
        )
        .bind(viewer.account.0)
        .bind(&ids)
        .bind(viewer.person.0)
        .fetch_all(&mut *self.session().await?)
        .await?;
        rows.iter()
            .map(|r| {
                let email: String = r.try_get("email")?;
                let own: bool = r.try_get("own")?;
                Ok(MachineName {
                    id: MachineId::from_uuid(r.try_get("id")?),
                    name: r.try_get("machine_name")?,
                    person: (!own).then(|| person_handle(&email).to_string()),
                })
            })
            .collect::<Result<_, sqlx::Error>>()
            .map_err(StorageError::from)
    }

    /// [`Storage::machine_names`] as the renderer looks them up: by id.
    pub async fn machine_labels(
        &self,
        viewer: Viewer,
        ids: &[MachineId],
    ) -> Result<HashMap<MachineId, MachineName>, StorageError> {
        Ok(self
            .machine_names(viewer, ids)
            .await?
            .into_iter()
            .map(|m| (m.id, m))
            .collect())
    }
}
