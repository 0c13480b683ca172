//! This machine's enrollment with a central service: the server, the machine and
//! account ids and the machine credential, in a 0600 file of the data dir.

use serde::{Deserialize, Serialize};
use solaria_shared::MachineId;
use std::path::{Path, PathBuf};
use uuid::Uuid;

/// What `solaria login` obtained.
#[derive(Clone, Serialize, Deserialize)]
pub struct Credentials {
    pub server: String,
    pub machine_id: MachineId,
    pub account_id: Uuid,
    pub credential: String,
    /// A CA certificate (PEM) to trust for this server, for self-hosted services.
    #[serde(default)]
    pub ca_cert: Option<PathBuf>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("server", &self.server)
            .field("machine_id", &self.machine_id)
            .field("account_id", &self.account_id)
            .field("credential", &"***")
            .finish()
    }
}

/// The credentials file in a data dir.
pub fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("credentials.json")
}

/// Reads the credentials, if this machine is logged in.
pub fn load(data_dir: &Path) -> std::io::Result<Option<Credentials>> {
    match std::fs::read(path(data_dir)) {
        Ok(bytes) => serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes the credentials, readable by this user only, atomically.
pub fn save(data_dir: &Path, creds: &Credentials) -> std::io::Result<()> {
    solaria_hook::files::private_dir(data_dir)?;
    let json = serde_json::to_vec_pretty(creds).map_err(std::io::Error::other)?;
    solaria_hook::files::write_atomic(&path(data_dir), &json, solaria_hook::files::Access::Private)
}

/// Forgets the credentials (logout).
pub fn remove(data_dir: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path(data_dir)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}
