//! Claude Code's own memory brought in through the real binary: a project's
//! `CLAUDE.md` (bullets and paragraphs under headings) and its auto memory
//! (`~/.claude/projects/<project>/memory/`: a `MEMORY.md` index and topic files
//! with front matter) become curated memories of that project, typed, saying
//! which file and section they came from; a second import adds nothing; after
//! an edit, what changed is superseded and what was removed retracted, never
//! duplicated; a secret and a private span never reach the store.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;

const SECRET: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

const CLAUDE_MD: &str = "# Billing API

A Rust service that issues invoices.

## Testing

- Always run `cargo test -p billing` with the database up
- The CI runs on Debian 12

## Secrets

- The deploy key is DEPLOY_KEY_PLACEHOLDER <private>kept in vault 7731</private>

@docs/style.md
";

fn claude_md() -> String {
    CLAUDE_MD.replace("DEPLOY_KEY_PLACEHOLDER", SECRET)
}

/// Claude Code's auto memory of the edge's project: an index and one topic file.
fn auto_memory(m: &Edge) {
    let encoded: String = m
        .project
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    let dir = m
        .home()
        .join(".claude/projects")
        .join(encoded)
        .join("memory");
    std::fs::create_dir_all(&dir).expect("auto memory dir");
    std::fs::write(
        dir.join("MEMORY.md"),
        "- [Tabs in Makefiles](tabs.md) — real tabs only\n- The staging database is shared with QA\n",
    )
    .expect("index");
    std::fs::write(
        dir.join("tabs.md"),
        "---\nname: Tabs in Makefiles\ndescription: the user wants real tabs in Makefiles\ntype: feedback\n---\n\nMakefiles keep tabs.\n**Why:** make needs them.\n",
    )
    .expect("topic");
}

fn import(m: &Edge) -> Value {
    m.json(&m.project, &["import", "claude-md", "--json"])
}

/// The standing memories of the project: `type content` each.
fn standing(m: &Edge) -> Vec<String> {
    let list = m.json(&m.project, &["memories", "--json"]);
    let mut out: Vec<String> = list
        .as_array()
        .expect("memories")
        .iter()
        .map(|k| {
            format!(
                "{} {}",
                k["body"]["memory_type"].as_str().unwrap_or(""),
                k["body"]["content"].as_str().unwrap_or("")
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn claude_code_memory_files_become_the_projects_memories_and_an_edit_supersedes() {
    let m = Edge::new("laptop");
    std::fs::write(m.project.join("CLAUDE.md"), claude_md()).expect("CLAUDE.md");
    auto_memory(&m);

    let first = import(&m);
    assert_eq!(first["stored"], json!({"memory": 6}), "{first}");
    let skipped = first["skipped"].to_string();
    assert!(
        skipped.contains("`@docs/style.md` is an import, not followed"),
        "{first}"
    );
    let memories = standing(&m);
    let expected = [
        "fact Billing API: A Rust service that issues invoices.",
        "fact Testing: The CI runs on Debian 12",
        "fact The staging database is shared with QA",
        "principle Tabs in Makefiles: the user wants real tabs in Makefiles\n\nMakefiles keep tabs.\n**Why:** make needs them.",
        "principle Testing: Always run `cargo test -p billing` with the database up",
    ];
    for memory in expected {
        assert!(
            memories.contains(&memory.to_string()),
            "{memory:?} in {memories:#?}"
        );
    }
    assert_eq!(
        memories.len(),
        6,
        "the index line of a topic file is no memory of its own: {memories:#?}"
    );
    let secret = memories
        .iter()
        .find(|s| s.contains("deploy key"))
        .expect("the deploy key's memory");
    assert!(
        secret.starts_with("fact Secrets: The deploy key is [REDACTED")
            && secret.ends_with("[PRIVATE]"),
        "{secret}"
    );
    let tags = m.json(&m.project, &["memories", "--json"]).to_string();
    assert!(
        tags.contains("from:CLAUDE.md") && tags.contains("section:Testing"),
        "{tags}"
    );
    assert!(!m.stores(SECRET), "no secret reaches the store");
    assert!(!m.stores("7731"), "no private span reaches the store");
    let why = m.ok_in(&m.project, &["why", "debian CI"]);
    assert!(why.contains("The CI runs on Debian 12"), "{why}");

    let second = import(&m);
    assert_eq!(second["stored"], json!({}), "{second}");
    assert_eq!(second["updated"], json!({}), "{second}");
    assert_eq!(second["unchanged"], json!({"memory": 6}), "{second}");

    // The CI moves to Debian 13; the secrets section goes.
    let edited = claude_md().replace("Debian 12", "Debian 13").replace(
        &format!(
            "## Secrets\n\n- The deploy key is {SECRET} <private>kept in vault 7731</private>\n"
        ),
        "",
    );
    std::fs::write(m.project.join("CLAUDE.md"), edited).expect("edit");
    let third = import(&m);
    // The new line supersedes the old (the store marks the old one as it writes
    // its successor); the removed one is retracted.
    assert_eq!(third["stored"], json!({"memory": 1}), "{third}");
    assert_eq!(third["updated"], json!({"memory": 1}), "retracted: {third}");
    let now = standing(&m);
    assert!(
        now.contains(&"fact Testing: The CI runs on Debian 13".to_string()),
        "{now:?}"
    );
    assert!(
        !now.iter()
            .any(|s| s.contains("Debian 12") || s.contains("deploy key")),
        "{now:?}"
    );
    assert_eq!(now.len(), 5, "{now:?}");
    let all = m
        .json(&m.project, &["memories", "--json", "--all"])
        .to_string();
    assert!(
        all.contains("superseded") && all.contains("retracted"),
        "the old ones stay readable: {all}"
    );
}

#[test]
fn a_project_with_no_claude_code_memory_is_told_where_it_was_looked_for() {
    let m = Edge::new("laptop");
    let out = m.run_in(&m.project, &["import", "claude-md"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("no CLAUDE.md") && said.contains(".claude/projects/"),
        "{said}"
    );
    let missing = m.run_in(&m.project, &["import", "claude-md", "nowhere.md"]);
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nowhere.md: cannot read it"));
    assert_eq!(m.count("SELECT count(*) FROM knowledge"), 0);
}

#[test]
fn a_file_named_is_read_for_the_project_named() {
    let m = Edge::new("laptop");
    let notes = m.root.path().join("notes.md");
    std::fs::write(&notes, "- Invoices are numbered per year\n").expect("notes");
    m.ok_in(
        &m.project,
        &["remember", "anything, so that the project is known"],
    );
    let other = m.root.path().join("elsewhere");
    std::fs::create_dir_all(&other).expect("dir");
    let report = m.json(
        &other,
        &[
            "import",
            "claude-md",
            notes.to_str().expect("path"),
            "--project",
            "api",
            "--json",
        ],
    );
    assert_eq!(report["stored"], json!({"memory": 1}), "{report}");
    assert!(standing(&m).contains(&"fact Invoices are numbered per year".to_string()));
}
