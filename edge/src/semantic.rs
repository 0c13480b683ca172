//! Semantic search on the edge: where the model is, the embedding pass that fills
//! the vector tables (run by the daemon, never by a hook), and which search mode
//! is live.

use crate::config::{Config, Paths};
use crate::store::hybrid::{self, SearchMode};
use crate::store::search::{Hit, SearchQuery};
use crate::store::vectors::{self, IndexModel};
use crate::store::{Store, StoreError};
use solaria_embed::{EmbedError, Embedder, ModelFiles, ModelStatus};
use solaria_shared::UnixMillis;
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
    /// Records created before this get no vector (the embeddings' retention).
    pub embed_since: UnixMillis,
    /// Stop after this long (the queue is resumed by the next pass).
    pub budget: Duration,
}

/// The cut-off of the embeddings' retention (`retention.embeddings_days`).
pub fn embed_since(config: &Config, now: UnixMillis) -> UnixMillis {
    now.minus_days(config.retention.embeddings_days.max(0))
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
    let started = Instant::now();
    let mut report = PassReport {
        rebuilt,
        ..PassReport::default()
    };
    loop {
        let work = vectors::next_work(store.conn(), options.batch.max(1), options.embed_since)?;
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

/// A search in `mode` (or the live mode), embedding the query when the mode needs
/// it. A mode that needs the model when none is installed is an error that says
/// how to install it.
pub fn search(
    config: &Config,
    paths: &Paths,
    store: &Store,
    query: &SearchQuery,
    mode: Option<SearchMode>,
    model: Option<&Embedder>,
) -> anyhow::Result<(Vec<Hit>, SearchMode)> {
    let mode = match mode {
        Some(m) => m,
        None => live_mode(config, paths, store)?,
    };
    if mode == SearchMode::Lexical {
        return Ok((hybrid::search(store.conn(), query, mode, None)?, mode));
    }
    let loaded;
    let model = match model {
        Some(m) => m,
        None => {
            loaded = load_model(config, paths)?.ok_or_else(|| {
                anyhow::anyhow!(
                    "{mode} search needs the embedding model, which is not installed in {}: run `solaria model install` (or search with --mode lexical)",
                    model_dir(config, paths).display()
                )
            })?;
            &loaded
        }
    };
    let index = vectors::index_model(store.conn())?;
    if index.as_ref().map(|m| m.fingerprint.as_str()) != Some(model.info().fingerprint.as_str()) {
        anyhow::bail!(
            "the vectors of this machine's records were not made by the installed model ({}): run `solaria embed` (or let `solaria serve` do it), or search with --mode lexical",
            model.info().name
        );
    }
    let vector = model.embed_query(&query.text)?;
    Ok((
        hybrid::search(store.conn(), query, mode, Some(&vector))?,
        mode,
    ))
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
