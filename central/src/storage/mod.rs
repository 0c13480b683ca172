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
mod sql;
mod standby;
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
pub use standby::{PROBE_EVERY, StandbyState};
pub use timeline::Timeline;
pub use vector_models::VectorModels;
pub use visibility::{Shared, SharedProject, like_pattern};

use sqlx::pool::PoolConnection;
use sqlx::postgres::PgPoolOptions;
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use standby::Standby;
use std::ops::{Deref, DerefMut};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The embedded migrations of `migrations/central/`. Migrations a newer release
/// applied are let be: during a rolling upgrade the previous release serves beside
/// the new one on the schema the new one migrated, which is why every migration
/// only adds (expand/contract, deploy/central/PRODUCTION.md).
pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate::Migrator {
    ignore_missing: true,
    ..sqlx::migrate!("../migrations/central")
};

/// The databases a service talks to, and how.
#[derive(Debug, Clone, Copy)]
pub struct Databases<'a> {
    /// The primary, reached directly: migrations and the setup at start hold
    /// session locks, which a pooler in transaction mode would lend to others.
    pub primary: &'a str,
    /// The primary through a pooler in transaction mode (PgBouncer), for requests.
    pub pooled: Option<&'a str>,
    /// A streaming standby for the reads that may lag (search, context, timeline,
    /// the feed), and how far behind it may be while it serves them.
    pub standby: Option<(&'a str, Duration)>,
    /// Connections in each request pool.
    pub max_connections: u32,
}

/// A handle on the database (cheap to clone: pools).
#[derive(Debug, Clone)]
pub struct Storage {
    /// The primary, reached directly (migrations, the setup at start).
    setup: PgPool,
    /// The primary as requests reach it: `setup` itself, or through a pooler.
    pool: PgPool,
    /// Whether requests go through a pooler in transaction mode: then each
    /// [`Session`] is a transaction, which keeps its statements on one server.
    through_pooler: bool,
    /// Where reads that may lag go while it keeps up.
    standby: Option<Arc<Standby>>,
    /// Whether search by meaning runs (found by [`Storage::migrate`]).
    meaning: Arc<RwLock<Meaning>>,
    /// The models this service keeps vectors of (the operator's list).
    models: Arc<RwLock<VectorModels>>,
}

/// A connection a request's statements go through, on the primary or the standby.
/// Behind a pooler in transaction mode it is a transaction, committed by
/// [`Session::finish`] (a session dropped unfinished rolls back).
pub(crate) enum Session {
    Direct(PoolConnection<Postgres>),
    InTransaction(Transaction<'static, Postgres>),
}

impl Session {
    async fn open(pool: &PgPool, in_transaction: bool) -> Result<Session, StorageError> {
        Ok(if in_transaction {
            Session::InTransaction(pool.begin().await?)
        } else {
            Session::Direct(pool.acquire().await?)
        })
    }

    /// Keeps what the session wrote.
    pub(crate) async fn finish(self) -> Result<(), StorageError> {
        if let Session::InTransaction(tx) = self {
            tx.commit().await?;
        }
        Ok(())
    }
}

impl Deref for Session {
    type Target = PgConnection;
    fn deref(&self) -> &PgConnection {
        match self {
            Session::Direct(conn) => conn,
            Session::InTransaction(tx) => tx,
        }
    }
}

impl DerefMut for Session {
    fn deref_mut(&mut self) -> &mut PgConnection {
        match self {
            Session::Direct(conn) => conn,
            Session::InTransaction(tx) => tx,
        }
    }
}

fn pool_options(max_connections: u32) -> PgPoolOptions {
    PgPoolOptions::new()
        .max_connections(max_connections)
        .acquire_timeout(Duration::from_secs(10))
}

impl Storage {
    /// Connects a pool of `max_connections` to `url`, for everything.
    pub async fn connect(url: &str, max_connections: u32) -> Result<Storage, StorageError> {
        Storage::connect_to(Databases {
            primary: url,
            pooled: None,
            standby: None,
            max_connections,
        })
        .await
    }

    /// Connects to each of `databases`; with a standby, starts measuring its lag.
    pub async fn connect_to(databases: Databases<'_>) -> Result<Storage, StorageError> {
        let max = databases.max_connections;
        let setup = match databases.pooled {
            // Migrations and the setup at start only.
            Some(_) => pool_options(2).connect(databases.primary).await?,
            None => pool_options(max).connect(databases.primary).await?,
        };
        let pool = match databases.pooled {
            Some(url) => pool_options(max).connect(url).await?,
            None => setup.clone(),
        };
        let mut storage = Storage::from_pool(pool);
        storage.through_pooler = databases.pooled.is_some();
        if let Some((url, max_lag)) = databases.standby {
            // Connected when first probed: a standby that is down does not keep the
            // service from starting, and one that does not answer at once is passed
            // over for the primary.
            let reads = pool_options(max)
                .acquire_timeout(Duration::from_secs(1))
                .connect_lazy(url)?;
            storage.standby = Some(Standby::start(reads, setup.clone(), max_lag));
        }
        storage.setup = setup;
        Ok(storage)
    }

    /// Wraps an existing pool, for everything.
    pub fn from_pool(pool: PgPool) -> Storage {
        Storage {
            setup: pool.clone(),
            pool,
            through_pooler: false,
            standby: None,
            meaning: Arc::new(RwLock::new(Meaning::Off {
                reason: "not prepared: the service prepares it when it starts".into(),
            })),
            models: Arc::new(RwLock::new(VectorModels::default())),
        }
    }

    /// Applies pending migrations, then makes search by meaning ready where the
    /// database can do it ([`Storage::prepare_meaning`]). A standby is refused
    /// before anything is tried: migrations and writes need the primary.
    pub async fn migrate(&self) -> Result<(), StorageError> {
        let in_recovery: bool = sql::query_scalar("SELECT pg_is_in_recovery()")
            .fetch_one(&self.setup)
            .await?;
        if in_recovery {
            return Err(StorageError::Invalid(
                "database_url names a standby (it is in recovery, read-only): point \
                 database_url at the primary, and the standby at read_database_url"
                    .into(),
            ));
        }
        MIGRATOR.run(&self.setup).await?;
        self.prepare_meaning().await?;
        Ok(())
    }

    /// Whether the database answers (for `/readyz`).
    pub async fn ping(&self) -> Result<(), StorageError> {
        let mut session = self.session().await?;
        sql::query("SELECT 1").execute(&mut *session).await?;
        session.finish().await
    }

    /// The request pool on the primary, for this module's submodules and tests.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// The primary reached directly, for migrations and the setup at start.
    fn setup_pool(&self) -> &PgPool {
        &self.setup
    }

    /// A session on the primary: for writes and the reads that must see them.
    pub(crate) async fn session(&self) -> Result<Session, StorageError> {
        Session::open(&self.pool, self.through_pooler).await
    }

    /// A session for a read that may lag: on the standby while it keeps within its
    /// bound, else (or when the standby cannot be reached) on the primary.
    pub(crate) async fn lagging_session(&self) -> Result<Session, StorageError> {
        if let Some(standby) = self.serving_standby() {
            match Session::open(&standby.pool, self.through_pooler).await {
                Ok(session) => return Ok(session),
                Err(e) => {
                    tracing::warn!(error = %e, "the standby refused a read: the primary answers it")
                }
            }
        }
        self.session().await
    }

    /// A transaction for reads that may lag, on the same terms as
    /// [`Storage::lagging_session`].
    async fn lagging_transaction(&self) -> Result<Transaction<'static, Postgres>, StorageError> {
        if let Some(standby) = self.serving_standby() {
            match standby.pool.begin().await {
                Ok(tx) => return Ok(tx),
                Err(e) => {
                    tracing::warn!(error = %e, "the standby refused a read: the primary answers it")
                }
            }
        }
        Ok(self.pool.begin().await?)
    }

    fn serving_standby(&self) -> Option<&Standby> {
        self.standby.as_deref().filter(|s| s.serves_reads())
    }

    /// Closes every pool (each server then sees its sessions end).
    pub async fn close(&self) {
        self.pool.close().await;
        self.setup.close().await;
        if let Some(standby) = &self.standby {
            standby.pool.close().await;
        }
    }

    /// How the standby is doing, when there is one.
    pub fn standby_state(&self) -> Option<StandbyState> {
        self.standby.as_ref().map(|s| s.state())
    }
}

/// A read-only transaction on one snapshot (for reads that span tables), on the
/// standby while it keeps within its bound.
async fn read_snapshot(storage: &Storage) -> Result<Transaction<'static, Postgres>, StorageError> {
    let mut tx = storage.lagging_transaction().await?;
    sql::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
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
