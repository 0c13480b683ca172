//! A seeded simulation of a team on the central service: three people with two
//! machines each (the real `solaria` binary), a shared project and a personal one
//! per machine, two replicas on one database behind [`FaultProxy`]. Each round draws
//! its faults and operations from the seed — captures, memories, forgets,
//! supersessions, erasures on the service, syncs (two machines at once too),
//! clock jumps of a day, replicas killed, partitions — then lets the network heal,
//! syncs every machine twice and asks the oracle; at the end a person is removed and
//! the oracle asked again. The oracle:
//!
//! - nothing acknowledged is lost: every record the model holds live is on the
//!   service, once, live;
//! - nothing erased comes back: a forgotten or erased record is live nowhere;
//! - attribution never changes: the service names the machine that wrote it;
//! - every machine converges to what the service shows its person: its own
//!   person's records and the team's shared knowledge, live;
//! - no person sees another's personal text: not a byte of it in their store.
//!
//! The operations and faults are drawn from the seed alone, so a seed replays the
//! same run (`SOLARIA_SIM_SEEDS`); the timing of processes is the machine's own.

use crate::central::{Central, Options};
use crate::edge::Edge;
use crate::fault_proxy::{FaultProxy, Faults, Injected};
use crate::pg::fresh_database;
use serde_json::{Value, json};
use solaria_central::storage::{AccountId, PersonId, Role, Storage};
use std::path::PathBuf;
use std::time::Duration;

/// The size of one run.
#[derive(Debug, Clone, Copy)]
pub struct Plan {
    pub seed: u64,
    pub rounds: usize,
    pub steps_per_round: usize,
}

/// What one run did, for its report.
#[derive(Debug, Default, Clone)]
pub struct Report {
    pub seed: u64,
    pub operations: std::collections::BTreeMap<&'static str, usize>,
    pub injected: Injected,
    /// Syncs that failed while faults were on (they are retried by the next).
    pub failed_syncs: usize,
}

impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seed {}: ", self.seed)?;
        for (op, n) in &self.operations {
            write!(f, "{op} {n}, ")?;
        }
        let i = self.injected;
        write!(
            f,
            "requests dropped {}, answers lost {}, duplicated {}, delayed {}, refused by a partition {}; syncs failed under faults {}",
            i.dropped, i.lost, i.duplicated, i.delayed, i.partitioned, self.failed_syncs
        )
    }
}

/// Xorshift on the seed: the run's only source of choices.
#[derive(Debug)]
struct Dice(u64);

impl Dice {
    fn new(seed: u64) -> Dice {
        Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn roll(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Prompt,
    Memory,
}

/// A record the model knows of: its unique token, who wrote it where, and whether
/// it should be live.
#[derive(Debug, Clone)]
struct Rec {
    token: String,
    kind: Kind,
    machine: usize,
    person: usize,
    shared: bool,
    live: bool,
    /// A memory no other replaces yet.
    standing: bool,
}

struct Machine {
    edge: Edge,
    person: usize,
    /// False once its person is removed: it is refused from then on.
    enrolled: bool,
    id: String,
    credential: String,
    personal: PathBuf,
}

const PEOPLE: [&str; 3] = ["ana", "bo", "cy"];
const DAY_MS: i64 = 24 * 3600 * 1000;

struct World {
    plan: Plan,
    dice: Dice,
    db: String,
    storage: Storage,
    replicas: Vec<Central>,
    proxy: FaultProxy,
    account: AccountId,
    machines: Vec<Machine>,
    model: Vec<Rec>,
    report: Report,
    round: usize,
    made: usize,
}

/// Runs the simulation of `plan`; panics, naming the seed, when a promise breaks.
pub async fn run(plan: Plan) -> Report {
    eprintln!(
        "simulation: seed {} ({} rounds of {} steps); replay with SOLARIA_SIM_SEEDS={}",
        plan.seed, plan.rounds, plan.steps_per_round, plan.seed
    );
    let mut world = World::start(plan).await;
    for round in 0..plan.rounds {
        world.round = round;
        world.play_round().await;
        world.heal_and_sync().await;
        world.check().await;
    }
    world.remove_a_person().await;
    world.report.injected = world.proxy.injected();
    for c in world.replicas.drain(..) {
        c.stop().await;
    }
    world.report
}

/// Runs a blocking `solaria` command without holding up the servers on this runtime.
fn blocking<T>(f: impl FnOnce() -> T) -> T {
    tokio::task::block_in_place(f)
}

async fn replica(db: &str) -> Central {
    let storage = Storage::connect(db, 6).await.expect("connect");
    Central::serve(storage, Options::default()).await
}

impl World {
    async fn start(plan: Plan) -> World {
        let db = fresh_database().await;
        let storage = Storage::connect(&db.url, 4).await.expect("connect");
        storage.migrate().await.expect("migrate");
        let replicas = vec![replica(&db.url).await, replica(&db.url).await];
        let proxy =
            FaultProxy::start(plan.seed, replicas.iter().map(|r| r.url.clone()).collect()).await;
        let account = storage
            .create_account("acme", "lin@acme.dev", "simulation")
            .await
            .expect("account");
        storage
            .share_projects(account, "github.com/acme/*", "simulation")
            .await
            .expect("share");
        let mut people: Vec<PersonId> = Vec::new();
        for name in PEOPLE {
            people.push(
                storage
                    .add_person(
                        account,
                        &format!("{name}@acme.dev"),
                        Role::Member,
                        "simulation",
                    )
                    .await
                    .expect("person"),
            );
        }
        let mut machines = Vec::new();
        for (p, person) in people.iter().enumerate() {
            for n in 1..=2 {
                let edge = Edge::new(&format!("{}-{n}", PEOPLE[p]));
                let token = storage
                    .enrollment_token_for(account, *person, Duration::from_secs(3600))
                    .await
                    .expect("token");
                blocking(|| edge.ok(&["login", &proxy.url, "--token", &token]));
                let saved: Value = serde_json::from_slice(
                    &std::fs::read(edge.data_dir().join("credentials.json")).expect("creds"),
                )
                .expect("json");
                let personal = edge.root.path().join(format!("notes-{}", PEOPLE[p]));
                std::fs::create_dir_all(&personal).expect("personal project");
                machines.push(Machine {
                    id: saved["machine_id"].as_str().expect("id").to_string(),
                    credential: saved["credential"].as_str().expect("cred").to_string(),
                    edge,
                    person: p,
                    enrolled: true,
                    personal,
                });
            }
        }
        World {
            plan,
            dice: Dice::new(plan.seed),
            db: db.url,
            storage,
            replicas,
            proxy,
            account,
            machines,
            model: Vec::new(),
            report: Report {
                seed: plan.seed,
                ..Report::default()
            },
            round: 0,
            made: 0,
        }
    }

    fn note(&mut self, op: &'static str) {
        *self.report.operations.entry(op).or_default() += 1;
    }

    fn where_(&self) -> String {
        format!("seed {} round {}", self.plan.seed, self.round)
    }

    async fn play_round(&mut self) {
        let pick = [0, 10, 20];
        let faults = Faults {
            drop_request: pick[self.dice.roll(3)],
            lose_answer: pick[self.dice.roll(3)],
            duplicate: pick[self.dice.roll(3)],
            delay: pick[self.dice.roll(3)],
            max_delay: Duration::from_millis(150),
        };
        self.proxy.set_faults(faults);
        let mut partition_left = 0;
        for _ in 0..self.plan.steps_per_round {
            if partition_left > 0 {
                partition_left -= 1;
                if partition_left == 0 {
                    self.proxy.partition(false);
                }
            }
            let m = self.dice.roll(self.machines.len());
            match self.dice.roll(100) {
                0..=29 => self.capture(m),
                30..=44 => self.remember(m),
                45..=54 => self.forget(m),
                55..=62 => self.supersede(m),
                63..=69 => self.erase(m).await,
                70..=79 => self.sync(m),
                80..=86 => self.sync_two_at_once(m),
                87..=91 => self.jump_clock(m),
                92..=95 => self.kill_a_replica().await,
                _ => {
                    self.note("partition");
                    self.proxy.partition(true);
                    partition_left = 1 + self.dice.roll(4);
                }
            }
        }
        self.proxy.partition(false);
    }

    fn token(&mut self, m: usize) -> String {
        self.made += 1;
        format!(
            "sim{}x{}x{}x{}",
            self.plan.seed,
            self.round,
            self.made,
            self.machines[m].edge.name()
        )
        .replace('-', "")
    }

    fn project_for(&mut self, m: usize) -> (PathBuf, bool) {
        if self.dice.roll(2) == 0 {
            (self.machines[m].edge.project.clone(), true)
        } else {
            (self.machines[m].personal.clone(), false)
        }
    }

    fn capture(&mut self, m: usize) {
        let (dir, shared) = self.project_for(m);
        let token = self.token(m);
        let machine = &self.machines[m];
        let session = format!("s{}r{}", machine.edge.name(), self.round);
        let payload = json!({"session_id": session, "cwd": dir.display().to_string(),
            "hook_event_name": "UserPromptSubmit", "prompt": format!("{token} tune the cache")});
        blocking(|| machine.edge.hook("user-prompt-submit", payload));
        let person = machine.person;
        self.note("capture");
        self.model.push(Rec {
            token,
            kind: Kind::Prompt,
            machine: m,
            person,
            shared,
            live: true,
            standing: true,
        });
    }

    fn remember(&mut self, m: usize) {
        let (dir, shared) = self.project_for(m);
        let token = self.token(m);
        let machine = &self.machines[m];
        blocking(|| {
            machine.edge.ok_in(
                &dir,
                &["remember", &format!("{token} keeps the cache warm")],
            )
        });
        let person = machine.person;
        self.note("remember");
        self.model.push(Rec {
            token,
            kind: Kind::Memory,
            machine: m,
            person,
            shared,
            live: true,
            standing: true,
        });
    }

    /// The id of the live record holding `token` in machine `m`'s store, if it has it.
    fn local_id(&self, m: usize, rec: &Rec) -> Option<String> {
        let table = match rec.kind {
            Kind::Prompt => "observations",
            Kind::Memory => "knowledge",
        };
        let column = match rec.kind {
            Kind::Prompt => "input || title",
            Kind::Memory => "text || body",
        };
        self.machines[m]
            .edge
            .strings(&format!(
                "SELECT id FROM {table} WHERE deleted = 0 AND {column} LIKE '%{}%'",
                rec.token
            ))
            .into_iter()
            .next()
    }

    /// A live record of the model chosen among those `ok` accepts.
    fn choose(&mut self, ok: impl Fn(&Rec) -> bool) -> Option<usize> {
        let candidates: Vec<usize> = (0..self.model.len())
            .filter(|&i| self.model[i].live && ok(&self.model[i]))
            .collect();
        if candidates.is_empty() {
            None
        } else {
            Some(candidates[self.dice.roll(candidates.len())])
        }
    }

    fn forget(&mut self, m: usize) {
        let person = self.machines[m].person;
        let Some(i) = self.choose(|r| r.person == person) else {
            return;
        };
        let rec = self.model[i].clone();
        let Some(id) = self.local_id(m, &rec) else {
            return;
        };
        let edge = &self.machines[m].edge;
        let out = blocking(|| edge.run(&["forget", &id]));
        assert!(
            out.status.success(),
            "{}: forget {id}: {}",
            self.where_(),
            String::from_utf8_lossy(&out.stderr)
        );
        self.note("forget");
        self.model[i].live = false;
    }

    fn supersede(&mut self, m: usize) {
        let Some(i) = self.choose(|r| r.kind == Kind::Memory && r.shared && r.standing) else {
            return;
        };
        let rec = self.model[i].clone();
        let Some(id) = self.local_id(m, &rec) else {
            return;
        };
        let token = self.token(m);
        let edge = &self.machines[m].edge;
        let out = blocking(|| {
            edge.run_in(
                &edge.project,
                &[
                    "supersede",
                    &id,
                    "--content",
                    &format!("{token} keeps it colder"),
                ],
            )
        });
        assert!(
            out.status.success(),
            "{}: supersede {id}: {}",
            self.where_(),
            String::from_utf8_lossy(&out.stderr)
        );
        self.note("supersede");
        self.model[i].standing = false;
        self.model.push(Rec {
            token,
            kind: Kind::Memory,
            machine: m,
            person: self.machines[m].person,
            shared: true,
            live: true,
            standing: true,
        });
    }

    /// Erases on the service, as the person's machine asks it to, a record of that
    /// person the service holds.
    async fn erase(&mut self, m: usize) {
        let person = self.machines[m].person;
        let Some(i) = self.choose(|r| r.person == person) else {
            return;
        };
        let rec = self.model[i].clone();
        let Some((id, _, _)) = self.on_central(&rec).await.into_iter().find(|r| !r.2) else {
            return;
        };
        let replica = &self.replicas[0];
        let machine = &self.machines[m];
        let jwt: Value = replica
            .client
            .post(replica.at("/memory/token"))
            .json(&json!({"machine_id": machine.id, "credential": machine.credential}))
            .send()
            .await
            .expect("token")
            .json()
            .await
            .expect("token json");
        let token = jwt["token"].as_str().expect("jwt");
        let r = replica
            .client
            .delete(replica.at(&format!("/memory/records/{id}")))
            .bearer_auth(token)
            .send()
            .await
            .expect("erase");
        assert!(
            r.status().is_success(),
            "{}: erasing {id}: {}",
            self.where_(),
            r.status()
        );
        self.note("erase on the service");
        self.model[i].live = false;
    }

    fn sync(&mut self, m: usize) {
        let edge = &self.machines[m].edge;
        let out = blocking(|| edge.run(&["sync"]));
        self.note("sync");
        if !out.status.success() {
            self.report.failed_syncs += 1;
        }
    }

    /// Two machines sync at the same time: their requests interleave at the proxy,
    /// and a delayed one is overtaken by the other's.
    fn sync_two_at_once(&mut self, m: usize) {
        let other = (m + 1 + self.dice.roll(self.machines.len() - 1)) % self.machines.len();
        let (a, b) = (&self.machines[m].edge, &self.machines[other].edge);
        let (ra, rb) = blocking(|| {
            std::thread::scope(|scope| {
                let first = scope.spawn(|| a.run(&["sync"]));
                let second = b.run(&["sync"]);
                (first.join().expect("sync thread"), second)
            })
        });
        self.note("two syncs at once");
        self.report.failed_syncs +=
            usize::from(!ra.status.success()) + usize::from(!rb.status.success());
    }

    fn jump_clock(&mut self, m: usize) {
        let skew = [-DAY_MS, 0, DAY_MS][self.dice.roll(3)];
        let edge = &mut self.machines[m].edge;
        edge.env.retain(|(k, _)| k != "SOLARIA_CLOCK_SKEW_MS");
        edge.env
            .push(("SOLARIA_CLOCK_SKEW_MS".into(), skew.to_string()));
        self.note("clock jump");
    }

    async fn kill_a_replica(&mut self) {
        let which = self.dice.roll(self.replicas.len());
        let killed = self.replicas.remove(which);
        killed.abort().await;
        self.replicas.push(replica(&self.db).await);
        self.proxy
            .set_replicas(self.replicas.iter().map(|r| r.url.clone()).collect());
        self.note("replica killed");
    }

    /// Faults off, the link whole: every machine syncs twice (what one pushed, the
    /// others pull on the second pass), each sync succeeding.
    async fn heal_and_sync(&mut self) {
        self.proxy.set_faults(Faults::default());
        self.proxy.partition(false);
        for pass in 0..2 {
            for m in 0..self.machines.len() {
                if !self.machines[m].enrolled {
                    continue;
                }
                let edge = &self.machines[m].edge;
                let out = blocking(|| edge.run(&["sync"]));
                assert!(
                    out.status.success(),
                    "{}: sync {pass} of {} on a healed network: {}",
                    self.where_(),
                    edge.name(),
                    String::from_utf8_lossy(&out.stderr)
                );
            }
        }
    }

    /// The last act: the third person is removed (their records kept). Their machines
    /// are refused; everyone else's converge as before, their shared knowledge still
    /// named as theirs, and no one gains a byte of anyone's personal text.
    async fn remove_a_person(&mut self) {
        self.round = self.plan.rounds;
        let gone = PEOPLE.len() - 1;
        self.storage
            .remove_person(
                self.account,
                &format!("{}@acme.dev", PEOPLE[gone]),
                false,
                "simulation",
            )
            .await
            .expect("remove");
        self.note("person removed");
        for machine in self.machines.iter_mut().filter(|m| m.person == gone) {
            machine.enrolled = false;
            let out = blocking(|| machine.edge.run(&["sync"]));
            assert!(
                !out.status.success(),
                "seed {}: {} syncs after its person was removed",
                self.plan.seed,
                machine.edge.name()
            );
        }
        self.heal_and_sync().await;
        self.check().await;
    }

    /// The service's rows holding `rec`'s token: id, writer, deleted.
    async fn on_central(&self, rec: &Rec) -> Vec<(String, String, bool)> {
        let (table, column) = match rec.kind {
            Kind::Prompt => ("memory_observations_remote", "input || title"),
            Kind::Memory => ("memory_knowledge", "body::text"),
        };
        let pool = self.replicas[0].storage.pool();
        sqlx::query_as::<_, (uuid::Uuid, uuid::Uuid, bool)>(sqlx::AssertSqlSafe(format!(
            "SELECT id, machine_id, deleted FROM {table} WHERE {column} LIKE $1"
        )))
        .bind(format!("%{}%", rec.token))
        .fetch_all(pool)
        .await
        .expect("central rows")
        .into_iter()
        .map(|(id, machine, deleted)| (id.to_string(), machine.to_string(), deleted))
        .collect()
    }

    async fn check(&self) {
        let at = self.where_();
        for rec in &self.model {
            let rows = self.on_central(rec).await;
            let live: Vec<_> = rows.iter().filter(|r| !r.2).collect();
            if rec.live {
                assert_eq!(
                    live.len(),
                    1,
                    "{at}: {} ({:?} by {}) must be live on the service once: {rows:?}",
                    rec.token,
                    rec.kind,
                    self.machines[rec.machine].edge.name()
                );
                // The person who wrote it stays its author; the machine too, but for
                // a memory one of their other machines superseded (marking it wrote
                // its new version there).
                let named = self.machines.iter().find(|m| m.id == live[0].1);
                let writer = &self.machines[rec.machine];
                let kept = match named {
                    Some(named) if rec.standing => named.id == writer.id,
                    Some(named) => named.person == writer.person,
                    None => false,
                };
                assert!(
                    kept,
                    "{at}: {} ({:?}, {}) written by {} is attributed to {}",
                    rec.token,
                    rec.kind,
                    if rec.standing {
                        "standing"
                    } else {
                        "superseded"
                    },
                    writer.edge.name(),
                    named.map_or(live[0].1.as_str(), |m| m.edge.name())
                );
            } else {
                assert!(
                    live.is_empty(),
                    "{at}: {} was forgotten or erased and is live on the service: {rows:?}",
                    rec.token
                );
            }
        }
        for (m, machine) in self.machines.iter().enumerate() {
            for rec in &self.model {
                if !machine.enrolled {
                    // A removed person's machine keeps what it had; only privacy
                    // is asked of it below.
                    if rec.person != machine.person && !rec.shared {
                        let bytes = blocking(|| machine.edge.stores(&rec.token));
                        assert!(
                            !bytes,
                            "{at}: removed {} holds {}",
                            machine.edge.name(),
                            rec.token
                        );
                    }
                    continue;
                }
                let held = self.local_id(m, rec).is_some();
                let theirs = rec.person != machine.person;
                if theirs && !rec.shared {
                    let bytes = blocking(|| machine.edge.stores(&rec.token));
                    assert!(
                        !bytes,
                        "{at}: {} holds {}'s personal {} ({:?})",
                        machine.edge.name(),
                        PEOPLE[rec.person],
                        rec.token,
                        rec.kind
                    );
                    continue;
                }
                let expected = rec.live && (!theirs || rec.kind == Kind::Memory);
                if expected {
                    assert!(
                        held,
                        "{at}: {} lacks {} ({:?} by {}, {})",
                        machine.edge.name(),
                        rec.token,
                        rec.kind,
                        self.machines[rec.machine].edge.name(),
                        if rec.shared { "shared" } else { "personal" }
                    );
                } else if !rec.live {
                    assert!(
                        !held,
                        "{at}: {} still shows {}, forgotten or erased",
                        machine.edge.name(),
                        rec.token
                    );
                }
            }
        }
    }
}
