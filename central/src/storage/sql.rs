//! How every statement of the storage is sent: unnamed, prepared afresh each time.
//!
//! sqlx names each statement and keeps it prepared on the connection. Behind a pooler
//! in transaction mode (PgBouncer 1.18, Debian 12's) a connection is lent a different
//! server after every transaction, where that name means nothing or another
//! statement; an unnamed statement lives only until the next one, inside the
//! transaction that sends it ([`super::Session`] gives every request one). The cost
//! is a parse per statement and a round trip more, not yet measured on its own
//! (every shape in docs/BENCHMARKS.md runs with it).

use sqlx::postgres::{PgArguments, PgRow};
use sqlx::query::{Query, QueryAs, QueryScalar};
use sqlx::{FromRow, Postgres, SqlSafeStr};

/// `sqlx::query`, sent unnamed.
pub fn query<'q>(sql: impl SqlSafeStr) -> Query<'q, Postgres, PgArguments> {
    sqlx::query(sql).persistent(false)
}

/// `sqlx::query_as`, sent unnamed.
pub fn query_as<'q, O>(sql: impl SqlSafeStr) -> QueryAs<'q, Postgres, O, PgArguments>
where
    O: for<'r> FromRow<'r, PgRow>,
{
    sqlx::query_as(sql).persistent(false)
}

/// `sqlx::query_scalar`, sent unnamed.
pub fn query_scalar<'q, O>(sql: impl SqlSafeStr) -> QueryScalar<'q, Postgres, O, PgArguments>
where
    (O,): for<'r> FromRow<'r, PgRow>,
{
    sqlx::query_scalar(sql).persistent(false)
}
