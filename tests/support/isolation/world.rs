//! The cast: one TLS central service on a fresh database; account `acme` sharing
//! `github.com/acme/*`, with Alice (admin) and Carol (member), honest, and Bob
//! (member), hostile; account `globex` with Mallory, a stranger. Alice and Carol
//! each have a real edge (the `solaria` binary) and a machine that pushes
//! hand-made batches; Bob and Mallory push through the API only.

use crate::central::{Central, Machine, Options};
use crate::edge::Edge;
use crate::payloads::project;
use solaria_central::storage::Role;
use solaria_shared::MachineId;
use std::collections::HashMap;
use std::path::PathBuf;

/// Someone of the simulation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Person {
    Alice,
    Carol,
    Bob,
    Mallory,
}

impl Person {
    pub const ALL: [Person; 4] = [Person::Alice, Person::Carol, Person::Bob, Person::Mallory];

    /// Their account's name.
    pub fn account(self) -> &'static str {
        match self {
            Person::Mallory => "globex",
            _ => "acme",
        }
    }

    /// The key of their personal project (a name of theirs, never shared).
    pub fn personal(self) -> String {
        format!("github.com/{}/notes", self.handle())
    }

    pub fn handle(self) -> &'static str {
        match self {
            Person::Alice => "alice",
            Person::Carol => "carol",
            Person::Bob => "bob",
            Person::Mallory => "mallory",
        }
    }

    /// Whether they only do what the product lets an honest person do.
    pub fn honest(self) -> bool {
        matches!(self, Person::Alice | Person::Carol)
    }
}

/// The shared project.
pub const SHARED: &str = "github.com/acme/api";

/// Whether `reader` may see a record `author` wrote in `project`: the rule the
/// service promises, written here without its code.
pub fn may_see(reader: Person, author: Person, project: &str) -> bool {
    reader.account() == author.account()
        && (reader == author
            || (author.account() == "acme" && project.starts_with("github.com/acme/")))
}

/// A real edge of an honest person.
#[derive(Debug)]
pub struct HonestEdge {
    pub person: Person,
    pub edge: Edge,
    /// A clone of the person's personal project.
    pub notes: PathBuf,
}

/// Everyone's machines and the service.
#[derive(Debug)]
pub struct World {
    pub c: Central,
    /// The machine each person pushes hand-made batches from.
    pub api: HashMap<Person, Machine>,
    pub edges: Vec<HonestEdge>,
    /// Every machine, by id and by name, with whose it is.
    pub owners: HashMap<MachineId, Person>,
    pub names: Vec<(String, Person)>,
}

impl World {
    pub async fn new() -> World {
        let c = Central::start_with(Options {
            tls: true,
            ..Options::default()
        })
        .await;
        let acme = c.account("acme").await;
        let alice = c.person(acme, "alice@acme.dev", Role::Admin).await;
        let carol = c.person(acme, "carol@acme.dev", Role::Member).await;
        let bob = c.person(acme, "bob@acme.dev", Role::Member).await;
        c.storage
            .share_projects(acme, "github.com/acme/*", "simulation")
            .await
            .expect("share");
        let globex = c.account("globex").await;
        let mut api = HashMap::new();
        api.insert(
            Person::Alice,
            c.machine_of(acme, alice, "alice-desktop").await,
        );
        api.insert(
            Person::Carol,
            c.machine_of(acme, carol, "carol-desktop").await,
        );
        api.insert(Person::Bob, c.machine_of(acme, bob, "bob-laptop").await);
        api.insert(Person::Mallory, c.machine(globex, "mallory-box").await);
        let mut owners: HashMap<MachineId, Person> = api.iter().map(|(p, m)| (m.id, *p)).collect();
        let mut names: Vec<(String, Person)> = vec![
            ("alice-desktop".into(), Person::Alice),
            ("carol-desktop".into(), Person::Carol),
            ("bob-laptop".into(), Person::Bob),
            ("mallory-box".into(), Person::Mallory),
        ];
        let mut edges = Vec::new();
        for (person, id) in [(Person::Alice, alice), (Person::Carol, carol)] {
            let name = format!("{}-laptop", person.handle());
            let edge = Edge::new(&name);
            edge.enroll_as(&c, acme, id).await;
            let machine: MachineId = edge
                .strings("SELECT value FROM meta WHERE key = 'machine_id'")
                .first()
                .and_then(|m| m.parse().ok())
                .expect("the edge's machine id");
            owners.insert(machine, person);
            names.push((name, person));
            let notes = project(
                edge.root.path(),
                "notes",
                Some(&format!("git@github.com:{}/notes.git", person.handle())),
            );
            edges.push(HonestEdge {
                person,
                edge,
                notes,
            });
        }
        World {
            c,
            api,
            edges,
            owners,
            names,
        }
    }

    /// Whose machine `id` is (`None`: no machine of the simulation).
    pub fn owner(&self, id: MachineId) -> Option<Person> {
        self.owners.get(&id).copied()
    }

    /// The people whose machines `line` names (by machine name).
    pub fn named_in(&self, line: &str) -> Vec<Person> {
        let mut found: Vec<Person> = self
            .names
            .iter()
            .filter(|(name, _)| line.contains(name.as_str()))
            .map(|(_, p)| *p)
            .collect();
        found.sort();
        found.dedup();
        found
    }
}
