//! Semantic search on the edge: where the model is, the embedding pass that fills
//! the vector tables (run by the daemon, never by a hook), and which search mode
//! is live.

use crate::config::{Config, Paths};
use crate::store::hybrid::{self, SearchMode};
use crate::store::search::{Hit, SearchQuery};
use crate::store::vectors::{self, EmbedBound, IndexModel};
use crate::store::{Store, StoreError};
use solaria_embed::{EmbedError, Embedder, ModelFiles, ModelStatus};
use solaria_shared::UnixMillis;
use solaria_shared::wire::QueryVector;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Errors of the semantic layer.
#[derive(Debug, thiserror::Error)]
pub enum SemanticError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
}

/// The model directory this configuration uses.
pub fn model_dir(config: &Config, paths: &Paths) -> PathBuf {
    config
        .search
        .model_dir
        .clone()
        .unwrap_or_else(|| paths.default_model_dir())
}

/// Whether the model directory is complete.
pub fn model_present(config: &Config, paths: &Paths) -> bool {
    matches!(
        ModelFiles::new(model_dir(config, paths)).status(),
        ModelStatus::Present { .. }
    )
}

/// Loads the model if it is installed (`Ok(None)` if not).
pub fn load_model(config: &Config, paths: &Paths) -> Result<Option<Embedder>, EmbedError> {
    if !model_present(config, paths) {
        return Ok(None);
    }
    let mut model = Embedder::load(&model_dir(config, paths))?;
    model.set_max_tokens(config.search.max_tokens)?;
    Ok(Some(model))
}

/// What one embedding pass did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PassReport {
    /// Vectors made (new or replacing a changed record's).
    pub embedded: usize,
    /// Vectors removed (records gone, erased or past the embeddings' retention).
    pub removed: usize,
    /// Records still queued when the pass stopped.
    pub remaining: i64,
    /// Whether the stored vectors were discarded because the model changed.
    pub rebuilt: bool,
}

/// Bounds of one pass.
#[derive(Debug, Clone, Copy)]
pub struct PassOptions {
    /// Records per model call.
    pub batch: usize,
    /// Which records get a vector made.
    pub bound: EmbedBound,
    /// Stop after this long (the queue is resumed by the next pass).
    pub budget: Duration,
}

/// The daemon's background pass under `config`: its batch and bound, 20 s at a
/// time (the next tick resumes the queue), so a hook never waits behind it long.
pub fn background_pass(config: &Config) -> PassOptions {
    PassOptions {
        batch: config.search.embed_batch,
        bound: embed_bound(config),
        budget: Duration::from_secs(20),
    }
}

/// Which records get a vector made: every record kept, unless
/// `[retention] embeddings_days` bounds it. Vectors already made stay with their
/// records either way.
pub fn embed_bound(config: &Config) -> EmbedBound {
    match config.retention.embeddings_days {
        Some(days) => EmbedBound::WithinDays(days),
        None => EmbedBound::Every,
    }
}

/// Brings vectors up to date with the records, newest records first, in batches:
/// each batch is read, embedded outside any transaction (hooks keep writing
/// meanwhile), then stored in one short write. `progress` hears the running total.
pub fn run_pass(
    store: &mut Store,
    model: &Embedder,
    options: PassOptions,
    mut progress: impl FnMut(&PassReport),
) -> Result<PassReport, SemanticError> {
    let rebuilt = prepare_index(store, model)?;
    let embed_since = options.bound.since(UnixMillis::now());
    vectors::widen_bound(store, options.bound)?;
    vectors::requeue_for_recipe(store, embed_since)?;
    let started = Instant::now();
    let mut report = PassReport {
        rebuilt,
        ..PassReport::default()
    };
    loop {
        let work = vectors::next_work(store.conn(), options.batch.max(1), embed_since)?;
        if work.is_empty() {
            break;
        }
        let texts: Vec<&str> = work.iter().filter_map(|w| w.text.as_deref()).collect();
        let made = embed_robustly(model, &texts);
        let vectors: Vec<Vec<f32>> = made.into_iter().map(Option::unwrap_or_default).collect();
        let done = vectors::complete(store, &work, &vectors)?;
        let embedded = vectors.iter().filter(|v| !v.is_empty()).count();
        report.embedded += embedded.min(done);
        report.removed += work.iter().filter(|w| w.text.is_none()).count().min(done);
        progress(&report);
        if done == 0 || started.elapsed() >= options.budget {
            // Every record of the batch changed while it was embedded: let the next
            // pass take them, rather than spin here against a busy writer.
            break;
        }
    }
    report.remaining = vectors::queued(store.conn())?;
    Ok(report)
}

/// Makes the vector tables fit `model` (see `vectors::prepare`); the model's
/// centre is measured on [`CALIBRATION`] only when the tables are (re)built.
pub fn prepare_index(store: &mut Store, model: &Embedder) -> Result<bool, SemanticError> {
    let info = model.info();
    let wanted = IndexModel {
        fingerprint: info.fingerprint.clone(),
        dimension: info.dimension,
    };
    if vectors::index_model(store.conn())?.as_ref() == Some(&wanted) {
        // Vectors of this model made before a source was embedded (knowledge,
        // store version 6): that source's tables are added, the rest kept.
        vectors::add_missing_tables(store, &wanted)?;
        return Ok(false);
    }
    let sample = model.embed_documents(CALIBRATION)?;
    let mut centre = vec![0f32; info.dimension];
    for v in &sample {
        for (c, x) in centre.iter_mut().zip(v) {
            *c += x / sample.len() as f32;
        }
    }
    Ok(vectors::prepare(store, &wanted, &centre)?)
}

/// Before a sync: makes the vector tables fit the installed model (measuring its
/// centre if they are new or of another model), so that the vectors the account's
/// other machines made with the same model are stored as they arrive and the
/// records they belong to need no embedding pass here. Nothing is embedded but the
/// calibration texts, and only when the tables are (re)built; without a model,
/// nothing is done. Returns whether the tables were (re)built.
pub fn ready_for_pulled_vectors(
    config: &Config,
    paths: &Paths,
    store: &mut Store,
) -> Result<bool, SemanticError> {
    let Ok(info) = solaria_embed::describe(&model_dir(config, paths)) else {
        return Ok(false);
    };
    let wanted = IndexModel {
        fingerprint: info.fingerprint,
        dimension: info.dimension,
    };
    if vectors::index_model(store.conn())?.as_ref() == Some(&wanted) {
        vectors::add_missing_tables(store, &wanted)?;
        return Ok(false);
    }
    let Some(model) = load_model(config, paths)? else {
        return Ok(false);
    };
    prepare_index(store, &model)
}

/// Texts like the ones a memory holds (commands, errors, edits, prompts and notes,
/// in English and Spanish), to find where a model puts a typical record.
const CALIBRATION: &[&str] = &[
    "Bash: cargo test -p auth -- --nocapture",
    "error[E0502]: cannot borrow `self.items` as mutable because it is also borrowed as immutable",
    "Edit src/api/handlers/session.rs: refresh the token before it expires",
    "npm run build failed: Module not found: Can't resolve './components/Chart'",
    "Read README.md",
    "git commit -m \"Fix flaky timezone test in billing reports\"",
    "Grep: TODO|FIXME in src/",
    "Why does the dashboard load so slowly when there are many invoices?",
    "Add an index on invoices.customer_id to speed up the monthly report",
    "terraform apply: Error acquiring the state lock",
    "docker compose up: port 5432 is already allocated",
    "pytest tests/test_orders.py::test_refund FAILED AssertionError: 200 != 201",
    "The websocket handler leaks memory when clients disconnect without closing",
    "Switch from moment.js to date-fns to shrink the bundle",
    "kubectl rollout restart deployment/api -n staging",
    "Write migrations/20250610120000_sessions.sql",
    "CORS error: the origin is not in the allowed list",
    "Retry S3 uploads with exponential backoff and jitter",
    "Refactor the payment service to use dependency injection",
    "Summary: fixed the login redirect loop; tests pass",
    "¿Por qué falla el despliegue en producción?",
    "el test de integración falla porque falta la variable DATABASE_URL",
    "Corrige el error de CORS en el panel de administración",
    "añade paginación a la lista de pedidos",
    "la migración de la tabla de sesiones se queda bloqueada",
    "revisa por qué la app móvil se cierra al abrir la cámara",
    "Nota: usamos Redis para la caché de sesiones",
    "actualiza las dependencias y vuelve a ejecutar los tests",
    "cargo clippy --all-targets -- -D warnings",
    "warning: unused variable: `config`",
    "SELECT * FROM users WHERE email = $1",
    "fn parse_config(path: &Path) -> Result<Config, Error>",
];

/// Embeds a batch; if the batch fails (one odd text), each text alone, so that one
/// bad record costs only its own vector (an empty one: it is skipped, not retried).
fn embed_robustly(model: &Embedder, texts: &[&str]) -> Vec<Option<Vec<f32>>> {
    match model.embed_documents(texts) {
        Ok(v) => v.into_iter().map(Some).collect(),
        Err(_) => texts
            .iter()
            .map(|t| model.embed_documents(&[t]).ok().and_then(|mut v| v.pop()))
            .collect(),
    }
}

/// Whether the vector tables were made for the installed model.
pub fn vectors_current(config: &Config, paths: &Paths, store: &Store) -> Result<bool, StoreError> {
    let Some(index) = vectors::index_model(store.conn())? else {
        return Ok(false);
    };
    let installed = solaria_embed::describe(&model_dir(config, paths)).ok();
    Ok(installed.is_some_and(|m| m.fingerprint == index.fingerprint))
}

/// Whether the stored vectors were made by the installed model (so that a query
/// embedded by it can be compared with them) and there are some.
pub fn vectors_ready(config: &Config, paths: &Paths, store: &Store) -> Result<bool, StoreError> {
    Ok(vectors_current(config, paths, store)? && vectors::stored(store.conn())? > 0)
}

/// Which search mode is live: the configured default, else hybrid when the
/// installed model made the stored vectors, else lexical.
pub fn live_mode(config: &Config, paths: &Paths, store: &Store) -> Result<SearchMode, StoreError> {
    if let Some(mode) = config.search.default_mode {
        return Ok(mode);
    }
    Ok(if vectors_ready(config, paths, store)? {
        SearchMode::Hybrid
    } else {
        SearchMode::Lexical
    })
}

/// Where a search gets the model when its mode needs one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelSource {
    /// Load it for this search (the CLI: one search per process).
    Load,
    /// The process keeps it ([`cached_model`]): the MCP server, the local API.
    Cached,
}

/// Why a search that needs the model cannot run.
#[derive(Debug, thiserror::Error)]
pub enum SearchError {
    #[error(
        "{mode} search needs the embedding model, which is not installed in {dir}: run `solaria model install`, or search by words (`--mode lexical`)"
    )]
    NoModel { mode: SearchMode, dir: PathBuf },
    #[error(
        "{mode} search needs the embedding model in {dir}, which fails: {reason}. Reinstall it with `solaria model install`, or search by words (`--mode lexical`)"
    )]
    BrokenModel {
        mode: SearchMode,
        dir: PathBuf,
        reason: String,
    },
    #[error(
        "the vectors of this machine's records were not made by the installed model ({model}): run `solaria embed` (or let `solaria serve` do it), or search by words (`--mode lexical`)"
    )]
    StaleVectors { model: String },
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl SearchError {
    /// The model in `dir` failed to embed for a search in `mode`.
    pub(crate) fn broken(mode: SearchMode, dir: &std::path::Path, e: EmbedError) -> SearchError {
        SearchError::BrokenModel {
            mode,
            dir: dir.to_path_buf(),
            reason: e.to_string(),
        }
    }

    /// Said when a search without an explicit mode ran by words instead.
    pub fn fallback_note(&self) -> String {
        match self {
            SearchError::NoModel { dir, .. } => format!(
                "searched by words only: no embedding model is installed in {} (`solaria model install`)",
                dir.display()
            ),
            SearchError::BrokenModel { dir, reason, .. } => format!(
                "searched by words only: the embedding model in {} fails ({reason}); reinstall it with `solaria model install`",
                dir.display()
            ),
            SearchError::StaleVectors { model } => format!(
                "searched by words only: the vectors were not made by the installed model ({model}); `solaria embed` rebuilds them"
            ),
            SearchError::Store(e) => format!("searched by words only: {e}"),
        }
    }
}

/// What a search found, and how.
#[derive(Debug)]
pub struct Searched {
    pub hits: Vec<Hit>,
    /// The mode that ran.
    pub mode: SearchMode,
    /// Set when a search without an explicit mode wanted meaning but ran by words
    /// only: why, and what to do. Callers show it (the CLI on stderr).
    pub fell_back: Option<String>,
    /// The query's embedding, when the search made one (the central service's part
    /// of a search is then by meaning too).
    pub vector: Option<QueryVector>,
    /// The model that made it: what shows a hit found by meaning alone
    /// ([`closest_passages`]).
    pub model: Option<std::sync::Arc<Embedder>>,
}

/// For each list of passages, the index of the one closest in meaning to `query`
/// (a vector of `model`), every passage embedded in one batch as a stored text is;
/// `None` for an empty list.
pub fn closest_passages(
    model: &Embedder,
    query: &[f32],
    lists: &[Vec<String>],
) -> Result<Vec<Option<usize>>, EmbedError> {
    let all: Vec<&str> = lists.iter().flatten().map(String::as_str).collect();
    let vectors = model.embed_documents(&all)?;
    let mut closest = Vec::with_capacity(lists.len());
    let mut at = 0;
    for list in lists {
        let mine = vectors.get(at..at + list.len()).unwrap_or_default();
        at += list.len();
        closest.push(
            mine.iter()
                .map(|v| solaria_embed::cosine(v, query))
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i),
        );
    }
    Ok(closest)
}

/// A search in `mode`, or in the live mode when `mode` is `None`, embedding the
/// query when the mode needs it.
///
/// An explicit mode that needs the model fails with a [`SearchError`] that says how
/// to mend it. Without one, a model that is missing, does not load or did not make
/// the stored vectors makes the search fall back to words (with the reason in
/// [`Searched::fell_back`]): a broken model file must never take search away.
pub fn search(
    config: &Config,
    paths: &Paths,
    store: &Store,
    query: &SearchQuery,
    mode: Option<SearchMode>,
    source: ModelSource,
) -> Result<Searched, SearchError> {
    let wanted = match mode {
        Some(m) => m,
        None => live_mode(config, paths, store)?,
    };
    let lexical = |fell_back: Option<String>| -> Result<Searched, SearchError> {
        Ok(Searched {
            hits: hybrid::search(store.conn(), query, SearchMode::Lexical, None)?,
            mode: SearchMode::Lexical,
            fell_back,
            vector: None,
            model: None,
        })
    };
    if wanted == SearchMode::Lexical {
        return lexical(None);
    }
    let dir = model_dir(config, paths);
    let made = std::sync::OnceLock::new();
    let mut used = None;
    let hits = usable_model(config, paths, store, wanted, source).and_then(|model| {
        used = Some(std::sync::Arc::clone(&model));
        hybrid::search_while_embedding(store.conn(), query, wanted, || {
            let values = model
                .embed_query(&query.text)
                .map_err(|e| SearchError::broken(wanted, &dir, e))?;
            let _ = made.set(QueryVector {
                model: model.info().fingerprint.clone(),
                values: values.clone(),
            });
            Ok(values)
        })
    });
    match hits {
        Ok(hits) => {
            let vector = made.into_inner();
            Ok(Searched {
                hits,
                mode: wanted,
                fell_back: None,
                model: used.filter(|_| vector.is_some()),
                vector,
            })
        }
        Err(SearchError::Store(e)) => Err(SearchError::Store(e)),
        Err(e) if mode.is_some() => Err(e),
        Err(e) => lexical(Some(e.fallback_note())),
    }
}

/// The query's embedding for a search of the central service in `mode` (`None` for
/// words). The central service compares it with the vectors pushed under the same
/// model, so this machine's own vectors need not be current.
pub fn query_vector(
    config: &Config,
    paths: &Paths,
    text: &str,
    mode: SearchMode,
    source: ModelSource,
) -> Result<Option<QueryVector>, SearchError> {
    Ok(query_vector_by_model(config, paths, text, mode, source)?.map(|(vector, _)| vector))
}

/// [`query_vector`], with the model that made it (to weigh more texts by the same
/// model without loading it again).
pub fn query_vector_by_model(
    config: &Config,
    paths: &Paths,
    text: &str,
    mode: SearchMode,
    source: ModelSource,
) -> Result<Option<(QueryVector, std::sync::Arc<Embedder>)>, SearchError> {
    if mode == SearchMode::Lexical {
        return Ok(None);
    }
    let dir = model_dir(config, paths);
    let model = installed_model(config, paths, mode, source)?;
    let values = model
        .embed_query(text)
        .map_err(|e| SearchError::broken(mode, &dir, e))?;
    let vector = QueryVector {
        model: model.info().fingerprint.clone(),
        values,
    };
    Ok(Some((vector, model)))
}

/// The model, if it is installed and loads.
pub(crate) fn installed_model(
    config: &Config,
    paths: &Paths,
    mode: SearchMode,
    source: ModelSource,
) -> Result<std::sync::Arc<Embedder>, SearchError> {
    let dir = model_dir(config, paths);
    match source {
        ModelSource::Load => load_model(config, paths).map(|m| m.map(std::sync::Arc::new)),
        ModelSource::Cached => cached_model(config, paths),
    }
    .map_err(|e| SearchError::broken(mode, &dir, e))?
    .ok_or(SearchError::NoModel { mode, dir })
}

/// The model, if it is installed, loads, and made the stored vectors.
fn usable_model(
    config: &Config,
    paths: &Paths,
    store: &Store,
    mode: SearchMode,
    source: ModelSource,
) -> Result<std::sync::Arc<Embedder>, SearchError> {
    let model = installed_model(config, paths, mode, source)?;
    let index = vectors::index_model(store.conn())?;
    if index.as_ref().map(|m| m.fingerprint.as_str()) != Some(model.info().fingerprint.as_str()) {
        return Err(SearchError::StaleVectors {
            model: model.info().name.clone(),
        });
    }
    Ok(model)
}

/// What `solaria stats`, `solaria model status` and `memory_stats` report about
/// semantic search.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Status {
    /// The mode a search without `--mode` uses now.
    pub live_mode: SearchMode,
    pub model_dir: PathBuf,
    pub model_installed: bool,
    /// The model the stored vectors were made with (`None` before the first pass).
    pub vectors_model: Option<String>,
    /// Whether those vectors were made by the installed model (else the next
    /// embedding pass rebuilds them all).
    pub vectors_current: bool,
    pub vectors: i64,
    /// Records waiting for their vector (made, replaced or removed by the daemon).
    pub waiting: i64,
}

/// The semantic search status of this machine.
pub fn status(config: &Config, paths: &Paths, store: &Store) -> Result<Status, StoreError> {
    Ok(Status {
        live_mode: live_mode(config, paths, store)?,
        model_dir: model_dir(config, paths),
        model_installed: model_present(config, paths),
        vectors_model: vectors::index_model(store.conn())?.map(|m| m.fingerprint),
        vectors_current: vectors_current(config, paths, store)?,
        vectors: vectors::stored(store.conn())?,
        waiting: vectors::queued(store.conn())?,
    })
}

impl Status {
    /// One line for people: the live mode and how far the vectors are.
    pub fn describe(&self) -> String {
        let mode = match self.live_mode {
            SearchMode::Hybrid => "hybrid (words + meaning)",
            SearchMode::Semantic => "semantic (meaning)",
            SearchMode::Lexical => "lexical (words)",
        };
        if !self.model_installed {
            return format!(
                "{mode}; no embedding model installed (`solaria model install` enables semantic search)"
            );
        }
        if self.vectors_model.is_some() && !self.vectors_current {
            return format!(
                "{mode}; the {} vector(s) were made by another model: `solaria embed` (or `solaria serve`) rebuilds them for the installed one",
                self.vectors
            );
        }
        format!(
            "{mode}; {} vector(s), {} record(s) waiting for one{}",
            self.vectors,
            self.waiting,
            if self.waiting > 0 {
                " (`solaria serve` fills them in the background, `solaria embed` now)"
            } else {
                ""
            }
        )
    }
}

/// The model, loaded once per process and kept (for long-lived servers: the MCP
/// server, the daemon's local API). A model installed later is picked up on the
/// next call; a failed load is retried on the next call too.
pub fn cached_model(
    config: &Config,
    paths: &Paths,
) -> Result<Option<std::sync::Arc<Embedder>>, EmbedError> {
    static MODEL: std::sync::Mutex<Option<(PathBuf, String, std::sync::Arc<Embedder>)>> =
        std::sync::Mutex::new(None);
    let dir = model_dir(config, paths);
    if !model_present(config, paths) {
        return Ok(None);
    }
    // Keyed by what the directory holds now: a model installed over the old one
    // (same directory) is loaded afresh.
    let fingerprint = solaria_embed::describe(&dir)?.fingerprint;
    let mut slot = MODEL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some((loaded_from, loaded, model)) = slot.as_ref()
        && *loaded_from == dir
        && *loaded == fingerprint
    {
        return Ok(Some(std::sync::Arc::clone(model)));
    }
    let Some(model) = load_model(config, paths)? else {
        return Ok(None);
    };
    let model = std::sync::Arc::new(model);
    *slot = Some((dir, fingerprint, std::sync::Arc::clone(&model)));
    Ok(Some(model))
}
