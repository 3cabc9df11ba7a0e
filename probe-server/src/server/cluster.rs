//! This instance's view of the others sharing its PostgreSQL database: the
//! store, and the notifications of one `LISTEN` connection (jobs that became
//! claimable, posts left for this instance, new live events of a probe).

use crate::store::SharedStore;
use crate::store::postgres::PostgresStore;
use crate::store::postgres::listen::{Listener, Signals};
use std::sync::Arc;

/// The instances' shared database, with its notifications. Clones share them.
#[derive(Clone)]
pub struct Cluster {
    /// The database.
    pub store: PostgresStore,
    /// What the listener announces.
    pub signals: Signals,
    _listener: Arc<Listener>,
}

impl Cluster {
    /// The cluster of `store` when it is PostgreSQL (listening from now on),
    /// `None` for SQLite (one instance).
    pub fn join(store: &SharedStore) -> Option<Self> {
        let pg = store.postgres_store()?;
        let signals = Signals::default();
        Some(Cluster {
            store: pg.clone(),
            _listener: Arc::new(pg.listen(signals.clone())),
            signals,
        })
    }
}
