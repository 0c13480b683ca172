//! Which files make a model directory, and whether a directory has them.

use std::path::{Path, PathBuf};

/// The files a model directory must hold (relative paths).
pub const MODEL_FILES: &[&str] = &["config.json", "tokenizer.json", "model.safetensors"];

/// The paths of a model directory's files.
#[derive(Debug, Clone)]
pub struct ModelFiles {
    pub dir: PathBuf,
}

/// What a model directory holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelStatus {
    /// Every required file is there (sizes in bytes, in [`MODEL_FILES`] order).
    Present { sizes: Vec<u64> },
    /// Some required files are missing.
    Incomplete { missing: Vec<String> },
}

impl ModelFiles {
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ModelFiles { dir: dir.into() }
    }

    pub fn config(&self) -> PathBuf {
        self.dir.join("config.json")
    }
    pub fn tokenizer(&self) -> PathBuf {
        self.dir.join("tokenizer.json")
    }
    pub fn weights(&self) -> PathBuf {
        self.dir.join("model.safetensors")
    }
    pub fn pooling(&self) -> PathBuf {
        self.dir.join("1_Pooling").join("config.json")
    }
    pub fn sentence_config(&self) -> PathBuf {
        self.dir.join("sentence_bert_config.json")
    }

    /// Whether the directory holds a complete model.
    pub fn status(&self) -> ModelStatus {
        let mut sizes = Vec::new();
        let mut missing = Vec::new();
        for name in MODEL_FILES {
            match std::fs::metadata(self.dir.join(name)) {
                Ok(m) if m.is_file() && m.len() > 0 => sizes.push(m.len()),
                _ => missing.push((*name).to_string()),
            }
        }
        if missing.is_empty() {
            ModelStatus::Present { sizes }
        } else {
            ModelStatus::Incomplete { missing }
        }
    }

    /// Finds a model directory inside `root` (itself, or the one directory below it
    /// that holds `config.json` and `model.safetensors`, as an unpacked wheel does).
    pub fn locate(root: &Path) -> Option<PathBuf> {
        let complete =
            |d: &Path| matches!(ModelFiles::new(d).status(), ModelStatus::Present { .. });
        if complete(root) {
            return Some(root.to_path_buf());
        }
        let mut stack = vec![(root.to_path_buf(), 0)];
        while let Some((dir, depth)) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            let mut subdirs: Vec<PathBuf> = entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect();
            subdirs.sort();
            for sub in subdirs {
                if complete(&sub) {
                    return Some(sub);
                }
                if depth < 3 {
                    stack.push((sub, depth + 1));
                }
            }
        }
        None
    }
}
