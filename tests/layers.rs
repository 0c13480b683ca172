//! What the compiler cannot see of the layers, checked against the imports as
//! written (tests excluded). The crates draw the big lines (shared → store, install
//! → core → edge; each crate's `Cargo.toml`). Inside them, every top-level module of
//! the edge's two libraries (`core/src`, `edge/src`) sits in one layer of
//! `docs/ARCHITECTURE.md`'s ```layers block and imports only its own layer and those
//! below. In every crate, no files import each other in
//! a circle. SQLite is the store crate's dependency alone, and the hook client's crate
//! links no model, HTTP, async runtime or database (its dependencies in `Cargo.lock`).
//!
//! The picture in the architecture page is the rule: change the two together.

use solaria_tests::workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A program whose top-level modules are drawn in layers: its library crates' source
/// folders (top first) and the block of `docs/ARCHITECTURE.md` that draws them.
#[derive(Debug, Clone, Copy)]
struct System {
    name: &'static str,
    sources: &'static [&'static str],
    block: &'static str,
}

/// The edge's two library crates, the surfaces then the core (```layers).
const EDGE: System = System {
    name: "edge",
    sources: &["edge/src", "core/src"],
    block: "layers",
};

/// The central service's library (```central-layers).
const CENTRAL: System = System {
    name: "central",
    sources: &["central/src"],
    block: "central-layers",
};

/// Each layer of `system`, top first, with its modules (`docs/ARCHITECTURE.md`).
fn declared_layers(system: System) -> Vec<(String, Vec<String>)> {
    let doc = std::fs::read_to_string(workspace().join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md");
    let block = doc
        .split(&format!("```{}\n", system.block))
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .unwrap_or_else(|| panic!("docs/ARCHITECTURE.md has a ```{} block", system.block));
    block
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let (name, modules) = line
                .split_once(':')
                .unwrap_or_else(|| panic!("a layer line is `name: modules…`: {line:?}"));
            let modules = modules
                .split('#')
                .next()
                .unwrap_or_default()
                .split_whitespace()
                .map(str::to_owned)
                .collect();
            (name.trim().to_owned(), modules)
        })
        .collect()
}

/// The top-level modules `system`'s libraries declare (`lib.rs` of each).
fn lib_modules(system: System) -> BTreeSet<String> {
    system
        .sources
        .iter()
        .flat_map(|dir| {
            let lib =
                std::fs::read_to_string(workspace().join(dir).join("lib.rs")).expect("lib.rs");
            lib.lines()
                .filter_map(|l| l.trim().strip_prefix("pub mod "))
                .map(|m| m.trim_end_matches(';').to_owned())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Every `.rs` file under `dir`, test files left out (`tests.rs`, a `tests/` folder).
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).expect("read dir") {
            let path = entry.expect("entry").path();
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if path.is_dir() {
                if name != "tests" {
                    stack.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// `source` without comments and without `#[cfg(test)]` modules: the code that ships.
fn shipped_code(source: &str) -> String {
    let mut code = String::with_capacity(source.len());
    for line in source.lines() {
        let cut = line.find("//").map_or(line, |at| &line[..at]);
        code.push_str(cut);
        code.push('\n');
    }
    let marker = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code.as_str();
    while let Some(at) = rest.find(marker) {
        out.push_str(&rest[..at]);
        let after = &rest[at + marker.len()..];
        let item = after.trim_start();
        if !(item.starts_with("mod ") || item.starts_with("pub(crate) mod ")) {
            out.push_str(marker);
            rest = after;
            continue;
        }
        // Skip the module: `mod x;` or `mod x { … }` with its braces balanced.
        let Some(open) = item.find(['{', ';']) else {
            rest = "";
            break;
        };
        if item.as_bytes()[open] == b';' {
            rest = &item[open + 1..];
            continue;
        }
        let mut depth = 0usize;
        let mut end = item.len();
        for (i, c) in item.char_indices().skip(open) {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        end = i + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules `code` names through `crate::` (also inside
/// `use crate::{a, b::c}`), with the names used after them.
fn crate_paths(code: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before_ok = at == 0
            || !rest[..at]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$');
        let after = &rest[at + "crate::".len()..];
        rest = after;
        if !before_ok {
            continue;
        }
        let path: String = after
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
            .collect();
        if let Some(group) = after.strip_prefix('{') {
            let inner = group.split('}').next().unwrap_or_default();
            for part in inner.split(',') {
                let part = part.trim();
                if let Some(head) = part.split("::").next().filter(|h| !h.is_empty()) {
                    found.push((head.to_owned(), part.to_owned()));
                }
            }
        } else if let Some(head) = path.split("::").next().filter(|h| !h.is_empty()) {
            found.push((head.to_owned(), path.clone()));
        }
    }
    found
}

/// For each top-level module: the others it imports, each with where and what.
type Imports = BTreeMap<String, BTreeMap<String, BTreeSet<String>>>;

fn module_imports(system: System, modules: &BTreeSet<String>) -> Imports {
    let mut imports: Imports = BTreeMap::new();
    for (src, file) in system.sources.iter().flat_map(|dir| {
        let src = workspace().join(dir);
        sources(&src).into_iter().map(move |f| (src.clone(), f))
    }) {
        let rel = file.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or_default()
            .trim_end_matches(".rs")
            .to_owned();
        if !modules.contains(&top) {
            continue; // lib.rs, main.rs, a CLI (declared in main.rs only)
        }
        let code = shipped_code(&std::fs::read_to_string(&file).expect("source"));
        for (head, path) in crate_paths(&code) {
            if head != top && modules.contains(&head) {
                imports
                    .entry(top.clone())
                    .or_default()
                    .entry(head)
                    .or_default()
                    .insert(format!("{} (crate::{path})", rel.display()));
            }
        }
    }
    imports
}

/// A circle among `imports`, if there is one, as the modules in order.
fn circle(imports: &Imports) -> Option<Vec<String>> {
    fn visit(
        m: &str,
        imports: &Imports,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|p| p == m) {
            let mut found = path[at..].to_vec();
            found.push(m.to_owned());
            return Some(found);
        }
        if done.contains(m) {
            return None;
        }
        path.push(m.to_owned());
        for next in imports.get(m).into_iter().flat_map(|n| n.keys()) {
            if let Some(found) = visit(next, imports, path, done) {
                return Some(found);
            }
        }
        path.pop();
        done.insert(m.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    imports
        .keys()
        .find_map(|m| visit(m, imports, &mut Vec::new(), &mut done))
}

/// A circle `circle` found, one step a line: who imports whom, and what.
fn steps_of(imports: &Imports, found: &[String]) -> String {
    found
        .windows(2)
        .map(|w| {
            let what = &imports[&w[0]][&w[1]];
            let what: Vec<&str> = what.iter().map(String::as_str).collect();
            format!("  {} -> {}: {}", w[0], w[1], what.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Why `system`'s modules break its layers: a module in no layer or two, a layer
/// naming no module, an import that runs up; or a circle of modules.
fn layer_faults(system: System) -> Vec<String> {
    let layers = declared_layers(system);
    let modules = lib_modules(system);
    let block = format!("docs/ARCHITECTURE.md's ```{} block", system.block);
    let mut faults = Vec::new();
    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (depth, (name, members)) in layers.iter().enumerate() {
        for m in members {
            if layer_of.insert(m, depth).is_some() {
                faults.push(format!(
                    "`{m}` is in two layers of {block} (the second: {name})"
                ));
            }
            if !modules.contains(m) {
                faults.push(format!(
                    "{block} names `{m}`, which no lib.rs of {:?} declares",
                    system.sources
                ));
            }
        }
    }
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    if !unplaced.is_empty() {
        faults.push(format!(
            "put these {} modules into a layer of {block}: {unplaced:?}",
            system.name
        ));
    }
    let imports = module_imports(system, &modules);
    for (from, targets) in &imports {
        for (to, places) in targets {
            let (Some(&from_at), Some(&to_at)) =
                (layer_of.get(from.as_str()), layer_of.get(to.as_str()))
            else {
                continue;
            };
            if to_at < from_at {
                faults.push(format!(
                    "{from} ({}) imports {to} ({}), up the layers: {}",
                    layers[from_at].0,
                    layers[to_at].0,
                    places.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    if let Some(found) = circle(&imports) {
        faults.push(format!(
            "a circle of {} modules:\n{}",
            system.name,
            steps_of(&imports, &found)
        ));
    }
    faults
}

#[test]
fn every_edge_module_sits_in_one_layer_and_imports_only_downwards() {
    let faults = layer_faults(EDGE);
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn every_central_module_sits_in_one_layer_and_imports_only_downwards() {
    let faults = layer_faults(CENTRAL);
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_check_sees_a_circle_and_an_import_hidden_in_a_group() {
    let code = shipped_code(
        "use crate::{store::Store, ops};\n// crate::daemon\nfn f() { crate::present::x(); }\n\
         #[cfg(test)]\nmod tests { use crate::http; }\n",
    );
    let heads: Vec<String> = crate_paths(&code).into_iter().map(|(h, _)| h).collect();
    assert_eq!(heads, ["store", "ops", "present"]);
    let mut imports = Imports::new();
    for (a, b) in [("a", "b"), ("b", "c"), ("c", "a")] {
        imports
            .entry(a.into())
            .or_default()
            .entry(b.into())
            .or_default()
            .insert(String::new());
    }
    assert_eq!(
        circle(&imports),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
}

/// The `[dependencies]` and `[dev-dependencies]` every workspace member names.
fn member_manifests() -> Vec<(String, String)> {
    let root = std::fs::read_to_string(workspace().join("Cargo.toml")).expect("Cargo.toml");
    let members = root
        .split("members = [")
        .nth(1)
        .and_then(|rest| rest.split(']').next())
        .expect("the workspace lists its members");
    members
        .split(',')
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(|m| {
            let manifest = std::fs::read_to_string(workspace().join(m).join("Cargo.toml"))
                .unwrap_or_else(|e| panic!("{m}/Cargo.toml: {e}"));
            (m.to_owned(), manifest)
        })
        .collect()
}

#[test]
fn sqlite_is_a_dependency_of_the_store_crate_alone() {
    let naming: Vec<String> = member_manifests()
        .into_iter()
        .filter(|(_, manifest)| {
            manifest
                .lines()
                .any(|l| l.trim_start().starts_with("rusqlite"))
        })
        .map(|(member, _)| member)
        .collect();
    assert_eq!(
        naming,
        ["store"],
        "rusqlite must be named by store/Cargo.toml alone (SQL stays in the store)"
    );
    // The store hands its driver on (`solaria_store::rusqlite`) for tests and
    // benchmarks that open a file themselves; shipped code elsewhere never uses it.
    let outside: Vec<String> = [
        "edge/src",
        "core/src",
        "central/src",
        "install/src",
        "shared/src",
    ]
    .into_iter()
    .flat_map(|dir| sources(&workspace().join(dir)))
    .filter(|f| shipped_code(&std::fs::read_to_string(f).expect("source")).contains("rusqlite"))
    .map(|f| f.display().to_string())
    .collect();
    assert!(
        outside.is_empty(),
        "rusqlite named outside the store: {outside:?}"
    );
}

#[test]
fn every_statement_of_the_central_service_is_sent_unnamed() {
    // One place decides how a statement reaches PostgreSQL (`storage/sql.rs`): unnamed,
    // so that PgBouncer in transaction mode never meets another client's statement.
    let storage = workspace().join("central/src/storage/sql.rs");
    let elsewhere: Vec<String> = sources(&workspace().join("central/src"))
        .into_iter()
        .filter(|f| *f != storage)
        .filter(|f| {
            let code = shipped_code(&std::fs::read_to_string(f).expect("source"));
            [
                "sqlx::query(",
                "sqlx::query_as(",
                "sqlx::query_scalar(",
                "QueryBuilder",
            ]
            .iter()
            .any(|call| code.contains(call))
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        elsewhere.is_empty(),
        "statements built outside central/src/storage/sql.rs: {elsewhere:?}"
    );
}

/// A module's path inside its crate (`["ops", "knowledge"]`; the root is empty).
type ModulePath = Vec<String>;

/// The files of the crate whose root is `root`, by module path: followed from the
/// root through each `mod name;` the shipped code declares (test modules left out).
fn crate_files(root: &Path) -> BTreeMap<ModulePath, PathBuf> {
    let mut files = BTreeMap::new();
    let mut stack = vec![(root.to_path_buf(), ModulePath::new())];
    while let Some((file, path)) = stack.pop() {
        let code = shipped_code(&std::fs::read_to_string(&file).expect("source"));
        let owns_dir = matches!(
            file.file_name().and_then(|n| n.to_str()),
            Some("lib.rs" | "main.rs" | "mod.rs")
        );
        let parent = file.parent().expect("a file has a folder");
        let dir = if owns_dir {
            parent.to_path_buf()
        } else {
            parent.join(file.file_stem().expect("a file has a name"))
        };
        for line in code.lines() {
            let line = line.trim();
            let declared = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "));
            let Some(name) = declared.and_then(|rest| rest.strip_suffix(';')) else {
                continue;
            };
            let child = [
                dir.join(format!("{name}.rs")),
                dir.join(name).join("mod.rs"),
            ]
            .into_iter()
            .find(|f| f.is_file())
            .unwrap_or_else(|| panic!("{} declares `mod {name};`: no file", file.display()));
            let mut child_path = path.clone();
            child_path.push(name.to_owned());
            stack.push((child, child_path));
        }
        files.insert(path, file);
    }
    files
}

/// Every path `code` names from `crate::`, `super::` or `self::`, resolved against
/// `at` (the module the code is in) and with `use` groups spread out:
/// `use super::{a::X, b}` in `m::n` gives `m::a::X` and `m::b`.
fn named_paths(code: &str, at: &[String]) -> Vec<ModulePath> {
    fn ident(s: &str) -> (&str, &str) {
        let end = s
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(s.len());
        s.split_at(end)
    }
    fn skip_space(s: &str, at: usize) -> usize {
        at + (s[at..].len() - s[at..].trim_start().len())
    }
    /// The paths of the use tree at the start of `s`, each after `prefix`; returns
    /// how many bytes the tree took.
    fn tree(s: &str, prefix: &ModulePath, out: &mut Vec<ModulePath>) -> usize {
        let mut path = prefix.clone();
        let mut at = 0;
        loop {
            at = skip_space(s, at);
            if s[at..].starts_with('{') {
                at += 1;
                loop {
                    at = skip_space(s, at);
                    match s[at..].chars().next() {
                        None => return at,
                        Some('}') => return at + 1,
                        Some(',') => at += 1,
                        Some(_) => at += tree(&s[at..], &path, out).max(1),
                    }
                }
            }
            let (name, _) = ident(&s[at..]);
            if name.is_empty() {
                break;
            }
            at += name.len();
            if name != "self" {
                path.push(name.to_owned());
            }
            if s[at..].starts_with("::") {
                at += 2;
            } else {
                break;
            }
        }
        out.push(path);
        at
    }
    let mut found = Vec::new();
    let mut i = 0;
    while i < code.len() {
        let rest = &code[i..];
        let boundary = i == 0
            || !code[..i]
                .chars()
                .next_back()
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':' || c == '$');
        let next_char = rest.chars().next().map_or(1, char::len_utf8);
        let (base, skip) = if !boundary {
            (None, next_char)
        } else if let Some(after) = rest.strip_prefix("crate::") {
            (Some(ModulePath::new()), rest.len() - after.len())
        } else if rest.starts_with("super::") {
            let mut base = at.to_vec();
            let mut after = rest;
            while let Some(next) = after.strip_prefix("super::") {
                base.pop();
                after = next;
            }
            (Some(base), rest.len() - after.len())
        } else if let Some(after) = rest.strip_prefix("self::") {
            (Some(at.to_vec()), rest.len() - after.len())
        } else {
            (None, next_char)
        };
        i += skip;
        if let Some(base) = base {
            i += tree(&code[i..], &base, &mut found);
        }
    }
    found
}

/// For each file of the crate rooted at `root`: the files of the same crate it
/// imports, with the names. A module's own ancestors and descendants are its tree,
/// not imports: only files beside each other count.
fn file_imports(root: &Path) -> Imports {
    let files = crate_files(root);
    let top = workspace();
    let show = |f: &Path| f.strip_prefix(&top).unwrap_or(f).display().to_string();
    let mut imports = Imports::new();
    for (at, file) in &files {
        let code = shipped_code(&std::fs::read_to_string(file).expect("source"));
        for path in named_paths(&code, at) {
            let Some(target) = (0..=path.len())
                .rev()
                .map(|n| path[..n].to_vec())
                .find(|p| files.contains_key(p))
            else {
                continue;
            };
            if target.starts_with(at) || at.starts_with(&target) {
                continue;
            }
            imports
                .entry(show(file))
                .or_default()
                .entry(show(&files[&target]))
                .or_default()
                .insert(path.join("::"));
        }
    }
    imports
}

#[test]
fn no_files_of_a_crate_import_each_other_in_a_circle() {
    let roots = [
        "shared/src/lib.rs",
        "hook/src/lib.rs",
        "embed/src/lib.rs",
        "store/src/lib.rs",
        "install/src/lib.rs",
        "core/src/lib.rs",
        "edge/src/lib.rs",
        "edge/src/main.rs",
        "central/src/lib.rs",
        "central/src/main.rs",
    ];
    let mut circles = Vec::new();
    for root in roots {
        let imports = file_imports(&workspace().join(root));
        if let Some(found) = circle(&imports) {
            circles.push(format!(
                "in the crate of {root}:\n{}",
                steps_of(&imports, &found)
            ));
        }
    }
    assert!(
        circles.is_empty(),
        "files that import each other in a circle:\n{}",
        circles.join("\n")
    );
}

#[test]
fn the_file_check_spreads_groups_and_resolves_super() {
    let at: ModulePath = vec!["ops".into(), "knowledge".into()];
    let code = shipped_code(
        "use super::{recall::{self, Recall}, search};\nuse crate::store::Store;\n\
         fn f() { super::super::config::load(); self::inner::g(); }\n\
         #[cfg(test)]\nmod tests { use crate::http; }\n",
    );
    let found: Vec<String> = named_paths(&code, &at)
        .into_iter()
        .map(|p| p.join("::"))
        .collect();
    assert_eq!(
        found,
        [
            "ops::recall",
            "ops::recall::Recall",
            "ops::search",
            "store::Store",
            "config::load",
            "ops::knowledge::inner::g",
        ]
    );
}

/// The packages `root` depends on at run time, directly or not (`Cargo.lock`).
fn locked_closure(root: &str) -> BTreeSet<String> {
    let lock = std::fs::read_to_string(workspace().join("Cargo.lock")).expect("Cargo.lock");
    let mut deps: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for package in lock.split("[[package]]").skip(1) {
        let name = package
            .lines()
            .find_map(|l| l.strip_prefix("name = "))
            .map(|n| n.trim_matches('"').to_owned())
            .expect("a package has a name");
        let list = package
            .split("dependencies = [")
            .nth(1)
            .and_then(|d| d.split(']').next())
            .unwrap_or_default();
        let names = list
            .split(',')
            .filter_map(|d| d.trim().trim_matches('"').split(' ').next())
            .filter(|d| !d.is_empty())
            .map(str::to_owned)
            .collect();
        deps.entry(name).or_default().extend::<Vec<String>>(names);
    }
    let mut seen = BTreeSet::new();
    let mut stack = vec![root.to_owned()];
    while let Some(p) = stack.pop() {
        if seen.insert(p.clone()) {
            stack.extend(deps.get(&p).cloned().unwrap_or_default());
        }
    }
    seen
}

#[test]
fn the_hook_client_links_no_model_http_async_runtime_or_database() {
    let closure = locked_closure("solaria-hook");
    assert!(
        closure.contains("libc"),
        "the lock file was read: {closure:?}"
    );
    let heavy: Vec<&String> = closure
        .iter()
        .filter(|p| {
            [
                "tokio",
                "hyper",
                "reqwest",
                "axum",
                "rusqlite",
                "candle-core",
                "tokenizers",
                "solaria-embed",
                "solaria-edge",
                "serde_json",
            ]
            .contains(&p.as_str())
        })
        .collect();
    assert!(
        heavy.is_empty(),
        "solaria-hook depends on {heavy:?}: a hook process must stay small (hook/Cargo.toml)"
    );
}
