//! A monitor's status, its page's series and the page drawn from them, kept until its next slot
//! and for at most [`KEPT_MS`], so a flood of one monitor's pages reads its history and draws
//! the page once per few seconds. At most [`MAX_ENTRIES`] are kept; the one expiring first
//! makes room.

use h123_shared::monitor::Series;
use h123_shared::monitor_status::MonitorStatus;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The longest an answer is kept (a run that lands meanwhile shows after this at the latest).
pub const KEPT_MS: u64 = 10_000;

/// Most answers kept.
pub const MAX_ENTRIES: usize = 256;

/// What a key names: a monitor's status, or its page's series over one window.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Key {
    /// The monitor.
    pub id: String,
    /// The page's window (`1h` ... `30d`), `None` for the status alone.
    pub range: Option<&'static str>,
}

/// A kept answer.
#[derive(Clone, Debug)]
pub struct Kept {
    /// The status.
    pub status: Arc<MonitorStatus>,
    /// The page's series, one per metric (empty for the status alone).
    pub series: Arc<Vec<Series>>,
    /// The page's markup, once drawn (with the deliveries and alerts of that moment).
    pub page: Arc<OnceLock<String>>,
}

/// The kept answers, by key, with when each stops being kept.
#[derive(Default)]
pub struct MonitorCache {
    entries: Mutex<HashMap<Key, (u64, Kept)>>,
}

impl MonitorCache {
    /// The answer kept for `key` at `now`, if any.
    pub fn get(&self, key: &Key, now: u64) -> Option<Kept> {
        let entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries
            .get(key)
            .filter(|(until, _)| now < *until)
            .map(|(_, kept)| kept.clone())
    }

    /// Keeps `kept` for `key`, computed at `now`, until `next_slot` (the monitor's next run) or
    /// [`KEPT_MS`], whichever is sooner.
    pub fn put(&self, key: Key, kept: Kept, now: u64, next_slot: u64) {
        let until = next_slot.min(now + KEPT_MS);
        if until <= now {
            return;
        }
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        entries.retain(|_, (until, _)| now < *until);
        if entries.len() >= MAX_ENTRIES
            && let Some(first) = entries
                .iter()
                .min_by_key(|(_, (until, _))| *until)
                .map(|(key, _)| key.clone())
        {
            entries.remove(&first);
        }
        entries.insert(key, (until, kept));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(at: u64) -> Kept {
        Kept {
            status: Arc::new(MonitorStatus {
                at_unix_ms: at,
                rows: Vec::new(),
                missed: Vec::new(),
                latest: None,
            }),
            series: Arc::new(Vec::new()),
            page: Arc::default(),
        }
    }

    fn key(id: &str) -> Key {
        Key {
            id: id.to_owned(),
            range: None,
        }
    }

    #[test]
    fn an_answer_is_kept_until_the_next_slot_or_ten_seconds_and_room_is_bounded() {
        let cache = MonitorCache::default();
        cache.put(key("a"), kept(1), 1000, 3000);
        assert_eq!(cache.get(&key("a"), 2999).unwrap().status.at_unix_ms, 1);
        assert!(cache.get(&key("a"), 3000).is_none(), "the next run is due");
        cache.put(key("b"), kept(2), 1000, u64::MAX);
        assert!(cache.get(&key("b"), 1000 + KEPT_MS - 1).is_some());
        assert!(cache.get(&key("b"), 1000 + KEPT_MS).is_none());
        // A slot already due keeps nothing.
        cache.put(key("c"), kept(3), 1000, 900);
        assert!(cache.get(&key("c"), 1000).is_none());
        for i in 0..MAX_ENTRIES + 10 {
            cache.put(key(&format!("m{i}")), kept(4), 5000, 9000 + i as u64);
        }
        let entries = cache.entries.lock().unwrap();
        assert_eq!(entries.len(), MAX_ENTRIES);
        assert!(
            !entries.contains_key(&key("m0")),
            "the soonest to expire made room"
        );
    }
}
