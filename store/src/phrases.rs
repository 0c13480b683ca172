//! `solaria_phrases(fts)`: an FTS5 auxiliary function that tells, for the row a
//! full-text query is on, which of the query's phrases the row holds (bit `i` set
//! for phrase `i`, in the order the phrases are written, up to 63). Search uses it
//! to learn, in one pass over a short list of matches, which of the other query
//! terms each of them also holds (`search::search_table`), instead of evaluating
//! an expensive phrase once per term.
//!
//! FTS5 has no safe binding in rusqlite: registering an auxiliary function takes
//! the connection's `fts5_api` pointer, which is the one `unsafe` part here.

use crate::fts5_api::{failure, named};
use rusqlite::Connection;
use rusqlite::ffi;
use std::ffi::c_int;
use std::ptr;

/// The function's SQL name.
pub const NAME: &str = "solaria_phrases";

/// Registers [`NAME`] on `conn` (once per connection, before any search).
pub fn register(conn: &Connection) -> Result<(), rusqlite::Error> {
    // SAFETY: `conn.handle()` is a live connection owned by `conn` for the whole
    // block; the API pointer lives as long as the connection, and the registered
    // callback has the signature SQLite declares (`fts5_extension_function`).
    #[allow(unsafe_code)]
    unsafe {
        let api = crate::fts5_api::of(conn.handle())?;
        let Some(create) = (*api).xCreateFunction else {
            return Err(failure(
                ffi::SQLITE_ERROR,
                "FTS5 API without xCreateFunction",
            ));
        };
        let rc = create(
            api,
            named(NAME)?.as_ptr(),
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
