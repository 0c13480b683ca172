//! PostgreSQL storage: the only place SQL lives (beside `migrations/central/`).
//! Every query names its account; none can cross from one account to another.
//!
//! The words every file here shares (the error, account, person, role, viewer, the
//! record tables' names, the audit line) are in `base`, which imports none of them;
//! who sees what is `visibility`, on top of it.

mod accounts;
mod base;
mod batch;
mod context;
mod erase;
mod feed;
mod knowledge;
mod meaning;
mod names;
mod people;
mod records;
mod rows;
mod search;
mod timeline;
mod vector_models;
mod vectors;
mod visibility;

pub use accounts::{EnrollmentError, Identity, MachineInfo, MachineStatus};
pub use base::{AccountId, PersonId, Role, StorageError, Viewer};
pub use batch::SyncKind;
pub use context::{ContextSession, RecentEvent};
pub use erase::{AccountErasure, ErasedCounts, ErasureTarget, Reach};
pub use feed::{FeedTypes, changes};
pub use knowledge::{DecisionQuery, IterationQuery, IterationRecords};
pub use meaning::{EF_SEARCH, HNSW_EF_CONSTRUCTION, HNSW_M, Meaning};
pub use people::{AuditEntry, PersonInfo, Removal};
pub use search::SearchRequest;
pub use timeline::Timeline;
pub use vector_models::VectorModels;
pub use visibility::{Shared, SharedProject, like_pattern};

use sqlx::postgres::PgPoolOptions;
use sqlx::{PgPool, Postgres, Transaction};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The embedded migrations of `migrations/central/`.
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/central");

/// A handle on the database (cheap to clone: a pool).
#[derive(Debug, Clone)]
pub struct Storage {
    pool: PgPool,
    /// Whether search by meaning runs (found by [`Storage::migrate`]).
    meaning: Arc<RwLock<Meaning>>,
    /// The models this service keeps vectors of (the operator's list).
    models: Arc<RwLock<VectorModels>>,
}

impl Storage {
    /// Connects a pool of `max_connections` to `url`.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Storage, StorageError> {
        let pool = PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(10))
            .connect(url)
            .await?;
        Ok(Storage::from_pool(pool))
    }

    /// Wraps an existing pool.
    pub fn from_pool(pool: PgPool) -> Storage {
        Storage {
            pool,
            meaning: Arc::new(RwLock::new(Meaning::Off {
                reason: "not prepared: the service prepares it when it starts".into(),
            })),
            models: Arc::new(RwLock::new(VectorModels::default())),
        }
    }

    /// Applies pending migrations, then makes search by meaning ready where the
    /// database can do it ([`Storage::prepare_meaning`]).
    pub async fn migrate(&self) -> Result<(), StorageError> {
        MIGRATOR.run(&self.pool).await?;
        self.prepare_meaning().await?;
        Ok(())
    }

    /// Whether the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StorageError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    /// The pool, for this module's submodules.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

/// A read-only transaction on one snapshot (for reads that span tables).
async fn read_snapshot(storage: &Storage) -> Result<Transaction<'static, Postgres>, StorageError> {
    let mut tx = storage.pool().begin().await?;
    sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}

/// `AND column = one key` (index-ordered) or `= ANY(keys)`; `param` is an array
/// parameter.
fn key_condition(column: &str, param: &str, keys: &[String]) -> String {
    if keys.len() == 1 {
        format!(" AND {column} = ({param})[1]")
    } else {
        format!(" AND {column} = ANY({param})")
    }
}
