//! `solaria_phrases(fts)`: an FTS5 auxiliary function that tells, for the row a
//! full-text query is on, which of the query's phrases the row holds (bit `i` set
//! for phrase `i`, in the order the phrases are written, up to 63). Search uses it
//! to learn, in one pass over a short list of matches, which of the other query
//! terms each of them also holds (`search::search_table`), instead of evaluating
//! an expensive phrase once per term.
//!
//! FTS5 has no safe binding in rusqlite: registering an auxiliary function takes
//! the connection's `fts5_api` pointer, which is the one `unsafe` part here.

use rusqlite::Connection;
use rusqlite::ffi;
use std::ffi::{c_int, c_void};
use std::ptr;

/// The function's SQL name.
pub const NAME: &str = "solaria_phrases";

/// Registers [`NAME`] on `conn` (once per connection, before any search).
pub fn register(conn: &Connection) -> Result<(), rusqlite::Error> {
    // SAFETY: `conn.handle()` is a live connection owned by `conn` for the whole
    // block. `SELECT fts5(?1)` with a pointer bound under the type "fts5_api_ptr"
    // is SQLite's documented way to obtain the FTS5 API (it writes the pointer into
    // `api`, which outlives the statement); the statement is finalised on every
    // path. The API pointer lives as long as the connection, and the registered
    // callback has the signature SQLite declares (`fts5_extension_function`).
    #[allow(unsafe_code)]
    unsafe {
        let db = conn.handle();
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
        let Some(create) = (*api).xCreateFunction else {
            return Err(failure(
                ffi::SQLITE_ERROR,
                "FTS5 API without xCreateFunction",
            ));
        };
        let rc = create(
            api,
            c"solaria_phrases".as_ptr(),
            ptr::null_mut(),
            Some(phrases_held),
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(failure(rc, "registering solaria_phrases"));
        }
    }
    Ok(())
}

fn failure(code: c_int, what: &str) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(ffi::Error::new(code), Some(what.to_string()))
}

/// The callback: a bitmask of the phrases with at least one instance in this row.
#[allow(unsafe_code)]
unsafe extern "C" fn phrases_held(
    api: *const ffi::Fts5ExtensionApi,
    fts: *mut ffi::Fts5Context,
    ctx: *mut ffi::sqlite3_context,
    _argc: c_int,
    _argv: *mut *mut ffi::sqlite3_value,
) {
    // SAFETY: SQLite calls this with a valid API table and context for the row
    // being returned; `iter`, `column` and `offset` are locals it writes into.
    unsafe {
        let api = &*api;
        let (Some(count), Some(first)) = (api.xPhraseCount, api.xPhraseFirst) else {
            ffi::sqlite3_result_null(ctx);
            return;
        };
        let mut bits: i64 = 0;
        for phrase in 0..count(fts).min(63) {
            let mut iter = ffi::Fts5PhraseIter {
                a: ptr::null(),
                b: ptr::null(),
            };
            let (mut column, mut offset) = (-1, -1);
            let rc = first(fts, phrase, &mut iter, &mut column, &mut offset);
            if rc == ffi::SQLITE_OK && column >= 0 {
                bits |= 1 << phrase;
            }
        }
        ffi::sqlite3_result_int64(ctx, bits);
    }
}
