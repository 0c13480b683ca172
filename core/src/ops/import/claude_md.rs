//! `solaria import claude-md [PATH…]`: Claude Code's memory files read into
//! curated memories of a project: `CLAUDE.md` files (each bullet, or each
//! paragraph under a heading, one memory) and the auto memory under
//! `~/.claude/projects/<project>/memory/` (each topic file one memory, of the
//! type its front matter names; its `MEMORY.md` index is their table of
//! contents). Each memory says the file it came from and its section, and takes
//! an id from its project, file and text: importing again finds what stands,
//! and what the file no longer says is superseded by what took its place in its
//! section, or retracted.

use super::{Incoming, Owner, stable_id};
use crate::app::App;
use crate::ops::{OpError, OpResult};
use crate::store::Store;
use crate::store::knowledge::KnowledgeFilter;
use solaria_shared::knowledge::{
    Knowledge, KnowledgeBody, KnowledgeId, KnowledgeKind, Memory, MemoryType, Standing,
};
use solaria_shared::wire::WireRecord;
use solaria_shared::{Hlc, Project, RecordMeta, UnixMillis};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const SOURCE: &str = "claude-md";
/// The tag every memory imported from Claude Code's files carries.
pub const TAG: &str = "claude-md";
/// The tag naming the file (`from:CLAUDE.md`) and the section (`section:Testing`).
const FROM: &str = "from:";
const SECTION: &str = "section:";
/// The most characters of a memory read from a file.
const CONTENT_CHARS: usize = 2_000;

/// One memory a file holds: where, and what.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    /// The innermost heading above it; empty before the first.
    pub section: String,
    pub text: String,
    pub memory_type: MemoryType,
    /// The line it starts on (from 1).
    pub line: usize,
}

/// Words that open a rule rather than a fact (`Always run…`, `Never push…`).
const RULE_OPENERS: &[&str] = &[
    "always", "never", "don't", "do", "use", "prefer", "avoid", "must", "should", "run", "keep",
    "make", "write", "put", "add", "remove", "ask", "check", "follow", "no",
];

/// A bullet's type: a principle when it opens with a rule's word, else a fact.
fn kind_of(text: &str) -> MemoryType {
    let first = text
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
        .to_lowercase();
    if RULE_OPENERS.contains(&first.as_str()) {
        MemoryType::Principle
    } else {
        MemoryType::Fact
    }
}

/// The text of a list item's first line, when `line` starts one at the margin.
fn bullet(line: &str) -> Option<&str> {
    if let Some(rest) = line
        .strip_prefix("- ")
        .or_else(|| line.strip_prefix("* "))
        .or_else(|| line.strip_prefix("+ "))
    {
        return Some(rest);
    }
    let digits = line.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 {
        return line[digits..]
            .strip_prefix(". ")
            .or_else(|| line[digits..].strip_prefix(") "));
    }
    None
}

/// The items of a `CLAUDE.md`-like file, and the `@` imports it names (which
/// are not followed: each is a file to import on its own).
pub fn items(text: &str) -> (Vec<Item>, Vec<String>) {
    let mut out: Vec<Item> = Vec::new();
    let mut imports = Vec::new();
    let mut section = String::new();
    let mut open: Option<Item> = None;
    let mut fence: Option<&str> = None;
    let mut in_comment = false;
    let close = |open: &mut Option<Item>, out: &mut Vec<Item>| {
        if let Some(mut item) = open.take() {
            item.text = item.text.trim().to_string();
            if !item.text.is_empty() {
                item.memory_type = kind_of(&item.text);
                out.push(item);
            }
        }
    };
    for (n, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        let trimmed = line.trim_start();
        if in_comment {
            in_comment = !trimmed.contains("-->");
            continue;
        }
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            if let Some(item) = open.as_mut() {
                item.text.push('\n');
                item.text.push_str(line);
            }
            continue;
        }
        // A fenced block belongs to the item it follows; one on its own is an
        // illustration, not a memory, and is skipped.
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            fence = Some(&trimmed[..3]);
            if let Some(item) = open.as_mut() {
                item.text.push('\n');
                item.text.push_str(line);
            }
            continue;
        }
        if trimmed.starts_with("<!--") {
            in_comment = !trimmed.contains("-->");
            continue;
        }
        if let Some(heading) = line.strip_prefix('#') {
            let heading = heading.trim_start_matches('#');
            if heading.starts_with(' ') || heading.is_empty() {
                close(&mut open, &mut out);
                section = heading.trim().to_string();
                continue;
            }
        }
        if line.is_empty() {
            // A blank line ends the item: a paragraph, or a bullet with the
            // lines indented under it.
            close(&mut open, &mut out);
            continue;
        }
        if trimmed.starts_with('@') && !trimmed.contains(' ') {
            close(&mut open, &mut out);
            imports.push(trimmed[1..].to_string());
            continue;
        }
        if let Some(first) = bullet(line) {
            close(&mut open, &mut out);
            open = Some(Item {
                section: section.clone(),
                text: first.to_string(),
                memory_type: MemoryType::Fact,
                line: n + 1,
            });
            continue;
        }
        match open.as_mut() {
            // An indented line (a sub-bullet, a continuation) belongs to the
            // item above; an unindented one does too when it continues a
            // paragraph.
            Some(item) => {
                item.text.push('\n');
                item.text.push_str(line);
            }
            None => {
                open = Some(Item {
                    section: section.clone(),
                    text: line.to_string(),
                    memory_type: MemoryType::Fact,
                    line: n + 1,
                });
            }
        }
    }
    close(&mut open, &mut out);
    (out, imports)
}

/// A topic file of Claude Code's auto memory: YAML front matter (`name`,
/// `description`, `type`, or `metadata:` with `type:` under it) and a body.
/// `None` when the file has no front matter.
pub fn topic(text: &str) -> Option<Item> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let end = rest.find("\n---")?;
    let (front, body) = (&rest[..end], &rest[end + 4..]);
    let mut fields: BTreeMap<String, String> = BTreeMap::new();
    for line in front.lines() {
        if let Some((key, value)) = line.trim().split_once(':') {
            let value = value.trim().trim_matches('"').trim_matches('\'');
            if !value.is_empty() {
                fields.insert(key.trim().to_string(), value.to_string());
            }
        }
    }
    let memory_type = match fields.get("type").map(String::as_str) {
        Some("user") => MemoryType::Preference,
        Some("feedback") => MemoryType::Principle,
        _ => MemoryType::Fact,
    };
    let name = fields.get("name").cloned().unwrap_or_default();
    let description = fields.get("description").cloned().unwrap_or_default();
    let body = body.trim_start_matches(['\r', '\n']).trim();
    let mut text = match (name.is_empty(), description.is_empty()) {
        (false, false) => format!("{name}: {description}"),
        (false, true) => name.clone(),
        (true, false) => description,
        (true, true) => String::new(),
    };
    if !body.is_empty() {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(body);
    }
    (!text.trim().is_empty()).then_some(Item {
        section: name,
        text,
        memory_type,
        line: 1,
    })
}

/// Where Claude Code keeps the auto memory of the project rooted at `root`:
/// `~/.claude/projects/<root, each character but letters and digits a dash>/memory`.
pub fn auto_memory_dir(home: &Path, root: &Path) -> PathBuf {
    let encoded: String = root
        .to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect();
    home.join(".claude/projects").join(encoded).join("memory")
}

/// The files a bare `solaria import claude-md` reads for the project at `root`.
pub fn default_paths(root: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = ["CLAUDE.md", ".claude/CLAUDE.md", "CLAUDE.local.md"]
        .iter()
        .map(|f| root.join(f))
        .filter(|p| p.is_file())
        .collect();
    if let Some(home) = std::env::var_os("HOME") {
        let dir = auto_memory_dir(Path::new(&home), root);
        if dir.is_dir() {
            paths.push(dir);
        }
    }
    paths
}

/// One file read: how it is named in tags, and its items.
struct Read {
    label: String,
    items: Vec<Item>,
}

/// How a file is named in its memories' tags: relative to the project's root
/// when inside it, else its full path.
fn label(path: &Path, root: &Path) -> String {
    path.strip_prefix(root)
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| path.display().to_string())
}

fn read_file(path: &Path, root: &Path, skipped: &mut Vec<String>) -> OpResult<Read> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        OpError::BadInput(format!(
            "{}: cannot read it as text ({e}); nothing was imported",
            path.display()
        ))
    })?;
    let items = match topic(&text) {
        Some(item) => vec![item],
        None => {
            let (items, imports) = items(&text);
            skipped.extend(imports.into_iter().map(|i| {
                format!(
                    "{}: `@{i}` is an import, not followed: import that file itself",
                    path.display()
                )
            }));
            items
        }
    };
    Ok(Read {
        label: label(path, root),
        items,
    })
}

/// The files of an auto-memory directory: its topic files, then the lines of
/// its `MEMORY.md` index that point at no topic file here (the index line of a
/// topic file is that file's table-of-contents entry, not a memory of its own).
fn read_dir(dir: &Path, root: &Path, skipped: &mut Vec<String>) -> OpResult<Vec<Read>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| OpError::BadInput(format!("{}: cannot list it ({e})", dir.display())))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.sort();
    let mut out = Vec::new();
    for file in &files {
        let mut read = read_file(file, root, skipped)?;
        if file.file_name().is_some_and(|n| n == "MEMORY.md") {
            read.items.retain(|item| {
                !files.iter().any(|f| {
                    f.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| item.text.contains(&format!("]({n})")))
                })
            });
        }
        out.push(read);
    }
    Ok(out)
}

fn record(
    project: &Project,
    machine: solaria_shared::MachineId,
    read: &Read,
    item: &Item,
) -> Knowledge {
    let text: String = if item.text.chars().count() > CONTENT_CHARS {
        let mut cut: String = item.text.chars().take(CONTENT_CHARS - 1).collect();
        cut.push('…');
        cut
    } else {
        item.text.clone()
    };
    // A topic file's text already opens with its name, its section.
    let content = if item.section.is_empty() || text.starts_with(&item.section) {
        text.clone()
    } else {
        format!("{}: {text}", item.section)
    };
    let normalized: String = content.split_whitespace().collect::<Vec<_>>().join(" ");
    let id = KnowledgeId::from_uuid(stable_id(SOURCE, &[&project.key, &read.label, &normalized]));
    let mut tags = vec![TAG.to_string(), format!("{FROM}{}", read.label)];
    if !item.section.is_empty() {
        tags.push(format!("{SECTION}{}", item.section));
    }
    Knowledge {
        id,
        meta: RecordMeta {
            machine_id: machine,
            updated: Hlc::default(),
            deleted: false,
        },
        project: project.clone(),
        session_id: None,
        written_by: solaria_shared::knowledge::WrittenBy::Person,
        created_at: UnixMillis::now(),
        body: KnowledgeBody::Memory(Memory {
            memory_type: item.memory_type,
            content,
            tags,
            ..Memory::default()
        }),
    }
}

/// The file tag of a memory imported from Claude Code's files, and its section.
fn origin(k: &Knowledge) -> Option<(String, String)> {
    let KnowledgeBody::Memory(m) = &k.body else {
        return None;
    };
    if !m.tags.iter().any(|t| t == TAG) {
        return None;
    }
    let from = m.tags.iter().find_map(|t| t.strip_prefix(FROM))?;
    let section = m
        .tags
        .iter()
        .find_map(|t| t.strip_prefix(SECTION))
        .unwrap_or("");
    Some((from.to_string(), section.to_string()))
}

/// Reads Claude Code's memory files for a project: `paths` (files, or
/// auto-memory directories), or when none are named, those of the repository
/// the current directory is in ([`default_paths`]). The project is the one
/// `project` names, else the current directory's. Nothing is written.
pub fn read_for(app: &App, project: Option<&str>, paths: Vec<PathBuf>) -> OpResult<Incoming> {
    let cwd = std::env::current_dir()
        .map_err(|e| OpError::BadInput(format!("cannot read the current directory: {e}")))?;
    let root = crate::gitdir::locate(&cwd).map_or(cwd, |dirs| dirs.work);
    let store = app.store()?;
    let project = match project {
        Some(text) => crate::ops::project::resolve(&store, text)?
            .into_iter()
            .next()
            .unwrap_or_else(|| app.current_project()),
        None => app.current_project(),
    };
    let paths = if paths.is_empty() {
        default_paths(&root)
    } else {
        paths
    };
    if paths.is_empty() {
        return Err(OpError::BadInput(format!(
            "no CLAUDE.md, .claude/CLAUDE.md, CLAUDE.local.md or auto memory ({}) for {}: name the files to import",
            std::env::var_os("HOME")
                .map(|h| auto_memory_dir(Path::new(&h), &root).display().to_string())
                .unwrap_or_default(),
            root.display()
        )));
    }
    read(&store, project, &root, &paths)
}

/// Reads `paths` (files, or auto-memory directories) whole for `project`, whose
/// repository is at `root`; nothing is written. What each file said before and
/// no longer says is superseded by what is new in its section, in order, or
/// retracted.
pub fn read(store: &Store, project: Project, root: &Path, paths: &[PathBuf]) -> OpResult<Incoming> {
    let mut incoming = Incoming {
        source: SOURCE.to_string(),
        path: paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        owner: Owner::ThisMachine,
        ..Incoming::default()
    };
    let mut reads = Vec::new();
    for path in paths {
        if path.is_dir() {
            reads.extend(read_dir(path, root, &mut incoming.skipped)?);
        } else {
            reads.push(read_file(path, root, &mut incoming.skipped)?);
        }
    }
    let machine = store.machine_id();
    let now = UnixMillis::now();
    let filter = KnowledgeFilter::standing_in(&project.key, &[KnowledgeKind::Memory], 0);
    let standing = crate::store::knowledge::list_knowledge(store.conn(), &filter, now)?;
    for read in &reads {
        let mut new: Vec<Knowledge> = Vec::with_capacity(read.items.len());
        for item in &read.items {
            let mut k = record(&project, machine, read, item);
            // A memory held keeps the time it was first imported.
            if let Some(held) = crate::store::knowledge::get_knowledge(store.conn(), k.id)? {
                k.created_at = held.created_at;
            }
            new.push(k);
        }
        // What stood from this file and is no longer in it.
        let gone: Vec<&Knowledge> = standing
            .iter()
            .filter(|k| origin(k).is_some_and(|(from, _)| from == read.label))
            .filter(|k| !new.iter().any(|n| n.id == k.id))
            .collect();
        let mut replaced_by: BTreeMap<KnowledgeId, KnowledgeId> = BTreeMap::new();
        let mut fresh: Vec<&Knowledge> = new
            .iter()
            .filter(|n| !standing.iter().any(|k| k.id == n.id))
            .collect();
        for old in &gone {
            let section = origin(old).map(|(_, s)| s).unwrap_or_default();
            let taken = fresh
                .iter()
                .position(|n| origin(n).is_some_and(|(_, s)| s == section));
            if let Some(i) = taken {
                replaced_by.insert(old.id, fresh.remove(i).id);
            }
        }
        for mut k in new.into_iter() {
            if let Some((old, _)) = replaced_by.iter().find(|(_, n)| **n == k.id)
                && let KnowledgeBody::Memory(m) = &mut k.body
            {
                m.supersedes = Some(*old);
            }
            incoming.records.push(WireRecord::Knowledge(k));
        }
        // A memory replaced is marked superseded by the store as its successor
        // is written (`Writer::put_knowledge`); one with no successor is retracted.
        for old in gone
            .into_iter()
            .filter(|k| !replaced_by.contains_key(&k.id))
        {
            let mut k = old.clone();
            if let KnowledgeBody::Memory(m) = &mut k.body {
                m.status = Standing::Retracted;
            }
            incoming.records.push(WireRecord::Knowledge(k));
        }
    }
    Ok(incoming)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bullets_paragraphs_and_sections_become_items_and_imports_are_named() {
        let text = "# Project\n\nA billing API in Rust.\nIt serves invoices.\n\n## Testing\n\n\
                    - Always run `cargo test -p billing` before pushing\n  with the database up\n\
                    - The CI runs on Debian 12\n\n```sh\ncargo test\n```\n\n<!-- a note\nacross -->\n\
                    @docs/style.md\n1. Prefer sqlx over an ORM\n";
        let (items, imports) = items(text);
        let got: Vec<(&str, &str, MemoryType)> = items
            .iter()
            .map(|i| (i.section.as_str(), i.text.as_str(), i.memory_type))
            .collect();
        assert_eq!(
            got,
            vec![
                (
                    "Project",
                    "A billing API in Rust.\nIt serves invoices.",
                    MemoryType::Fact
                ),
                (
                    "Testing",
                    "Always run `cargo test -p billing` before pushing\n  with the database up",
                    MemoryType::Principle
                ),
                ("Testing", "The CI runs on Debian 12", MemoryType::Fact),
                ("Testing", "Prefer sqlx over an ORM", MemoryType::Principle),
            ]
        );
        assert_eq!(items[1].line, 8);
        assert_eq!(imports, vec!["docs/style.md"]);
    }

    #[test]
    fn a_topic_file_is_one_memory_of_its_front_matters_type() {
        let text = "---\nname: Tabs in Makefiles\ndescription: the user wants real tabs\n\
                    metadata:\n  type: feedback\n---\n\nMakefiles keep tabs.\n**Why:** make needs them.\n";
        let item = topic(text).expect("a topic");
        assert_eq!(item.memory_type, MemoryType::Principle);
        assert!(
            item.text
                .starts_with("Tabs in Makefiles: the user wants real tabs\n\nMakefiles")
        );
        assert_eq!(topic("# Just a page\n- a bullet\n"), None);
    }

    #[test]
    fn the_auto_memory_directory_is_named_after_the_projects_path() {
        let dir = auto_memory_dir(Path::new("/home/u"), Path::new("/home/u/my.api"));
        assert_eq!(
            dir,
            Path::new("/home/u/.claude/projects/-home-u-my-api/memory")
        );
    }
}
