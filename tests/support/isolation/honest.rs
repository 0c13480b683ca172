//! What the honest people do in a round. From the machine that pushes hand-made
//! batches: a session in a shared or a personal project that sometimes goes on in
//! the other one, its summary, sometimes its session record held back to the next
//! round (records arrive before their session at times), decisions and memories
//! in both kinds of project, iterations, their own supersessions and links, and a
//! vector for each. From the real edge: an agent session through the hooks, its
//! prompts in the shared project and sometimes in a personal one, a decision, and
//! a sync.

use super::oracle::Oracle;
use super::world::{Person, SHARED, World};
use crate::bench::Rng;
use crate::payloads::{prompt, session_start, stop};
use crate::records::{decision, observation, session, summary};
use serde_json::json;
use solaria_shared::embedding::{EmbeddingRefusal, WireEmbedding};
use solaria_shared::knowledge::{Decision, Iteration, Link, LinkKind, Memory};
use solaria_shared::wire::{RecordOutcome, WireRecord};
use solaria_shared::{
    Hlc, Knowledge, KnowledgeBody, KnowledgeId, ObservationKind, Project, UnixMillis,
};

/// The made-up model honest machines push vectors of.
pub const MODEL: &str = "test-model/8d";

/// A unit vector in 8 dimensions drawn from `rng`.
pub fn unit(rng: &mut Rng) -> Vec<f32> {
    let v: Vec<f32> = (0..8)
        .map(|_| (rng.draw() % 2001) as f32 / 1000.0 - 1.0)
        .collect();
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt().max(1e-6);
    v.into_iter().map(|x| x / n).collect()
}

/// A project of `key`.
pub fn project(key: &str) -> Project {
    Project {
        key: key.to_string(),
        name: key.rsplit('/').next().unwrap_or(key).to_string(),
    }
}

/// Stamps in order, from now on.
#[derive(Debug)]
pub struct Clock(u64);

impl Clock {
    pub fn now() -> Clock {
        Clock(UnixMillis::now().0 as u64)
    }

    pub fn tick(&mut self) -> Hlc {
        self.0 = self.0.max(UnixMillis::now().0 as u64) + 1;
        Hlc::new(self.0, 0)
    }
}

/// What a person's machine still has to push (a session record held back).
#[derive(Debug, Default)]
pub struct Held {
    pub records: Vec<(Person, WireRecord)>,
}

/// One honest batch per honest person, from their hand-made machine.
pub async fn api_round(
    world: &World,
    oracle: &mut Oracle,
    rng: &mut Rng,
    clock: &mut Clock,
    held: &mut Held,
) -> Result<usize, String> {
    let mut pushed = 0;
    for person in [Person::Alice, Person::Carol] {
        let m = &world.api[&person];
        let mut records: Vec<WireRecord> = held
            .records
            .iter()
            .filter(|(p, _)| *p == person)
            .map(|(_, r)| r.clone())
            .collect();
        held.records.retain(|(p, _)| *p != person);
        let mut later: Vec<WireRecord> = Vec::new();

        let home = either(rng, person);
        let elsewhere = if home == SHARED {
            person.personal()
        } else {
            SHARED.to_string()
        };
        let mut s = session(m.id, clock.tick());
        s.project = project(&home);
        oracle.sessions.insert(*s.id.as_uuid(), person);
        // Its prompts and a tool call; at times a prompt in the other project (the
        // person asked about another repository), first or last.
        let mut steps = vec![
            (home.clone(), ObservationKind::Prompt),
            (home.clone(), ObservationKind::ToolUse),
        ];
        match rng.draw() % 3 {
            0 => steps.insert(0, (elsewhere.clone(), ObservationKind::Prompt)),
            1 => steps.push((elsewhere.clone(), ObservationKind::Prompt)),
            _ => {}
        }
        let mut events = Vec::new();
        for (key, kind) in steps {
            let mut o = observation(m.id, s.id, clock.tick(), "");
            let marker = oracle.marker(person, &key, *o.id.as_uuid());
            let text = format!("{marker} reconcile the ledger totals");
            o.project = project(&key);
            o.kind = kind;
            o.title = text.clone();
            o.input = json!({ "prompt": text }).to_string();
            o.response = String::new();
            events.push(o);
        }
        if rng.draw().is_multiple_of(3) {
            later.push(s.clone().into());
        } else {
            records.push(s.clone().into());
        }
        records.extend(events.iter().cloned().map(WireRecord::from));
        // A session still going has no summary yet.
        if rng.draw().is_multiple_of(2) {
            let mut sum = summary(m.id, s.id, clock.tick(), "");
            let marker = oracle.marker(person, &home, *sum.id.as_uuid());
            sum.text = format!("{marker} reconciled the ledger");
            sum.key_points = vec![];
            sum.project = project(&home);
            oracle.standing.push(marker);
            records.push(sum.into());
        }

        // Knowledge in both kinds of project.
        let mut embeddings = Vec::new();
        for o in &events {
            embeddings.push(WireEmbedding::encode(
                *o.id.as_uuid(),
                o.meta.updated,
                MODEL,
                &unit(rng),
            ));
        }
        let mut write = Writing {
            oracle: &mut *oracle,
            person,
            machine: m.id,
            clock: &mut *clock,
        };
        for _ in 0..2 {
            let key = either(rng, person);
            let session = Some(s.id).filter(|_| key == home);
            let k = write.knowledge(&key, session, |marker| {
                decision(
                    &format!("{marker} keep the ledger in SQL"),
                    "SQL",
                    "fewer layers",
                )
            });
            if key != SHARED {
                write
                    .oracle
                    .personal_decisions
                    .push((*k.id.as_uuid(), person));
            }
            embeddings.push(WireEmbedding::encode(
                *k.id.as_uuid(),
                k.meta.updated,
                MODEL,
                &unit(rng),
            ));
            records.push(k.into());
        }
        let key = either(rng, person);
        records.push(
            write
                .knowledge(&key, None, |marker| {
                    KnowledgeBody::Memory(Memory {
                        content: format!("{marker} the ledger closes at midnight"),
                        ..Memory::default()
                    })
                })
                .into(),
        );
        if rng.draw().is_multiple_of(3) {
            let it = write.knowledge(&key, None, |marker| {
                KnowledgeBody::Iteration(Iteration {
                    title: format!("{marker} ledger rework"),
                    ..Iteration::default()
                })
            });
            let within = write.knowledge(&key, None, |marker| {
                KnowledgeBody::Decision(Decision {
                    title: format!("{marker} ledger rework in steps"),
                    chosen: "steps".into(),
                    iteration: Some(it.id),
                    ..Decision::default()
                })
            });
            records.extend([it.into(), within.into()]);
        }
        // Their own link, as the product lets them.
        let own: Vec<(uuid::Uuid, String)> = write
            .oracle
            .knowledge
            .iter()
            .filter(|(_, p, _)| *p == person)
            .map(|(id, _, key)| (*id, key.clone()))
            .collect();
        if own.len() > 2 && rng.draw().is_multiple_of(4) {
            let (to, key) = own[(rng.draw() % own.len() as u64) as usize].clone();
            let from = KnowledgeId::from_uuid(own[0].0);
            let link = write.knowledge(&key, None, |marker| {
                KnowledgeBody::Link(Link {
                    from: Some(from),
                    to: Some(KnowledgeId::from_uuid(to)),
                    relation: LinkKind::Relates,
                    note: format!("{marker} same ledger"),
                })
            });
            records.push(link.into());
        }

        pushed += records.len();
        let answer = push(world, person, &records, &embeddings).await?;
        for (r, outcome) in records.iter().zip(&answer.0) {
            match outcome {
                RecordOutcome::Applied { .. } => {}
                // A session record behind a claim made with a leaked id goes at
                // the next sync, once this machine's records name the session.
                RecordOutcome::Rejected { reason, .. }
                    if matches!(r, WireRecord::Session(_))
                        && reason.contains("another person's session") =>
                {
                    later.push(r.clone());
                }
                other => {
                    return Err(format!(
                        "{person:?}'s honest {} {} was not applied: {other:?}",
                        r.type_name(),
                        r.id()
                    ));
                }
            }
        }
        if !answer.1.is_empty() {
            return Err(format!(
                "{person:?}'s honest vectors were refused: {:?}",
                answer.1
            ));
        }
        for r in &records {
            oracle.honest_ids.push((r.id(), person));
        }
        held.records.extend(later.into_iter().map(|r| (person, r)));
    }
    Ok(pushed)
}

/// The shared project or `person`'s own, at random.
fn either(rng: &mut Rng, person: Person) -> String {
    if rng.draw().is_multiple_of(2) {
        SHARED.to_string()
    } else {
        person.personal()
    }
}

/// Writes an honest person's knowledge records, each registered with the oracle.
struct Writing<'a> {
    oracle: &'a mut Oracle,
    person: Person,
    machine: solaria_shared::MachineId,
    clock: &'a mut Clock,
}

impl Writing<'_> {
    /// A new record in project `key` whose body `body` makes around its marker;
    /// it must stand in every read that may show it.
    fn knowledge(
        &mut self,
        key: &str,
        session: Option<solaria_shared::SessionId>,
        body: impl FnOnce(&str) -> KnowledgeBody,
    ) -> Knowledge {
        let id = KnowledgeId::new();
        let marker = self.oracle.marker(self.person, key, *id.as_uuid());
        let k = Knowledge::new(
            id,
            self.machine,
            self.clock.tick(),
            project(key),
            session,
            body(&marker),
        );
        self.oracle.standing.push(marker);
        self.oracle
            .knowledge
            .push((*id.as_uuid(), self.person, key.to_string()));
        k
    }
}

/// Pushes `records` and `embeddings` as `person`'s API machine: the outcomes and
/// the vectors refused.
pub async fn push(
    world: &World,
    person: Person,
    records: &[WireRecord],
    embeddings: &[WireEmbedding],
) -> Result<(Vec<RecordOutcome>, Vec<EmbeddingRefusal>), String> {
    let answer = world
        .c
        .push_with(&world.api[&person], records, embeddings)
        .await;
    Ok((answer.results, answer.embeddings_refused))
}

/// An agent session on each honest edge: prompts in the shared project and, at
/// times, in the person's personal project (the agent moved on), a decision, a
/// sync.
pub fn edge_round(
    world: &World,
    oracle: &mut Oracle,
    rng: &mut Rng,
    round: usize,
) -> Result<(), String> {
    for e in &world.edges {
        let agent_session = format!("sim-{round}");
        let api = e.edge.project.clone();
        e.edge
            .hook("session-start", session_start(&agent_session, &api));
        let marker = oracle.marker(e.person, SHARED, uuid::Uuid::nil());
        e.edge.hook(
            "user-prompt-submit",
            prompt(
                &agent_session,
                &api,
                &format!("{marker} reconcile the ledger"),
            ),
        );
        if rng.draw().is_multiple_of(2) {
            let personal = e.person.personal();
            let marker = oracle.marker(e.person, &personal, uuid::Uuid::nil());
            e.edge.hook(
                "user-prompt-submit",
                prompt(
                    &agent_session,
                    &e.notes,
                    &format!("{marker} my own ledger diary"),
                ),
            );
        }
        // A session still going has no summary yet.
        if rng.draw().is_multiple_of(2) {
            e.edge.hook("stop", stop(&agent_session, &api));
        }
        let (dir, key) = if rng.draw().is_multiple_of(2) {
            (api.clone(), SHARED.to_string())
        } else {
            (e.notes.clone(), e.person.personal())
        };
        let marker = oracle.marker(e.person, &key, uuid::Uuid::nil());
        let title = format!("{marker} ledger in SQL");
        let decided = e.edge.json(
            &dir,
            &["decide", "--json", "--title", &title, "--chosen", "SQL"],
        );
        let id: uuid::Uuid = decided["record"]["id"]
            .as_str()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| format!("decide answered {decided}"))?;
        oracle.standing.push(marker);
        oracle.knowledge.push((id, e.person, key.clone()));
        oracle.honest_ids.push((id, e.person));
        if key != SHARED {
            oracle.personal_decisions.push((id, e.person));
        }
        for s in e.edge.strings(&format!(
            "SELECT id FROM sessions WHERE agent_session_id = '{agent_session}'"
        )) {
            if let Ok(id) = s.parse() {
                oracle.sessions.insert(id, e.person);
                oracle.honest_ids.push((id, e.person));
            }
        }
        sync(e)?;
    }
    Ok(())
}

/// `solaria sync` on an honest edge; a sync that fails is a failure of the run.
pub fn sync(e: &super::world::HonestEdge) -> Result<(), String> {
    let out = e.edge.run(&["sync"]);
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{:?}'s edge could not sync: {}",
            e.person,
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}
