//! The edge's layers as `docs/ARCHITECTURE.md` draws them, checked against the
//! imports as written (tests excluded): every top-level module of `edge/src` sits in
//! one layer of the ```layers block there, imports only its own layer and those
//! below, and no modules import each other in a circle. SQL stays in the store
//! (`rusqlite` is named nowhere else), and the hook client's crate links no model,
//! HTTP, async runtime or database (its dependencies in `Cargo.lock`).
//!
//! The picture in the architecture page is the rule: change the two together.

use solaria_tests::workspace;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer, top first, with its modules (`docs/ARCHITECTURE.md`, ```layers).
fn declared_layers() -> Vec<(String, Vec<String>)> {
    let doc = std::fs::read_to_string(workspace().join("docs/ARCHITECTURE.md"))
        .expect("docs/ARCHITECTURE.md");
    let block = doc
        .split("```layers\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/ARCHITECTURE.md has a ```layers block");
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

/// The top-level modules `edge/src/lib.rs` declares.
fn edge_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(workspace().join("edge/src/lib.rs")).expect("lib.rs");
    lib.lines()
        .filter_map(|l| l.trim().strip_prefix("pub mod "))
        .map(|m| m.trim_end_matches(';').to_owned())
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

fn edge_imports(modules: &BTreeSet<String>) -> Imports {
    let src = workspace().join("edge/src");
    let mut imports: Imports = BTreeMap::new();
    for file in sources(&src) {
        let rel = file.strip_prefix(&src).expect("under src");
        let top = rel
            .components()
            .next()
            .and_then(|c| c.as_os_str().to_str())
            .unwrap_or_default()
            .trim_end_matches(".rs")
            .to_owned();
        if !modules.contains(&top) {
            continue; // lib.rs, main.rs, the CLI (declared in main.rs only)
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

#[test]
fn every_edge_module_sits_in_one_layer_and_imports_only_downwards() {
    let layers = declared_layers();
    let modules = edge_modules();
    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (depth, (name, members)) in layers.iter().enumerate() {
        for m in members {
            assert!(
                layer_of.insert(m, depth).is_none(),
                "`{m}` is in two layers of docs/ARCHITECTURE.md (the second: {name})"
            );
            assert!(
                modules.contains(m),
                "docs/ARCHITECTURE.md's layers name `{m}`, which edge/src/lib.rs does not declare"
            );
        }
    }
    let unplaced: Vec<&String> = modules
        .iter()
        .filter(|m| !layer_of.contains_key(m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "put these edge modules into a layer of docs/ARCHITECTURE.md's ```layers block: {unplaced:?}"
    );
    let mut upward = Vec::new();
    for (from, targets) in edge_imports(&modules) {
        for (to, places) in targets {
            if layer_of[to.as_str()] < layer_of[from.as_str()] {
                upward.push(format!(
                    "{from} ({}) imports {to} ({}): {}",
                    layers[layer_of[from.as_str()]].0,
                    layers[layer_of[to.as_str()]].0,
                    places.iter().cloned().collect::<Vec<_>>().join(", ")
                ));
            }
        }
    }
    assert!(
        upward.is_empty(),
        "imports that run up the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_edge_modules_import_each_other_in_a_circle() {
    let imports = edge_imports(&edge_modules());
    if let Some(found) = circle(&imports) {
        let steps: Vec<String> = found
            .windows(2)
            .map(|w| {
                let places = &imports[&w[0]][&w[1]];
                format!(
                    "{} -> {}: {}",
                    w[0],
                    w[1],
                    places.iter().cloned().collect::<Vec<_>>().join(", ")
                )
            })
            .collect();
        panic!("a circle of modules:\n{}", steps.join("\n"));
    }
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

#[test]
fn sql_is_written_only_in_the_store() {
    let src = workspace().join("edge/src");
    let outside: Vec<String> = sources(&src)
        .into_iter()
        .filter(|f| !f.starts_with(src.join("store")))
        .filter(|f| shipped_code(&std::fs::read_to_string(f).expect("source")).contains("rusqlite"))
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        outside.is_empty(),
        "rusqlite (SQL) outside edge/src/store/: {outside:?}"
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
