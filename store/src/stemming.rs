//! `solaria_stem`: the tokenizer of the store's full-text indexes. It wraps another
//! FTS5 tokenizer (`unicode61 remove_diacritics 2`, which splits and folds) and
//! gives each of its words by the stems `solaria_shared::words::stems` decides: the
//! English stem in the word's place and, where one counts, the Spanish stem beside
//! it as a colocated token, in documents and queries alike. A search then meets a
//! word in any English or Spanish form ("caducan" finds "caducidad"), where FTS5's
//! own `porter` knew English only, and recall's words and the index agree on what
//! one word is.
//!
//! An index made with it can be read only by a connection that has it: `Store::open`
//! registers it, as must anything else that opens a store's file
//! (`crate::register_sql`).

use crate::fts5_api::{self, failure, named};
use rusqlite::{Connection, ffi};
use solaria_shared::words;
use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_char, c_int, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;
use std::rc::Rc;

/// The tokenizer's name in a `tokenize = '…'` option.
pub const NAME: &str = "solaria_stem";

/// The `tokenize` option of the store's full-text indexes: this tokenizer over
/// `unicode61`, accents folded. Migration 0020 writes it out (a test holds the two
/// together).
pub const TOKENIZE: &str = "solaria_stem unicode61 remove_diacritics 2";

/// Registers [`NAME`] with `conn` (once per connection, before its indexes are
/// read or written). Its FTS5 API is the tokenizer's user data, with which it
/// finds the tokenizer it wraps.
pub fn register(conn: &Connection) -> Result<(), rusqlite::Error> {
    // SAFETY: `conn.handle()` is live for the call; FTS5 copies `methods`, and the
    // API pointer handed over as user data lives as long as the connection, as
    // the tokenizer does.
    #[allow(unsafe_code)]
    unsafe {
        let api = fts5_api::of(conn.handle())?;
        let Some(create) = (*api).xCreateTokenizer else {
            return Err(failure(
                ffi::SQLITE_ERROR,
                "FTS5 API without xCreateTokenizer",
            ));
        };
        let mut methods = ffi::fts5_tokenizer {
            xCreate: Some(create_stemmer),
            xDelete: Some(delete_stemmer),
            xTokenize: Some(tokenize),
        };
        let rc = create(
            api,
            named(NAME)?.as_ptr(),
            api.cast::<c_void>(),
            &mut methods,
            None,
        );
        if rc != ffi::SQLITE_OK {
            return Err(failure(rc, "registering the solaria_stem tokenizer"));
        }
    }
    Ok(())
}

/// One instance: the wrapped tokenizer's methods and its own instance.
struct Stemmer {
    parent: ffi::fts5_tokenizer,
    instance: *mut ffi::Fts5Tokenizer,
}

/// `xCreate`: the first argument names the tokenizer to wrap (`unicode61` when
/// none is named); the rest are its own.
#[allow(unsafe_code)]
unsafe extern "C" fn create_stemmer(
    api: *mut c_void,
    args: *mut *const c_char,
    count: c_int,
    out: *mut *mut ffi::Fts5Tokenizer,
) -> c_int {
    // SAFETY: `api` is the FTS5 API registered as user data; `args` holds `count`
    // strings; `out` is where FTS5 takes the new instance from.
    unsafe {
        let api = api.cast::<ffi::fts5_api>();
        let args: &[*const c_char] = if count > 0 && !args.is_null() {
            std::slice::from_raw_parts(args, count as usize)
        } else {
            &[]
        };
        let (parent_name, parent_args) = match args.split_first() {
            Some((name, rest)) => (*name, rest),
            None => (c"unicode61".as_ptr(), &[][..]),
        };
        let Some(find) = (*api).xFindTokenizer else {
            return ffi::SQLITE_ERROR;
        };
        let mut parent_data: *mut c_void = ptr::null_mut();
        let mut parent = ffi::fts5_tokenizer {
            xCreate: None,
            xDelete: None,
            xTokenize: None,
        };
        let rc = find(api, parent_name, &mut parent_data, &mut parent);
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        let (Some(create), Some(_), Some(_)) = (parent.xCreate, parent.xDelete, parent.xTokenize)
        else {
            return ffi::SQLITE_ERROR;
        };
        let mut instance: *mut ffi::Fts5Tokenizer = ptr::null_mut();
        let rc = create(
            parent_data,
            parent_args.as_ptr().cast_mut(),
            parent_args.len() as c_int,
            &mut instance,
        );
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        *out = Box::into_raw(Box::new(Stemmer { parent, instance })).cast();
        ffi::SQLITE_OK
    }
}

/// `xDelete`: frees an instance and the wrapped one.
#[allow(unsafe_code)]
unsafe extern "C" fn delete_stemmer(stemmer: *mut ffi::Fts5Tokenizer) {
    if stemmer.is_null() {
        return;
    }
    // SAFETY: `stemmer` came from `Box::into_raw` in `create_stemmer`, and FTS5
    // deletes each instance once.
    unsafe {
        let stemmer = Box::from_raw(stemmer.cast::<Stemmer>());
        if let Some(delete) = stemmer.parent.xDelete {
            delete(stemmer.instance);
        }
    }
}

/// Where the wrapped tokenizer's words go: FTS5's own callback and its context.
struct Forward {
    context: *mut c_void,
    emit: unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int,
}

/// `xTokenize`: the wrapped tokenizer splits, [`each_word`] stems.
#[allow(unsafe_code)]
unsafe extern "C" fn tokenize(
    stemmer: *mut ffi::Fts5Tokenizer,
    context: *mut c_void,
    flags: c_int,
    text: *const c_char,
    length: c_int,
    emit: Option<
        unsafe extern "C" fn(*mut c_void, c_int, *const c_char, c_int, c_int, c_int) -> c_int,
    >,
) -> c_int {
    // SAFETY: `stemmer` is an instance from `create_stemmer`; `forward` outlives
    // the wrapped call, which hands it back to `each_word` only.
    unsafe {
        let stemmer = &*stemmer.cast::<Stemmer>();
        let (Some(emit), Some(split)) = (emit, stemmer.parent.xTokenize) else {
            return ffi::SQLITE_ERROR;
        };
        let mut forward = Forward { context, emit };
        split(
            stemmer.instance,
            (&raw mut forward).cast::<c_void>(),
            flags,
            text,
            length,
            Some(each_word),
        )
    }
}

/// A word's stems as the index takes them (`words::stems`).
struct Known {
    english: Box<str>,
    spanish: Option<Box<str>>,
}

/// How many words' stems a thread keeps. The same words come back in every tool
/// call and output, and two Snowball stemmers cost many lookups: without this,
/// indexing took about three times as long as with `porter`.
const KNOWN_WORDS: usize = 16_384;

thread_local! {
    static KNOWN: RefCell<HashMap<Box<str>, Rc<Known>>> = RefCell::new(HashMap::new());
}

/// `word`'s stems, from this thread's words already seen when it is one of them.
fn stems_of(word: &str) -> Rc<Known> {
    KNOWN.with(|known| {
        if let Some(seen) = known.borrow().get(word) {
            return Rc::clone(seen);
        }
        let stems = words::stems(word);
        let fresh = Rc::new(Known {
            english: stems.english.into(),
            spanish: stems.spanish.map(Into::into),
        });
        let mut known = known.borrow_mut();
        if known.len() >= KNOWN_WORDS {
            known.clear();
        }
        known.insert(word.into(), Rc::clone(&fresh));
        fresh
    })
}

/// One word from the wrapped tokenizer: its English stem in its place and its
/// Spanish stem, when it has one, colocated. A word that is not UTF-8 goes on as
/// it came.
#[allow(unsafe_code)]
unsafe extern "C" fn each_word(
    forward: *mut c_void,
    flags: c_int,
    token: *const c_char,
    length: c_int,
    start: c_int,
    end: c_int,
) -> c_int {
    // SAFETY: `forward` is the `Forward` of `tokenize`, and `token` holds `length`
    // bytes for the duration of the call.
    unsafe {
        let forward = &*forward.cast::<Forward>();
        let pass = || (forward.emit)(forward.context, flags, token, length, start, end);
        if token.is_null() || length <= 0 {
            return pass();
        }
        let bytes = std::slice::from_raw_parts(token.cast::<u8>(), length as usize);
        let Ok(word) = std::str::from_utf8(bytes) else {
            return pass();
        };
        let Ok(stems) = catch_unwind(AssertUnwindSafe(|| stems_of(word))) else {
            return pass();
        };
        let english = stems.english.as_bytes();
        let rc = (forward.emit)(
            forward.context,
            flags,
            english.as_ptr().cast(),
            english.len() as c_int,
            start,
            end,
        );
        match &stems.spanish {
            Some(spanish) if rc == ffi::SQLITE_OK => (forward.emit)(
                forward.context,
                flags | ffi::FTS5_TOKEN_COLOCATED,
                spanish.as_ptr().cast(),
                spanish.len() as c_int,
                start,
                end,
            ),
            _ => rc,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An index of `texts` as the store makes one (contentless), or keeping its
    /// texts (for `highlight`).
    fn index(texts: &[&str], contentless: bool) -> Connection {
        let conn = Connection::open_in_memory().expect("open");
        register(&conn).expect("the tokenizer");
        let content = if contentless {
            "content = '', contentless_delete = 1,"
        } else {
            ""
        };
        conn.execute_batch(&format!(
            "CREATE VIRTUAL TABLE t USING fts5 (body, {content} tokenize = '{TOKENIZE}')"
        ))
        .expect("an index with the tokenizer");
        for (i, text) in texts.iter().enumerate() {
            conn.execute(
                "INSERT INTO t (rowid, body) VALUES (?1, ?2)",
                rusqlite::params![i as i64, text],
            )
            .expect("insert");
        }
        conn
    }

    fn found(conn: &Connection, query: &str) -> Vec<i64> {
        let mut stmt = conn
            .prepare("SELECT rowid FROM t WHERE t MATCH ?1 ORDER BY rowid")
            .expect("prepare");
        stmt.query_map([query], |r| r.get(0))
            .expect("query")
            .collect::<Result<_, _>>()
            .expect("rows")
    }

    #[test]
    fn the_store_indexes_with_this_tokenizer() {
        assert!(TOKENIZE.starts_with(NAME));
        let migration = include_str!("../migrations/0020_stemmed_words.sql");
        assert_eq!(
            migration.matches(TOKENIZE).count(),
            3,
            "each of the three indexes"
        );
    }

    #[test]
    fn a_word_is_found_in_its_english_and_spanish_forms() {
        let conn = index(
            &[
                "los tokens de refresco caducan a los siete días",
                "Refreshing tokens on every renewal",
                "the caducidad of a session",
                "data lives in the warehouse",
            ],
            true,
        );
        assert_eq!(found(&conn, "caducidad"), vec![0, 2]);
        assert_eq!(found(&conn, "token"), vec![0, 1]);
        assert_eq!(found(&conn, "refreshes"), vec![1]);
        assert_eq!(found(&conn, "\"refrescos caducaron\""), vec![0]);
        assert_eq!(found(&conn, "DÍAS"), vec![0]);
        // Spanish rules do not join English words they would cut short.
        assert_eq!(found(&conn, "date"), Vec::<i64>::new());
        assert_eq!(found(&conn, "data"), vec![3]);
    }

    #[test]
    fn deleting_a_row_takes_every_stem_with_it() {
        let conn = index(&["las pruebas fallan", "a plain note"], true);
        conn.execute("DELETE FROM t WHERE rowid = 0", [])
            .expect("delete");
        assert_eq!(found(&conn, "falla"), Vec::<i64>::new());
        assert_eq!(found(&conn, "notes"), vec![1]);
    }

    #[test]
    fn highlight_marks_the_word_as_written() {
        let conn = index(&["Las pruebas fallan en CI"], false);
        let marked: String = conn
            .query_row(
                "SELECT highlight(t, 0, '[', ']') FROM t WHERE t MATCH 'prueba falla'",
                [],
                |r| r.get(0),
            )
            .expect("highlight");
        assert_eq!(marked, "Las [pruebas] [fallan] en CI");
    }

    #[test]
    fn a_text_that_is_not_utf8_is_indexed_and_its_words_found() {
        let conn = index(&["a plain note"], true);
        // Bytes no UTF-8 decoder accepts, between two words, stored as text.
        conn.execute(
            "INSERT INTO t (rowid, body) VALUES (7, CAST(x'746573747320fffec3206661696c6564' AS TEXT))",
            [],
        )
        .expect("indexed whatever its bytes");
        assert_eq!(found(&conn, "test"), vec![7]);
        assert_eq!(found(&conn, "failing"), vec![7]);
        assert_eq!(found(&conn, "notes"), vec![0]);
        conn.execute("DELETE FROM t WHERE rowid = 7", [])
            .expect("deleted with its words");
        assert_eq!(found(&conn, "test"), Vec::<i64>::new());
    }

    /// What [`each_word`] hands FTS5 for one word: each token's bytes and whether
    /// it is colocated with the one before.
    #[allow(unsafe_code)]
    fn handed(word: &[u8]) -> Vec<(Vec<u8>, bool)> {
        unsafe extern "C" fn collect(
            context: *mut c_void,
            flags: c_int,
            token: *const c_char,
            length: c_int,
            _start: c_int,
            _end: c_int,
        ) -> c_int {
            // SAFETY: `context` is the test's vector; `token` holds `length` bytes.
            unsafe {
                let out = &mut *context.cast::<Vec<(Vec<u8>, bool)>>();
                let bytes = std::slice::from_raw_parts(token.cast::<u8>(), length as usize);
                out.push((bytes.to_vec(), flags & ffi::FTS5_TOKEN_COLOCATED != 0));
            }
            ffi::SQLITE_OK
        }
        let mut out: Vec<(Vec<u8>, bool)> = Vec::new();
        let mut forward = Forward {
            context: (&raw mut out).cast::<c_void>(),
            emit: collect,
        };
        // SAFETY: `forward` and `word` outlive the call, which reads `word.len()` bytes.
        let rc = unsafe {
            each_word(
                (&raw mut forward).cast::<c_void>(),
                0,
                word.as_ptr().cast(),
                word.len() as c_int,
                0,
                word.len() as c_int,
            )
        };
        assert_eq!(rc, ffi::SQLITE_OK);
        out
    }

    #[test]
    fn a_word_goes_in_by_its_stems_and_bytes_that_are_no_word_as_they_came() {
        assert_eq!(
            handed(b"caducan"),
            vec![(b"caducan".to_vec(), false), (b"caduc".to_vec(), true)]
        );
        assert_eq!(handed(b"tokens"), vec![(b"token".to_vec(), false)]);
        // Not UTF-8: no stem is guessed, the bytes are indexed as they are.
        assert_eq!(
            handed(b"caduc\xff\xfe"),
            vec![(b"caduc\xff\xfe".to_vec(), false)]
        );
    }
}
