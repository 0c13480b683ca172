//! The configuration people copy is configuration the code accepts. Every fenced
//! `toml` block of `README.md` and `docs/guide/*.md` is parsed with the edge's own
//! config reader, which refuses unknown keys, so a guide cannot teach a key that does
//! not exist (or no longer does). `deploy/central/central.example.toml` is loaded with
//! the central service's settings loader. A block meant as a fragment must still be a
//! whole config file, or be fenced as `text`.

use std::path::{Path, PathBuf};

/// The workspace root (`CARGO_MANIFEST_DIR` is `tests/`).
fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
}

/// `README.md` and every page of `docs/guide/`, in a stable order.
fn user_docs() -> Vec<PathBuf> {
    let root = workspace();
    let mut guides: Vec<PathBuf> = std::fs::read_dir(root.join("docs/guide"))
        .expect("docs/guide/ is readable")
        .map(|entry| entry.expect("a docs/guide/ entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    guides.sort();
    let mut docs = vec![root.join("README.md")];
    docs.extend(guides);
    docs
}

/// One fenced ```toml block: the line of Markdown its text starts on, and the text.
#[derive(Debug)]
struct Block {
    line: usize,
    text: String,
}

/// Where the reader of a Markdown text stands.
#[derive(Debug)]
enum Fence {
    Outside,
    /// Inside a ```toml block.
    Toml(Block),
    /// Inside any other fenced block: a ```toml line in there is its text.
    Other,
}

/// The fenced ```toml blocks of `markdown`, in order.
fn toml_blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut fence = Fence::Outside;
    for (i, line) in markdown.lines().enumerate() {
        let marker = line.trim_start().strip_prefix("```");
        fence = match (fence, marker) {
            (Fence::Outside, Some(info)) => {
                if info.split_whitespace().next() == Some("toml") {
                    Fence::Toml(Block {
                        line: i + 2,
                        text: String::new(),
                    })
                } else {
                    Fence::Other
                }
            }
            (Fence::Toml(block), Some(rest)) if rest.trim_matches('`').trim().is_empty() => {
                blocks.push(block);
                Fence::Outside
            }
            (Fence::Other, Some(rest)) if rest.trim_matches('`').trim().is_empty() => {
                Fence::Outside
            }
            (Fence::Toml(mut block), _) => {
                block.text.push_str(line);
                block.text.push('\n');
                Fence::Toml(block)
            }
            (other, _) => other,
        };
    }
    if let Fence::Toml(block) = fence {
        panic!(
            "a ```toml block opened at line {} is never closed",
            block.line - 1
        );
    }
    blocks
}

/// The toml blocks of `markdown` the edge's config reader refuses, each as
/// `name:line: why`. Each block is written to a file of its own in `scratch` and read
/// by `read_config`, the reader every command and hook uses (`deny_unknown_fields` on
/// every section).
fn refused_blocks(name: &str, markdown: &str, scratch: &Path) -> Vec<String> {
    toml_blocks(markdown)
        .into_iter()
        .enumerate()
        .filter_map(|(i, block)| {
            let file = scratch.join(format!("{}-{i}.toml", name.replace('/', "_")));
            std::fs::write(&file, &block.text).expect("write a block to the scratch dir");
            solaria_edge::config::read_config(&file)
                .err()
                .map(|e| format!("{name}:{}: {e}", block.line))
        })
        .collect()
}

#[test]
fn every_toml_block_of_the_readme_and_the_guides_is_a_config_the_edge_accepts() {
    let scratch = tempfile::tempdir().expect("a scratch dir");
    let mut found = 0;
    let mut refused = Vec::new();
    for doc in user_docs() {
        let text = std::fs::read_to_string(&doc).expect("a user doc is readable");
        let name = doc
            .strip_prefix(workspace())
            .expect("docs live in the workspace")
            .display()
            .to_string();
        found += toml_blocks(&text).len();
        refused.extend(refused_blocks(&name, &text, scratch.path()));
    }
    // The configuration guide alone has nine (the whole file, then one per section):
    // finding fewer means the extraction broke, which must not pass as "all accepted".
    assert!(
        found >= 9,
        "only {found} toml blocks found in README.md and docs/guide/"
    );
    assert!(
        refused.is_empty(),
        "config examples the edge refuses (fix the key, or fence a non-config block as `text`):\n{}",
        refused.join("\n")
    );
}

#[test]
fn an_unknown_key_in_a_guide_would_be_refused() {
    let scratch = tempfile::tempdir().expect("a scratch dir");
    let page = "# A guide\n\n```toml\n[context]\ntoken_budgt = 500\n```\n\n\
                ```text\n[context]\nnot = \"a config\"\n```\n\n\
                ```toml\n[sync]\nlocal_only_projects = [\"diary\"]\n```\n";
    let refused = refused_blocks("guide.md", page, scratch.path());
    assert_eq!(refused.len(), 1, "{refused:?}");
    assert!(
        refused[0].starts_with("guide.md:4: ") && refused[0].contains("token_budgt"),
        "{refused:?}"
    );
}

#[test]
fn the_central_example_config_loads_with_the_real_settings_loader() {
    let example = workspace().join("deploy/central/central.example.toml");
    // No environment at all: `SOLARIA_<KEY>` variables would override the file's
    // values (and could stand in for its required secrets), so the file alone must
    // hold every required key, each valid. Its secrets are placeholders, long enough
    // for the loader's checks; real ones belong in the environment.
    let settings = solaria_central::config::load_from(Some(&example), std::iter::empty())
        .unwrap_or_else(|e| panic!("{}: {e}", example.display()));
    assert!(
        !settings.mcp_allowed_hosts.is_empty(),
        "the example lists the hosts /mcp accepts"
    );
}
