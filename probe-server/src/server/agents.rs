//! The agents a server knows (`--agent NAME=TOKEN`, `H123_AGENTS`): who they
//! are, the SHA-256 of each token (never the token itself), and when each
//! was last heard from.
//!
//! A request from an agent carries `Authorization: Bearer TOKEN` and its
//! version in `h123-agent-version`: the token's digest is compared with every
//! configured one in constant time, and a version the server does not
//! support (see [`version_supported`]) is refused.

use super::seal::JobKey;
use h123_shared::api::{VantageInfo, VantageKind};
use h123_shared::vantage::{Vantage, valid_name};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long a job stays an agent's without a word from it, and how long an
/// agent counts as online after its last request.
pub const LEASE: Duration = Duration::from_secs(30);

/// The environment variable that lists agents as `NAME=TOKEN,NAME=TOKEN`
/// (so tokens stay out of `ps`).
pub const AGENTS_ENV: &str = "H123_AGENTS";

/// The shortest agent token accepted (16 characters).
pub const MIN_TOKEN_LEN: usize = 16;

/// Whether `token` may be an agent's: at least [`MIN_TOKEN_LEN`] printable
/// ASCII characters (the server's check, and the agent's at start).
pub fn valid_token(token: &str) -> bool {
    token.len() >= MIN_TOKEN_LEN && token.chars().all(|c| c.is_ascii_graphic())
}

/// One configured agent: its name and its token's digest.
#[derive(Clone, PartialEq, Eq)]
pub struct AgentSpec {
    /// The agent's vantage name.
    pub name: String,
    digest: [u8; 32],
}

impl std::fmt::Debug for AgentSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The digest stays out of logs too.
        f.debug_struct("AgentSpec")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl std::str::FromStr for AgentSpec {
    type Err = String;

    /// Parses `NAME=TOKEN`; keeps only the token's digest.
    fn from_str(text: &str) -> Result<Self, String> {
        let (name, token) = text
            .split_once('=')
            .ok_or_else(|| "an agent is NAME=TOKEN".to_owned())?;
        if !valid_name(name) {
            let shown: String = name.chars().take(40).collect();
            return Err(format!(
                "agent name `{shown}` must be 1 to 32 letters, digits, `-` or `_`"
            ));
        }
        if !valid_token(token) {
            return Err(format!(
                "agent {name}'s token must be at least {MIN_TOKEN_LEN} printable ASCII characters"
            ));
        }
        Ok(AgentSpec {
            name: name.to_owned(),
            digest: digest(token),
        })
    }
}

/// `H123_AGENTS`'s value (`NAME=TOKEN,NAME=TOKEN`) as agents.
///
/// # Errors
/// The first entry that does not parse, in words (without its token).
pub fn parse_list(text: &str) -> Result<Vec<AgentSpec>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(str::parse)
        .collect()
}

/// Whether an agent of `agent_version` may work for this server: the same
/// `major.minor` as the server's own version, since the job and result
/// formats may change between minor versions (patch releases keep them).
pub fn version_supported(agent_version: &str) -> bool {
    h123_shared::agent::major_minor(agent_version)
        == h123_shared::agent::major_minor(env!("CARGO_PKG_VERSION"))
}

/// What an agent last said about itself.
#[derive(Clone, Debug)]
struct Seen {
    label: Option<String>,
    tags: Vec<String>,
    version: String,
    at: Instant,
}

/// The configured agents and when each was last heard from.
#[derive(Debug, Default)]
pub struct Agents {
    specs: Vec<AgentSpec>,
    seen: Mutex<HashMap<String, Seen>>,
    lease: Duration,
}

impl Agents {
    /// The agents of `specs` (a later entry with the same name replaces an
    /// earlier one), online for `lease` after each request.
    pub fn new(specs: &[AgentSpec], lease: Duration) -> Self {
        let mut kept: Vec<AgentSpec> = Vec::new();
        for spec in specs {
            kept.retain(|k| k.name != spec.name);
            kept.push(spec.clone());
        }
        kept.sort_by(|a, b| a.name.cmp(&b.name));
        Agents {
            specs: kept,
            seen: Mutex::default(),
            lease,
        }
    }

    /// The name of the agent whose token this is. Every configured digest is
    /// compared, each in constant time, so the answer's timing says nothing
    /// about which digest came close.
    pub fn authenticate(&self, token: &str) -> Option<&str> {
        let offered = digest(token);
        let mut found = None;
        for spec in &self.specs {
            if constant_time_eq(&spec.digest, &offered) {
                found = Some(spec.name.as_str());
            }
        }
        found
    }

    /// The key agent `name`'s jobs are sealed under in the shared queue.
    pub fn job_key(&self, name: &str) -> Option<JobKey> {
        self.specs
            .iter()
            .find(|s| s.name == name)
            .map(|s| JobKey::for_agent(&s.digest))
    }

    /// Whether `name` is a configured agent.
    pub fn contains(&self, name: &str) -> bool {
        self.specs.iter().any(|s| s.name == name)
    }

    /// Notes a request from agent `name`, with what it says about itself.
    pub fn note_seen(&self, name: &str, label: Option<String>, tags: Vec<String>, version: &str) {
        let seen = Seen {
            label,
            tags,
            version: version.chars().take(64).collect(),
            at: crate::probe::trace::now(),
        };
        self.lock().insert(name.to_owned(), seen);
    }

    /// Renews agent `name`'s last-seen time (a request that says nothing new).
    pub fn touch(&self, name: &str) {
        if let Some(seen) = self.lock().get_mut(name) {
            seen.at = crate::probe::trace::now();
        }
    }

    /// Agent `name` as a vantage: its name, and the label and tags it last gave.
    pub fn vantage(&self, name: &str) -> Vantage {
        match self.lock().get(name) {
            Some(seen) => Vantage {
                name: name.to_owned(),
                label: seen.label.clone(),
                tags: seen.tags.clone(),
            },
            None => Vantage::named(name),
        }
    }

    /// Every configured agent as `GET /api/v1/vantages` lists it, by name.
    pub fn list(&self) -> Vec<VantageInfo> {
        let seen = self.lock();
        let now = crate::probe::trace::now();
        self.specs
            .iter()
            .map(|spec| {
                let last = seen.get(&spec.name);
                VantageInfo {
                    vantage: Vantage {
                        name: spec.name.clone(),
                        label: last.and_then(|s| s.label.clone()),
                        tags: last.map(|s| s.tags.clone()).unwrap_or_default(),
                    },
                    kind: VantageKind::Agent,
                    version: last.map(|s| s.version.clone()),
                    online: last.is_some_and(|s| now.saturating_duration_since(s.at) <= self.lease),
                    last_seen_ms_ago: last.map(|s| {
                        u64::try_from(now.saturating_duration_since(s.at).as_millis())
                            .unwrap_or(u64::MAX)
                    }),
                }
            })
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Seen>> {
        self.seen.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A token's SHA-256 digest, as tokens are kept.
pub(crate) fn digest(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// Equality of two digests whose time does not depend on where they differ.
pub(crate) fn constant_time_eq(a: &[u8; 32], b: &[u8; 32]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_authenticate_their_agent_only() {
        let specs = parse_list("fra1=aaaaaaaaaaaaaaaa1, sfo1=bbbbbbbbbbbbbbbb2").unwrap();
        let agents = Agents::new(&specs, LEASE);
        assert_eq!(agents.authenticate("aaaaaaaaaaaaaaaa1"), Some("fra1"));
        assert_eq!(agents.authenticate("bbbbbbbbbbbbbbbb2"), Some("sfo1"));
        assert_eq!(agents.authenticate("aaaaaaaaaaaaaaaa2"), None);
        assert_eq!(agents.authenticate(""), None);
        assert!(!format!("{specs:?}").contains("aaaa"), "{specs:?}");
    }

    #[test]
    fn bad_entries_are_refused_without_their_token() {
        assert!("fra1".parse::<AgentSpec>().is_err());
        let short = "fra1=short".parse::<AgentSpec>().unwrap_err();
        assert!(!short.contains("short"), "{short}");
        assert!("bad name=aaaaaaaaaaaaaaaaaa".parse::<AgentSpec>().is_err());
        assert!(parse_list("").unwrap().is_empty());
    }

    #[test]
    fn only_the_same_minor_version_is_supported() {
        let own = env!("CARGO_PKG_VERSION");
        assert!(version_supported(own));
        assert!(version_supported(&format!(
            "{}.999",
            h123_shared::agent::major_minor(own)
        )));
        assert!(!version_supported("0.0.1-old"));
        assert!(!version_supported(""));
    }

    #[test]
    fn agents_are_listed_offline_until_heard_from() {
        let specs = parse_list("fra1=aaaaaaaaaaaaaaaa1").unwrap();
        let agents = Agents::new(&specs, LEASE);
        let listed = agents.list();
        assert_eq!(listed.len(), 1);
        assert!(!listed[0].online);
        agents.note_seen("fra1", Some("Frankfurt".into()), vec!["eu".into()], "9.9.9");
        let listed = agents.list();
        assert!(listed[0].online);
        assert_eq!(listed[0].vantage.label.as_deref(), Some("Frankfurt"));
        assert_eq!(listed[0].version.as_deref(), Some("9.9.9"));
    }
}
