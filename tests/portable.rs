//! Taking the memory out and bringing it back, through the real binary: a JSON
//! export read into an empty machine answers as the first one did, a second
//! import adds nothing, a foreign, malformed or newer file is refused with nothing
//! touched, secrets and private spans never reach the store or the file, and the
//! Markdown pages read as a person expects.

use serde_json::{Value, json};
use solaria_tests::edge::Edge;
use solaria_tests::payloads::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

const SECRET: &str = "ghp_FAKEabcdefghijklmnopqrstuvwxyz012345";

/// A session captured through the hooks, a decision (superseded by a second), a
/// memory and a forgotten one: the first machine's memory.
fn a_memory_worth_keeping(m: &Edge) {
    let p = &m.project;
    let s = "7d1c2f0e-0000-4000-8000-00000000000a";
    m.hook("session-start", session_start(s, p));
    m.hook(
        "user-prompt-submit",
        prompt(s, p, "Fix the JWT refresh: renew_jwt fails after expiry"),
    );
    m.hook(
        "post-tool-use",
        tool(
            s,
            p,
            "Bash",
            json!({"command": "cargo test auth::refresh"}),
            json!({"stdout": "test auth::refresh::renew_jwt_rotates ... FAILED", "stderr": "", "interrupted": false}),
        ),
    );
    m.hook("stop", stop(s, p));
    m.hook("session-end", session_end(s, p));
    let first = m.written_id(
        p,
        &[
            "decide",
            "--title",
            "Refresh tokens last thirty days",
            "--chosen",
            "thirty-day refresh tokens",
        ],
    );
    m.ok_in(
        p,
        &[
            "supersede",
            &first,
            "--title",
            "Rotate refresh tokens on every renewal",
            "--chosen",
            "rotation",
            "--rationale",
            "a stolen token dies at its next use",
            "--alternative",
            "long-lived refresh tokens",
        ],
    );
    m.ok_in(
        p,
        &[
            "remember",
            "Ana reviews every migration",
            "--type",
            "preference",
        ],
    );
    let gone = m.written_id(p, &["remember", "The staging database is shared"]);
    m.ok_in(p, &["forget", &gone]);
}

/// What a person asks of a memory, answered as JSON, with nothing that differs
/// between two machines holding the same records (times are the records' own).
fn answers(m: &Edge) -> Vec<Value> {
    let p = &m.project;
    let ids = |v: Value, key: &str| -> Value {
        let list = v
            .get(key)
            .cloned()
            .unwrap_or(v)
            .as_array()
            .cloned()
            .unwrap_or_default();
        Value::Array(list.iter().map(|x| x["id"].clone()).collect())
    };
    vec![
        ids(m.json(p, &["search", "renew_jwt", "--json"]), "hits"),
        ids(m.json(p, &["search", "refresh", "--json"]), "hits"),
        ids(m.json(p, &["decisions", "--json", "--all"]), ""),
        ids(m.json(p, &["memories", "--json"]), ""),
        ids(m.json(p, &["why", "refresh tokens", "--json"]), "records"),
    ]
}

fn export(m: &Edge, args: &[&str]) -> String {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    m.ok_in(&m.project, &all)
}

fn import(m: &Edge, file: &Path) -> Value {
    let path = file.to_str().expect("utf-8 path");
    m.json(&m.project, &["import", "solaria", path, "--json"])
}

fn total(counts: &Value) -> u64 {
    counts
        .as_object()
        .map(|o| o.values().filter_map(Value::as_u64).sum())
        .unwrap_or(0)
}

#[test]
fn an_export_read_into_an_empty_machine_answers_as_the_first_did_and_twice_adds_nothing() {
    let laptop = Edge::new("laptop");
    a_memory_worth_keeping(&laptop);
    // With its tombstones, so that the second machine holds what the first does,
    // forgettings included: the same records weigh the same in search.
    let file = laptop.root.path().join("memory.json");
    let said = export(&laptop, &["--tombstones", file.to_str().expect("path")]);
    assert!(said.contains("Exported"), "{said}");
    let mode = std::fs::metadata(&file)
        .expect("written")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o777,
        0o600,
        "the export is its user's alone, as the store is"
    );
    let document: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("one JSON document");
    assert_eq!(document["solaria_export"]["format"], "solaria-export");
    assert_eq!(document["solaria_export"]["version"], 1);
    let kinds: Vec<&str> = document["records"]
        .as_array()
        .expect("records")
        .iter()
        .filter_map(|r| r["type"].as_str())
        .collect();
    for kind in ["session", "observation", "summary", "knowledge"] {
        assert!(kinds.contains(&kind), "{kind} exported: {kinds:?}");
    }
    assert!(
        !std::fs::read_to_string(&file)
            .expect("text")
            .contains("The staging database is shared"),
        "a tombstone carries no content"
    );

    let desktop = Edge::new("desktop");
    let first = import(&desktop, &file);
    assert!(total(&first["stored"]) >= 7, "{first}");
    assert_eq!(total(&first["unchanged"]), 0, "{first}");
    assert_eq!(first["skipped"], json!([]), "{first}");
    assert_eq!(
        answers(&desktop),
        answers(&laptop),
        "the same answers on both machines"
    );
    let decisions = desktop.json(&desktop.project, &["decisions", "--json", "--all"]);
    assert_eq!(decisions.as_array().map(Vec::len), Some(2), "{decisions}");
    let context = desktop.ok_in(&desktop.project, &["context"]);
    assert!(
        context.contains("Rotate refresh tokens on every renewal"),
        "{context}"
    );
    let why = desktop.ok_in(&desktop.project, &["why", "refresh tokens"]);
    assert!(
        why.contains("@laptop"),
        "the writer's machine is named: {why}"
    );

    let second = import(&desktop, &file);
    assert_eq!(
        total(&second["stored"]),
        0,
        "a second import adds nothing: {second}"
    );
    assert_eq!(second["unchanged"], first["stored"], "{second}");
    assert_eq!(answers(&desktop), answers(&laptop));
}

#[test]
fn tombstones_carry_a_forgetting_to_the_machine_that_imported_the_record() {
    let laptop = Edge::new("laptop");
    let p = &laptop.project;
    let memory = laptop.written_id(p, &["remember", "The staging database is shared"]);
    let before = laptop.root.path().join("before.json");
    export(&laptop, &[before.to_str().expect("path")]);
    let desktop = Edge::new("desktop");
    import(&desktop, &before);
    let listed = |m: &Edge| m.ok_in(&m.project, &["memories"]);
    assert!(listed(&desktop).contains("staging database"));

    laptop.ok_in(p, &["forget", &memory]);
    let after = laptop.root.path().join("after.json");
    export(&laptop, &["--tombstones", after.to_str().expect("path")]);
    let text = std::fs::read_to_string(&after).expect("export");
    assert!(
        !text.contains("staging database"),
        "a tombstone carries no content"
    );
    import(&desktop, &after);
    assert!(
        !listed(&desktop).contains("staging database"),
        "{}",
        listed(&desktop)
    );
}

#[test]
fn another_persons_export_reads_as_theirs_when_the_import_names_them() {
    let ana = Edge::new("ana-laptop");
    ana.decide_no_orm();
    let file = ana.root.path().join("ana.json");
    export(&ana, &[file.to_str().expect("path")]);
    let path = file.to_str().expect("path");

    let bo = Edge::new("bo-desktop");
    let refused = bo
        .cmd_in(&bo.project)
        .args(["import", "solaria", path, "--from", "ana <system>"])
        .output()
        .expect("run");
    assert!(
        !refused.status.success(),
        "a handle is a name, nothing more"
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(said.contains("nothing was imported"), "{said}");
    assert_eq!(bo.json(&bo.project, &["decisions", "--json"]), json!([]));

    // Without `--from`, the report says whose the records now read as.
    let first = bo.ok_in(&bo.project, &["import", "solaria", path]);
    assert!(
        first.contains("Records written on ana-laptop read as yours") && first.contains("--from"),
        "{first}"
    );
    let own = bo.json(&bo.project, &["decisions", "--json"]);
    assert_eq!(own[0]["author"], json!({"machine": "ana-laptop"}), "{own}");

    // Imported again, naming her: nothing stored twice, every answer names her.
    let again = bo.json(
        &bo.project,
        &["import", "solaria", path, "--from", "@ana", "--json"],
    );
    assert_eq!(total(&again["stored"]), 0, "{again}");
    assert!(again.get("labelled_as_yours").is_none(), "{again}");
    let hers = json!({"handle": "ana", "machine": "ana-laptop"});
    let listed = bo.json(&bo.project, &["decisions", "--json"]);
    assert_eq!(listed[0]["author"], hers, "{listed}");
    let why = bo.ok_in(&bo.project, &["why", "ORM", "billing"]);
    assert!(why.contains("by @ana on ana-laptop"), "{why}");
    let id = listed[0]["id"].as_str().expect("id");
    let forget = bo
        .cmd_in(&bo.project)
        .args(["forget", id])
        .output()
        .expect("run");
    assert!(!forget.status.success(), "hers to change, not his");
    assert_eq!(bo.json(&bo.project, &["decisions", "--json"])[0]["id"], id);

    // Bo's own machine is never relabelled by a file, whoever it says it is from.
    bo.ok_in(&bo.project, &["remember", "Billing runs nightly"]);
    let mine = bo.json(&bo.project, &["memories", "--json"]);
    assert_eq!(
        mine[0]["author"],
        json!({"machine": "bo-desktop"}),
        "{mine}"
    );
}

#[test]
fn a_file_cannot_say_whose_this_machine_is_even_with_from() {
    let bo = Edge::new("bo-desktop");
    let p = &bo.project;
    bo.ok_in(p, &["remember", "Billing runs nightly"]);
    let mine = bo.strings("SELECT value FROM meta WHERE key = 'machine_id'")[0].clone();
    // A crafted file naming this machine (under another name) as its writer's.
    let file = hand_made_naming(
        bo.root.path(),
        "crafted.json",
        &[json!({"id": mine, "name": "not-yours"})],
        &[],
    );
    let path = file.to_str().expect("path");
    let report = bo.json(
        p,
        &["import", "solaria", path, "--from", "mallory", "--json"],
    );
    assert_eq!(
        report["kept_as_the_account_says"],
        json!(["not-yours"]),
        "{report}"
    );
    let text = bo.ok_in(p, &["import", "solaria", path, "--from", "mallory"]);
    assert!(
        text.contains("Not relabelled by --from: not-yours"),
        "{text}"
    );
    let memories = bo.json(p, &["memories", "--json"]);
    assert_eq!(
        memories[0]["author"],
        json!({"machine": "bo-desktop"}),
        "{memories}"
    );
    let forget = bo.run_in(p, &["forget", memories[0]["id"].as_str().expect("id")]);
    assert!(forget.status.success(), "still his to forget");
}

/// What a walk over a JSON answer found: the records (objects with
/// `meta.machine_id`) it holds, where one has no `author` beside its fields (or,
/// for a page's `record`, beside it), and the handles it names.
#[derive(Default)]
struct Walked {
    records: usize,
    unauthored: Vec<String>,
    handles: Vec<String>,
}

fn walk(value: &Value, at: &str, parent_authored: bool, out: &mut Walked) {
    match value {
        Value::Object(o) => {
            if o.get("meta").and_then(|m| m.get("machine_id")).is_some() {
                out.records += 1;
                if !o.contains_key("author") && !parent_authored {
                    out.unauthored.push(at.to_string());
                }
            }
            if let Some(handle) = o
                .get("author")
                .and_then(|a| a.get("handle"))
                .and_then(Value::as_str)
            {
                out.handles.push(handle.to_string());
            }
            for (key, v) in o {
                let beside = key == "record" && o.contains_key("author");
                walk(v, &format!("{at}.{key}"), beside, out);
            }
        }
        Value::Array(a) => {
            for (n, v) in a.iter().enumerate() {
                walk(v, &format!("{at}[{n}]"), false, out);
            }
        }
        _ => {}
    }
}

#[test]
fn every_json_answer_that_carries_a_record_names_who_wrote_it() {
    let ana = Edge::new("ana-laptop");
    let hers = ana.decide_no_orm();
    ana.ok_in(&ana.project, &["remember", "Billing exports run nightly"]);
    let file = ana.root.path().join("ana.json");
    export(&ana, &[file.to_str().expect("path")]);

    let bo = Edge::new("bo-desktop");
    let p = &bo.project;
    bo.ok_in(
        p,
        &[
            "import",
            "solaria",
            file.to_str().expect("path"),
            "--from",
            "ana",
        ],
    );
    let cwd = p.display().to_string();
    bo.hook(
        "post-tool-use",
        json!({"session_id": "s1", "cwd": cwd, "hook_event_name": "PostToolUse",
               "tool_name": "Bash", "tool_input": {"command": "cargo test billing"},
               "tool_response": {"stdout": "ok"}}),
    );
    let event = bo.search("cargo test billing")[0]["id"]
        .as_str()
        .expect("the event")
        .to_string();
    let mut answers: Vec<(String, Value)> = Vec::new();
    let mut ask = |args: &[&str]| answers.push((args.join(" "), bo.json(p, args)));
    ask(&[
        "decide",
        "--json",
        "--title",
        "An ORM for the billing tables after all",
        "--chosen",
        "an ORM",
        "--rationale",
        "billing reports need window functions less than speed of writing",
        "--alternative",
        "plain SQL",
    ]);
    ask(&[
        "supersede",
        &hers,
        "--json",
        "--title",
        "No ORM for billing, nor for reports",
        "--chosen",
        "plain SQL",
        "--rationale",
        "window functions everywhere",
    ]);
    ask(&["remember", "--json", "Billing owns the invoices table"]);
    ask(&["iteration", "start", "--json", "Billing v2"]);
    ask(&["iteration", "show", "--json"]);
    ask(&["why", "--json", "ORM", "billing"]);
    ask(&["show", "--json", &hers]);
    ask(&["decisions", "--json", "--all"]);
    ask(&["memories", "--json"]);
    ask(&["review", "--json"]);
    ask(&["search", "--json", "billing"]);
    ask(&["timeline", "--json", &event]);
    ask(&["recall", "--json", "should billing use an ORM?"]);

    let mut named_her = Vec::new();
    for (asked, answer) in &answers {
        let mut found = Walked::default();
        walk(answer, "", false, &mut found);
        // Search and recall answer with hits (a citation, a snippet, an author),
        // not whole records; every other answer here holds at least one record.
        let hits_only = asked.starts_with("search") || asked.starts_with("recall");
        assert!(
            hits_only || found.records > 0,
            "`{asked}` holds a record: {answer}"
        );
        assert!(
            found.unauthored.is_empty(),
            "`{asked}`: records without an author at {:?}: {answer}",
            found.unauthored
        );
        if found.handles.iter().any(|h| h == "ana") {
            named_her.push(asked.clone());
        }
    }
    // Hers as a close pair of his new decision, and wherever she is read.
    for asked in ["decide", "why", "show", "decisions", "search", "recall"] {
        assert!(
            named_her.iter().any(|a| a.starts_with(asked)),
            "`{asked}` names Ana's record as hers: {named_her:?}"
        );
    }
}

/// A JSON export is streamed into a temporary file that becomes the export only
/// once whole: an export that fails leaves the previous file as it was, and
/// nothing beside it.
#[test]
fn a_failed_export_leaves_the_previous_file_untouched() {
    let m = Edge::new("laptop");
    m.ok_in(&m.project, &["remember", "The api deploys on Fridays"]);
    let dir = m.root.path().join("exports");
    std::fs::create_dir_all(&dir).expect("mkdir");
    let file = dir.join("memory.json");
    let path = file.to_str().expect("path");
    export(&m, &[path]);
    let before = std::fs::read(&file).expect("the first export");

    let said = m.refused(&["export", "--project", "no-such-project", path]);
    assert!(
        said.contains("no-such-project") && !said.contains("cannot write"),
        "the export's own reason, not the file's: {said}"
    );
    assert_eq!(std::fs::read(&file).expect("still there"), before);
    let names: Vec<_> = std::fs::read_dir(&dir)
        .expect("list")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names, ["memory.json"], "nothing is left beside it");

    let said = m.refused(&["export", "/proc/no-such-dir/memory.json"]);
    assert!(
        said.contains("cannot write /proc/no-such-dir/memory.json"),
        "{said}"
    );
}

#[test]
fn only_what_was_asked_is_exported_and_local_only_projects_stay_unless_named() {
    let m = Edge::new("laptop");
    let other = project(m.root.path(), "diary", None);
    m.ok_in(&m.project, &["remember", "The api deploys on Fridays"]);
    m.ok_in(&other, &["remember", "Notes about my week"]);
    m.write_config("[sync]\nlocal_only_projects = [\"diary\"]\n");
    let all = m.root.path().join("all.json");
    let said = export(&m, &[all.to_str().expect("path")]);
    assert!(
        said.contains("Left out, local only by your config: diary"),
        "{said}"
    );
    let text = std::fs::read_to_string(&all).expect("export");
    assert!(
        text.contains("deploys on Fridays") && !text.contains("my week"),
        "{text}"
    );

    let named = m.root.path().join("diary.json");
    export(&m, &["--project", "diary", named.to_str().expect("path")]);
    let text = std::fs::read_to_string(&named).expect("export");
    assert!(
        text.contains("my week") && !text.contains("Fridays"),
        "{text}"
    );

    let since = m.root.path().join("since.json");
    export(
        &m,
        &["--since", "2099-01-01", since.to_str().expect("path")],
    );
    let document: Value =
        serde_json::from_str(&std::fs::read_to_string(&since).expect("export")).expect("json");
    assert_eq!(
        document["records"],
        json!([]),
        "nothing was written after 2099"
    );
    let recent = m.root.path().join("recent.json");
    export(&m, &["--since", "1d", recent.to_str().expect("path")]);
    let text = std::fs::read_to_string(&recent).expect("export");
    assert!(text.contains("deploys on Fridays"), "written today: {text}");

    let out = m
        .cmd_in(&m.project)
        .args(["export", "-"])
        .output()
        .expect("run");
    assert!(out.status.success());
    let document: Value = serde_json::from_slice(&out.stdout).expect("stdout is the document");
    assert_eq!(document["records"].as_array().map(Vec::len), Some(1));
}

/// The machine hand-made exports come from.
const OLD_LAPTOP: &str = "01a24f76-d290-7714-9487-1ff807cb5b0b";

/// A hand-made export holding `records`, as another machine would write it.
fn hand_made(dir: &Path, name: &str, records: &[Value]) -> std::path::PathBuf {
    hand_made_naming(dir, name, &[], records)
}

/// [`hand_made`], its header naming `more` machines besides its writer.
fn hand_made_naming(
    dir: &Path,
    name: &str,
    more: &[Value],
    records: &[Value],
) -> std::path::PathBuf {
    let mut machines = vec![json!({"id": OLD_LAPTOP, "name": "old-laptop"})];
    machines.extend_from_slice(more);
    let header = json!({
        "format": "solaria-export", "version": 1, "exported_at": 1_796_629_516_986_i64,
        "machine": {"id": OLD_LAPTOP, "name": "old-laptop"},
        "machines": machines
    });
    let lines: Vec<String> = records.iter().map(Value::to_string).collect();
    let text = format!(
        "{{\"solaria_export\":{header},\"records\":[\n{}\n]}}\n",
        lines.join(",\n")
    );
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write");
    path
}

fn decision(id: &str, updated_ms: i64, title: &str, rationale: &str) -> Value {
    json!({
        "type": "knowledge", "id": id,
        "meta": {"machine_id": OLD_LAPTOP, "updated": updated_ms << 16, "deleted": false},
        "project": {"key": "github.com/acme/api", "name": "api"},
        "created_at": updated_ms,
        "body": {"kind": "decision", "title": title, "chosen": "plain SQL", "rationale": rationale,
                 "alternatives": ["an ORM"], "decided_at": updated_ms}
    })
}

#[test]
fn an_import_keeps_secrets_and_private_spans_out_and_refuses_stamps_from_the_future() {
    let m = Edge::new("desktop");
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("clock")
        .as_millis() as i64;
    let file = hand_made(
        m.root.path(),
        "hand.json",
        &[
            decision(
                "01a24f76-d293-762a-a578-a09f64daa6c8",
                now - 60_000,
                "No ORM for billing",
                &format!("window functions; token {SECRET} <private>client is Initech</private>"),
            ),
            decision(
                "01a24f76-d293-762a-a578-a09f64daa6c9",
                now + 86_400_000,
                "Stamped a day ahead",
                "a clock that ran ahead",
            ),
            decision(
                "01a24f76-d293-762a-a578-a09f64daa6ca",
                now - 30_000,
                "A rationale of a megabyte",
                &"window functions ".repeat(60_000),
            ),
        ],
    );
    let report = import(&m, &file);
    assert_eq!(report["stored"], json!({"decision": 2}), "{report}");
    let decisions = m.json(&m.project, &["decisions", "--json"]);
    let long = decisions
        .as_array()
        .expect("decisions")
        .iter()
        .find(|d| d["body"]["title"] == "A rationale of a megabyte")
        .expect("stored, bounded");
    let kept = long["body"]["rationale"]
        .as_str()
        .expect("rationale")
        .chars()
        .count();
    assert_eq!(kept, 8_000, "a field is bounded as a written one is");
    let skipped = report["skipped"].to_string();
    assert!(
        skipped.contains("ahead of this machine's clock"),
        "{report}"
    );
    assert!(!m.stores(SECRET), "no secret reaches the store");
    assert!(!m.stores("Initech"), "no private span reaches the store");
    let why = m.ok_in(&m.project, &["why", "ORM billing"]);
    assert!(
        why.contains("No ORM for billing") && why.contains("[REDACTED"),
        "{why}"
    );
    // The refused stamp did not move this machine's clock a day ahead.
    let written = m.json(&m.project, &["remember", "--json", "Billing runs nightly"]);
    let stamp = written["record"]["created_at"]
        .as_i64()
        .expect("created_at");
    assert!(stamp < now + 3_600_000, "{written}");
}

#[test]
fn a_malformed_foreign_or_newer_file_is_refused_by_name_and_nothing_is_touched() {
    let m = Edge::new("desktop");
    m.decide_no_orm();
    let before = m.store_bytes();
    let refused = |file: &Path| m.refused(&["import", "solaria", file.to_str().expect("path")]);
    let now = 1_796_629_516_986_i64;
    let mut broken = decision("01a24f76-d293-762a-a578-a09f64daa6c9", now, "B", "b");
    broken["meta"]["deleted"] = json!("no");
    let file = hand_made(
        m.root.path(),
        "broken.json",
        &[
            decision("01a24f76-d293-762a-a578-a09f64daa6c8", now, "A", "a"),
            broken,
        ],
    );
    let said = refused(&file);
    assert!(said.contains("record 2 (line 3)"), "{said}");
    assert!(said.contains("nothing was imported"), "{said}");

    let newer = m.root.path().join("newer.json");
    std::fs::write(
        &newer,
        r#"{"solaria_export":{"format":"solaria-export","version":9},"records":[]}"#,
    )
    .expect("write");
    assert!(refused(&newer).contains("version 9"), "{}", refused(&newer));

    let markdown = m.root.path().join("notes.md");
    std::fs::write(&markdown, "# Notes\n- a bullet\n").expect("write");
    assert!(refused(&markdown).contains("not a SOLARIA export"));
    let other_json = m.root.path().join("other.json");
    std::fs::write(&other_json, r#"{"observations": []}"#).expect("write");
    assert!(refused(&other_json).contains("no `solaria_export` header"));
    assert!(refused(&m.db_path()).contains("not a SOLARIA export"));
    assert!(refused(&m.root.path().join("missing.json")).contains("cannot read it"));

    assert_eq!(m.store_bytes(), before, "nothing stored was touched");
}

#[test]
fn markdown_pages_read_as_a_person_expects() {
    let m = Edge::new("laptop");
    a_memory_worth_keeping(&m);
    m.ok_in(
        &m.project,
        &[
            "remember",
            &format!("Deploy key {SECRET} <private>vault 7731</private> lives in the vault"),
        ],
    );
    let dir = m.root.path().join("pages");
    let said = export(&m, &["--format", "markdown", dir.to_str().expect("path")]);
    assert!(said.contains("as markdown"), "{said}");
    let index = std::fs::read_to_string(dir.join("index.md")).expect("index");
    assert!(
        index.contains("[api](api.md): 2 decisions, 2 memories, 1 session summary"),
        "{index}"
    );
    let page = std::fs::read_to_string(dir.join("api.md")).expect("page");
    let decisions = page.find("## Decisions").expect("decisions");
    let memories = page.find("## Memories").expect("memories");
    let summaries = page.find("## Session summaries").expect("summaries");
    assert!(decisions < memories && memories < summaries, "{page}");
    assert!(
        page.contains("### Rotate refresh tokens on every renewal [D#"),
        "{page}"
    );
    assert!(
        page.contains("> a stolen token dies at its next use"),
        "{page}"
    );
    assert!(
        page.contains("**Set aside:**\n\n- long-lived refresh tokens"),
        "{page}"
    );
    assert!(
        page.contains("*superseded*"),
        "the old decision stays readable: {page}"
    );
    assert!(
        page.contains("### Preferences\n\n- Ana reviews every migration"),
        "{page}"
    );
    assert!(
        !page.contains("staging database"),
        "forgotten stays forgotten"
    );
    assert!(!page.contains(SECRET) && !page.contains("7731"), "{page}");
    let day = page[summaries..].lines().nth(2).unwrap_or_default();
    assert!(day.starts_with("### 20"), "summaries by day: {page}");
}

#[test]
fn an_export_with_vectors_spares_the_other_machine_its_embedding_pass() {
    use solaria_tests::semantic::{configure_model, minilm, queued, search};
    let Some(model) = minilm() else { return };
    let laptop = Edge::new("laptop");
    configure_model(&laptop, &model);
    for p in [
        "the mobile app crashes when the camera permission is denied",
        "add rate limiting to the login endpoint",
        "cache the exchange rates for an hour",
        "the vault code is <private>7731</private>, keep it here",
    ] {
        laptop.prompt("s1", p);
    }
    laptop.ok(&["embed"]);
    let file = laptop.root.path().join("memory.json");
    let said = export(&laptop, &["--vectors", file.to_str().expect("path")]);
    let document: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    assert_eq!(document["solaria_export"]["vectors"], true);
    let carried = document["vectors"].as_array().map(Vec::len).unwrap_or(0);
    assert_eq!(
        carried, 3,
        "no vector of a private span's text leaves: {said}"
    );

    let desktop = Edge::new("desktop");
    configure_model(&desktop, &model);
    let report = import(&desktop, &file);
    assert_eq!(report["vectors_stored"], 3, "{report}");
    assert_eq!(
        queued(&desktop),
        1,
        "only the private prompt waits for its pass"
    );
    let hits = search(
        &desktop,
        "semantic",
        "the phone application dies if the user refuses photo access",
    );
    assert_eq!(
        hits[0]["title"], "the mobile app crashes when the camera permission is denied",
        "found by meaning with no embedding pass: {hits:?}"
    );
}
