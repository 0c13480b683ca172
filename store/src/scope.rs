//! Filter tokens: each record's project, kind and machine as single FTS5 tokens in
//! the `scope` column, so `--project`, `--type` and `--machine` narrow a search
//! inside the full-text index (a doclist intersection) instead of by scanning rows.

use solaria_shared::{MachineId, ObservationKind};

/// FNV-1a, 64 bits: stable across versions and machines (unlike `DefaultHasher`).
fn fnv1a(text: &str) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.as_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The token of a project key.
pub fn project(key: &str) -> String {
    format!("zzp{:016x}", fnv1a(key))
}

/// The token of an observation kind.
pub fn kind(kind: ObservationKind) -> String {
    kind_named(kind.as_str())
}

/// The token of a kind by name (observation kinds and knowledge kinds share one
/// namespace: their names never collide).
pub fn kind_named(name: &str) -> String {
    format!("zzk{}", name.replace('_', ""))
}

/// The token of a machine.
pub fn machine(machine: MachineId) -> String {
    format!("zzm{}", machine.as_uuid().simple())
}

/// The `scope` text of an observation.
pub fn observation(project_key: &str, k: ObservationKind, m: MachineId) -> String {
    format!("{} {} {}", project(project_key), kind(k), machine(m))
}

/// The `scope` text of a knowledge record.
pub fn knowledge(project_key: &str, k: solaria_shared::KnowledgeKind, m: MachineId) -> String {
    format!(
        "{} {} {}",
        project(project_key),
        kind_named(k.as_str()),
        machine(m)
    )
}

/// The `scope` text of a summary.
pub fn summary(project_key: &str, m: MachineId) -> String {
    format!("{} {}", project(project_key), machine(m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_stable_single_words() {
        assert_eq!(
            project("github.com/acme/api"),
            project("github.com/acme/api")
        );
        assert_ne!(
            project("github.com/acme/api"),
            project("github.com/acme/api2")
        );
        assert_eq!(kind(ObservationKind::ToolUse), "zzktooluse");
        for t in [
            project("x"),
            kind(ObservationKind::Prompt),
            machine(MachineId::new()),
        ] {
            assert!(t.chars().all(|c| c.is_ascii_alphanumeric()), "{t}");
        }
    }
}
