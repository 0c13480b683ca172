//! The FTS5 API of a connection: what registering a tokenizer or an auxiliary
//! function takes, since rusqlite has no safe binding for either.

use rusqlite::ffi;
use std::ffi::{c_int, c_void};
use std::ptr;

/// `db`'s FTS5 API table, which lives as long as the connection.
///
/// # Safety
/// `db` must be a live connection, used by no other thread during the call.
#[allow(unsafe_code)]
pub(crate) unsafe fn of(db: *mut ffi::sqlite3) -> Result<*mut ffi::fts5_api, rusqlite::Error> {
    // SAFETY: `SELECT fts5(?1)` with a pointer bound under the type "fts5_api_ptr"
    // is SQLite's documented way to obtain the API: it writes the pointer into
    // `api`, which outlives the statement, and the statement is finalised on every
    // path.
    unsafe {
        let mut api: *mut ffi::fts5_api = ptr::null_mut();
        let mut stmt: *mut ffi::sqlite3_stmt = ptr::null_mut();
        let rc = ffi::sqlite3_prepare_v2(
            db,
            c"SELECT fts5(?1)".as_ptr(),
            -1,
            &mut stmt,
            ptr::null_mut(),
        );
        if rc != ffi::SQLITE_OK {
            return Err(failure(rc, "preparing SELECT fts5(?1)"));
        }
        let rc = ffi::sqlite3_bind_pointer(
            stmt,
            1,
            (&raw mut api).cast::<c_void>(),
            c"fts5_api_ptr".as_ptr(),
            None,
        );
        let step = if rc == ffi::SQLITE_OK {
            ffi::sqlite3_step(stmt)
        } else {
            rc
        };
        ffi::sqlite3_finalize(stmt);
        if step != ffi::SQLITE_ROW || api.is_null() {
            return Err(failure(step, "no FTS5 API on this connection"));
        }
        Ok(api)
    }
}

/// `name` as FTS5 takes a name: a C string.
pub(crate) fn named(name: &str) -> Result<std::ffi::CString, rusqlite::Error> {
    std::ffi::CString::new(name).map_err(|_| failure(ffi::SQLITE_MISUSE, "a name with a NUL"))
}

/// An SQLite error with its code and what was being done.
pub(crate) fn failure(code: c_int, what: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(what.to_string()))
}
