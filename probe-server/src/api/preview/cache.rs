//! The link preview pictures drawn so far, kept in memory by what they draw: bounded in bytes
//! and in entries, the oldest dropped first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

/// The most pictures kept.
pub const MAX_ENTRIES: usize = 512;
/// The most bytes of pictures kept (32 MiB).
pub const MAX_BYTES: usize = 32 << 20;

/// Pictures by key, bounded in entries and bytes (first in, first out).
pub struct PictureCache {
    max_entries: usize,
    max_bytes: usize,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    pictures: HashMap<String, Arc<[u8]>>,
    order: VecDeque<String>,
    bytes: usize,
}

impl Default for PictureCache {
    fn default() -> Self {
        PictureCache::new(MAX_ENTRIES, MAX_BYTES)
    }
}

impl PictureCache {
    /// A cache of at most `max_entries` pictures and `max_bytes` bytes of them.
    pub fn new(max_entries: usize, max_bytes: usize) -> Self {
        PictureCache {
            max_entries,
            max_bytes,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// The picture kept under `key`, if any.
    pub fn get(&self, key: &str) -> Option<Arc<[u8]>> {
        self.lock().pictures.get(key).cloned()
    }

    /// Keeps `picture` under `key` (a picture larger than the whole bound is not kept), dropping
    /// the oldest until the bounds hold.
    pub fn insert(&self, key: String, picture: Arc<[u8]>) {
        if picture.len() > self.max_bytes || self.max_entries == 0 {
            return;
        }
        let mut inner = self.lock();
        if inner.pictures.contains_key(&key) {
            return;
        }
        inner.bytes += picture.len();
        inner.order.push_back(key.clone());
        inner.pictures.insert(key, picture);
        while inner.bytes > self.max_bytes || inner.order.len() > self.max_entries {
            let Some(old) = inner.order.pop_front() else {
                break;
            };
            if let Some(gone) = inner.pictures.remove(&old) {
                inner.bytes -= gone.len();
            }
        }
    }

    /// How many pictures and bytes are kept now.
    pub fn usage(&self) -> (usize, usize) {
        let inner = self.lock();
        (inner.pictures.len(), inner.bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A panic while holding the lock leaves a consistent map: keep using it.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn picture(len: usize) -> Arc<[u8]> {
        vec![7u8; len].into()
    }

    #[test]
    fn the_cache_holds_to_its_entry_bound_dropping_the_oldest() {
        let cache = PictureCache::new(3, 1_000);
        for i in 0..5 {
            cache.insert(format!("k{i}"), picture(10));
        }
        assert_eq!(cache.usage(), (3, 30));
        assert!(cache.get("k0").is_none() && cache.get("k1").is_none());
        assert_eq!(cache.get("k4").as_deref(), Some(&[7u8; 10][..]));
    }

    #[test]
    fn the_cache_holds_to_its_byte_bound_and_skips_a_picture_larger_than_it() {
        let cache = PictureCache::new(100, 250);
        for i in 0..10 {
            cache.insert(format!("k{i}"), picture(100));
            assert!(cache.usage().1 <= 250, "{:?}", cache.usage());
        }
        assert_eq!(cache.usage(), (2, 200));
        assert!(cache.get("k9").is_some() && cache.get("k8").is_some());
        cache.insert("big".into(), picture(251));
        assert!(cache.get("big").is_none());
        assert_eq!(cache.usage(), (2, 200), "the kept ones stay");
        // Inserting a key again keeps the first copy and counts it once.
        cache.insert("k9".into(), picture(100));
        assert_eq!(cache.usage(), (2, 200));
    }
}
