//! The store suite: every case runs through `SharedStore` against SQLite
//! (module `sqlite`) and against PostgreSQL (module `postgres`, on a
//! throwaway cluster this binary starts once; skipped when PostgreSQL is not
//! installed, required when `H123_POSTGRES_TESTS=1`). PostgreSQL alone adds
//! the cases of several instances on one database, and `serve` runs the real
//! `h123 serve` on it (one test binary for both, to link one less).

use h123::store::location::DbLocation;
use h123::store::postgres::{PostgresSettings, PostgresStore};
use h123::store::size_cap::{DELIVERIES_PER_MONITOR, SizeCap};
use h123::store::sqlite::SqliteStore;
use h123::store::{SharedStore, StoreError};
use h123_shared::api::{BenchRecord, BenchSummary, ProbeRecord, ProbeStatus, ProbeSummary};
use h123_shared::bench::{BenchOptions, BenchResult};
use h123_shared::{Header, ProbeOptions, ProbeResult, Visibility};
use h123_target::postgres::PgCluster;
use std::path::PathBuf;
use std::time::Duration;

/// A store under test, and how to reach its database behind its back.
struct Fixture {
    store: SharedStore,
    db: Db,
    _dir: Option<tempfile::TempDir>,
}

enum Db {
    Sqlite(PathBuf),
    Postgres(String),
}

/// The lease of the PostgreSQL fixtures: short, so dead instances are found quickly.
const LEASE: Duration = Duration::from_millis(1500);

fn settings(heartbeat: Duration) -> PostgresSettings {
    PostgresSettings {
        heartbeat,
        lease: LEASE,
        pool_size: 8,
        ..PostgresSettings::default()
    }
}

async fn connect(url: &str, heartbeat: Duration) -> PostgresStore {
    let DbLocation::Postgres(url) = url.parse().expect("URL") else {
        panic!("not a PostgreSQL URL: {url}")
    };
    PostgresStore::connect(&url, settings(heartbeat))
        .await
        .expect("PostgreSQL store connects")
}

impl Fixture {
    async fn sqlite() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub/db.sqlite");
        Fixture {
            store: SharedStore::new(SqliteStore::open(&path).unwrap()),
            db: Db::Sqlite(path),
            _dir: Some(dir),
        }
    }

    /// A store on a new database of the shared cluster. Its heartbeat is
    /// hourly, so it finishes no other instance's records behind a case's back.
    async fn postgres() -> Option<Self> {
        let url = PgCluster::shared()?.create_database().expect("createdb");
        let store = connect(&url, Duration::from_secs(3600)).await;
        Some(Fixture {
            store: SharedStore::postgres(store),
            db: Db::Postgres(url),
            _dir: None,
        })
    }

    /// Another store on the same database: SQLite reopened, or a new PostgreSQL
    /// instance whose heartbeat runs every `heartbeat`.
    async fn another(&self, heartbeat: Duration) -> SharedStore {
        match &self.db {
            Db::Sqlite(path) => SharedStore::new(SqliteStore::open(path).unwrap()),
            Db::Postgres(url) => SharedStore::postgres(connect(url, heartbeat).await),
        }
    }

    /// How long a dead server's records stay `running` (0 for SQLite: one instance).
    fn lease(&self) -> Duration {
        match self.db {
            Db::Sqlite(_) => Duration::ZERO,
            Db::Postgres(_) => LEASE,
        }
    }

    /// Runs `sql` on the database directly, past the store's code.
    async fn raw(&self, sql: &str) -> Result<u64, String> {
        match &self.db {
            Db::Sqlite(path) => rusqlite::Connection::open(path)
                .and_then(|c| c.execute(sql, []))
                .map(|n| n as u64)
                .map_err(|e| e.to_string()),
            Db::Postgres(url) => {
                let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
                    .await
                    .map_err(|e| e.to_string())?;
                tokio::spawn(connection);
                client
                    .execute(sql, &[])
                    .await
                    .map_err(|e| format!("{e}: {:?}", e.as_db_error().map(|d| d.message())))
            }
        }
    }
}

fn record(id: &str, status: ProbeStatus) -> ProbeRecord {
    let options = ProbeOptions {
        url: "https://example.com/".into(),
        ..ProbeOptions::default()
    };
    ProbeRecord {
        id: id.into(),
        status,
        created_at_unix_ms: 1,
        result: ProbeResult::empty(options.clone(), 1, None),
        options,
        queued_ms: None,
        cancel_reason: None,
        vantages: Vec::new(),
        browser: None,
        monitor: None,
    }
}

fn bench(id: &str) -> BenchRecord {
    BenchRecord {
        id: id.into(),
        status: ProbeStatus::Running,
        created_at_unix_ms: 5,
        finished_at_unix_ms: None,
        options: BenchOptions {
            url: "https://example.com/".into(),
            ..BenchOptions::default()
        },
        progress: None,
        result: None,
        steps: Vec::new(),
        cancel_reason: None,
    }
}

fn ids(list: Vec<ProbeSummary>) -> Vec<String> {
    list.into_iter().map(|s| s.id).collect()
}

fn bench_ids(list: Vec<BenchSummary>) -> Vec<String> {
    list.into_iter().map(|s| s.id).collect()
}

async fn status_of(store: &SharedStore, id: &str) -> ProbeStatus {
    store.get(id.into()).await.unwrap().unwrap().status
}

async fn records_round_trip_and_become_immutable(f: &Fixture) {
    let store = &f.store;
    store
        .insert(record("a", ProbeStatus::Running), None)
        .await
        .unwrap();
    assert_eq!(status_of(store, "a").await, ProbeStatus::Running);
    let mut done = record("a", ProbeStatus::Done);
    done.queued_ms = Some(3);
    store.update(done.clone()).await.unwrap();
    assert_eq!(store.get("a".into()).await.unwrap(), Some(done));
    let again = store.update(record("a", ProbeStatus::Running)).await;
    assert!(matches!(again, Err(StoreError::Immutable(_))), "{again:?}");
    let unknown = store.update(record("nope", ProbeStatus::Done)).await;
    assert!(
        matches!(unknown, Err(StoreError::Immutable(_))),
        "{unknown:?}"
    );
    assert!(store.get("missing".into()).await.unwrap().is_none());
    let raw = f
        .raw("UPDATE probes SET status = 'running' WHERE id = 'a'")
        .await;
    assert!(
        raw.as_ref().is_err_and(|e| e.contains("immutable")),
        "the database itself refuses: {raw:?}"
    );
    assert!(
        f.raw("DELETE FROM probes WHERE id = 'a'").await.is_ok(),
        "retention may delete a finished record whole"
    );
}

async fn secrets_are_redacted_before_they_are_stored(f: &Fixture) {
    let mut secret = record("s", ProbeStatus::Running);
    secret.options.url = "https://user:SECRET1@example.com/".into();
    secret.options.headers = vec![Header {
        name: "authorization".into(),
        value: "Bearer SECRET2".into(),
    }];
    f.store.insert(secret, None).await.unwrap();
    let stored = serde_json::to_string(&f.store.get("s".into()).await.unwrap()).unwrap();
    assert!(!stored.contains("SECRET"), "{stored}");
}

async fn concurrent_writes_are_all_committed_and_a_bad_one_fails_alone(f: &Fixture) {
    let store = &f.store;
    store
        .insert(record("dup", ProbeStatus::Running), Some("o".into()))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let id = if i == 7 {
                    "dup".to_owned()
                } else {
                    format!("id{i}")
                };
                let outcome = store
                    .insert(record(&id, ProbeStatus::Running), Some("o".into()))
                    .await;
                (i, outcome)
            })
        })
        .collect();
    for task in tasks {
        let (i, outcome) = task.await.unwrap();
        assert_eq!(outcome.is_err(), i == 7, "insert {i}: {outcome:?}");
    }
    let all = store.list(100, None, Some("o".into())).await.unwrap();
    assert_eq!(all.len(), 32);
    // Updates share commits too; one of a finished record is refused alone.
    store
        .update(record("dup", ProbeStatus::Done))
        .await
        .unwrap();
    let tasks: Vec<_> = (0..32)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let id = if i == 7 {
                    "dup".to_owned()
                } else {
                    format!("id{i}")
                };
                (i, store.update(record(&id, ProbeStatus::Done)).await)
            })
        })
        .collect();
    for task in tasks {
        let (i, outcome) = task.await.unwrap();
        match outcome {
            Err(StoreError::Immutable(_)) => assert_eq!(i, 7),
            other => assert!(i != 7 && other.is_ok(), "update {i}: {other:?}"),
        }
    }
    let reopened = f.another(Duration::from_secs(3600)).await;
    let all = reopened.list(100, None, Some("o".into())).await.unwrap();
    assert_eq!(all.len(), 32);
    assert!(all.iter().all(|p| p.status == ProbeStatus::Done), "{all:?}");
}

async fn list_pages_newest_first_by_owner_and_visibility(f: &Fixture) {
    let store = &f.store;
    for id in ["a", "b", "c"] {
        store
            .insert(record(id, ProbeStatus::Done), Some("o".into()))
            .await
            .unwrap();
    }
    let mut public = record("p", ProbeStatus::Done);
    public.options.visibility = Visibility::Public;
    public.options.url = "https://u:pw@example.com/public".into();
    store.insert(public, Some("other".into())).await.unwrap();
    store
        .insert(record("x", ProbeStatus::Running), Some("other".into()))
        .await
        .unwrap();
    let list = |limit, before: Option<&str>, owner: Option<&str>| {
        store.list(limit, before.map(Into::into), owner.map(Into::into))
    };
    assert_eq!(ids(list(2, None, Some("o")).await.unwrap()), ["p", "c"]);
    assert_eq!(
        ids(list(2, Some("c"), Some("o")).await.unwrap()),
        ["b", "a"]
    );
    assert_eq!(ids(list(10, Some("b"), Some("o")).await.unwrap()), ["a"]);
    assert_eq!(
        ids(list(10, None, None).await.unwrap()),
        ["p"],
        "public only"
    );
    assert_eq!(
        ids(list(10, None, Some("other")).await.unwrap()),
        ["x", "p"]
    );
    let summary = &list(1, None, None).await.unwrap()[0];
    assert_eq!(summary.visibility, Visibility::Public);
    assert_eq!(summary.url, "https://u:[redacted]@example.com/public");
    assert_eq!(summary.protocols, ProbeOptions::default().protocols);
    assert!(matches!(
        list(2, Some("zz"), None).await,
        Err(StoreError::UnknownCursor(_))
    ));
}

async fn benches_round_trip_apart_from_probes_and_become_immutable(f: &Fixture) {
    let store = &f.store;
    store
        .insert(record("same", ProbeStatus::Running), None)
        .await
        .unwrap();
    store.insert_bench(bench("same"), None).await.unwrap();
    assert_eq!(
        store.get_bench("same".into()).await.unwrap(),
        Some(bench("same"))
    );
    let mut done = bench("same");
    done.status = ProbeStatus::Done;
    done.finished_at_unix_ms = Some(9);
    done.result = Some(BenchResult::new(done.options.clone(), 6));
    store.finish_bench(done.clone()).await.unwrap();
    assert_eq!(
        store.get_bench("same".into()).await.unwrap(),
        Some(done.clone())
    );
    let again = store.finish_bench(done).await;
    assert!(matches!(again, Err(StoreError::Immutable(_))), "{again:?}");
    assert!(matches!(
        store.finish_bench(bench("unknown")).await,
        Err(StoreError::Immutable(_))
    ));
    let raw = f
        .raw("UPDATE benches SET result = NULL WHERE id = 'same'")
        .await;
    assert!(raw.is_err(), "the database itself refuses");
    assert!(store.get_bench("missing".into()).await.unwrap().is_none());
    // A sweep keeps its steps where a bench keeps its result.
    let mut sweep = bench("sweep");
    sweep.options.sweep = Some(h123_shared::sweep::Sweep::parse("loss=0,1%").unwrap());
    store.insert_bench(sweep.clone(), None).await.unwrap();
    sweep.status = ProbeStatus::Done;
    sweep.finished_at_unix_ms = Some(9);
    sweep.steps = [0, 100]
        .map(|value| h123_shared::sweep::SweepStep {
            value,
            result: BenchResult::new(sweep.options.clone(), value.into()),
        })
        .to_vec();
    store.finish_bench(sweep.clone()).await.unwrap();
    assert_eq!(store.get_bench("sweep".into()).await.unwrap(), Some(sweep));
    assert_eq!(status_of(store, "same").await, ProbeStatus::Running);
}

async fn bench_list_pages_newest_first(f: &Fixture) {
    let store = &f.store;
    for id in ["a", "b", "c"] {
        store
            .insert_bench(bench(id), Some("owner".into()))
            .await
            .unwrap();
    }
    // Unlisted: a stranger's list shows none of them, a public one only.
    let stranger = |before: Option<&str>| store.list_benches(9, before.map(Into::into), None);
    assert!(stranger(None).await.unwrap().is_empty());
    let mut public = bench("p");
    public.options.visibility = h123_shared::Visibility::Public;
    store.insert_bench(public, None).await.unwrap();
    assert_eq!(bench_ids(stranger(None).await.unwrap()), ["p"]);
    let list =
        |before: Option<&str>| store.list_benches(2, before.map(Into::into), Some("owner".into()));
    assert_eq!(bench_ids(list(None).await.unwrap()), ["p", "c"]);
    let list = |before: Option<&str>| {
        store.list_benches(
            2,
            before.or(Some("p")).map(Into::into),
            Some("owner".into()),
        )
    };
    assert_eq!(bench_ids(list(None).await.unwrap()), ["c", "b"]);
    assert_eq!(bench_ids(list(Some("b")).await.unwrap()), ["a"]);
    assert_eq!(list(None).await.unwrap()[0].url, "https://example.com/");
    assert!(matches!(
        list(Some("zz")).await,
        Err(StoreError::UnknownCursor(_))
    ));
}

async fn pruning_by_age_and_size_keeps_running_and_recent_records(f: &Fixture) {
    let store = &f.store;
    let mut old = record("old", ProbeStatus::Done);
    old.created_at_unix_ms = 1_000;
    store.insert(old, Some("o".into())).await.unwrap();
    let mut old_running = record("oldrun", ProbeStatus::Running);
    old_running.created_at_unix_ms = 1_000;
    store.insert(old_running, Some("o".into())).await.unwrap();
    let mut recent = record("new", ProbeStatus::Done);
    recent.created_at_unix_ms = 5_000;
    store.insert(recent, Some("o".into())).await.unwrap();
    let mut old_bench = bench("oldbench");
    old_bench.status = ProbeStatus::Cancelled;
    old_bench.created_at_unix_ms = 1_000;
    old_bench.finished_at_unix_ms = Some(1_001);
    store.insert_bench(old_bench, None).await.unwrap();
    assert_eq!(store.prune(Some(2_000), None).await.unwrap().records, 2);
    assert!(store.get("old".into()).await.unwrap().is_none());
    assert!(store.get_bench("oldbench".into()).await.unwrap().is_none());
    assert!(
        store.get("oldrun".into()).await.unwrap().is_some(),
        "running records stay"
    );
    assert!(store.get("new".into()).await.unwrap().is_some());
    assert_eq!(
        store.prune(None, None).await.unwrap().records,
        0,
        "no bound, no deletion"
    );

    // Fill with big finished records, then cap the size.
    for i in 0..200 {
        let mut big = record(&format!("big{i}"), ProbeStatus::Done);
        big.options.headers = vec![Header {
            name: "x-pad".into(),
            value: "p".repeat(4000),
        }];
        big.created_at_unix_ms = 10_000 + i;
        store.insert(big, Some("o".into())).await.unwrap();
    }
    let deleted = store
        .prune(None, Some(cap(256 * 1024, u64::MAX / 2)))
        .await
        .unwrap()
        .records;
    assert!((100..200).contains(&deleted), "deleted {deleted}");
    assert!(
        store.get("big0".into()).await.unwrap().is_none(),
        "the oldest go first"
    );
    assert!(
        store.get("big199".into()).await.unwrap().is_some(),
        "the newest stay"
    );
    assert!(
        store.get("oldrun".into()).await.unwrap().is_some(),
        "running records stay"
    );
}

/// A size cap of `max_bytes` that keeps what was made at or after `floor_unix_ms`.
fn cap(max_bytes: u64, floor_unix_ms: u64) -> SizeCap {
    SizeCap {
        max_bytes,
        floor_unix_ms,
        deliveries_per_monitor: DELIVERIES_PER_MONITOR,
    }
}

async fn a_size_cap_prunes_every_table_and_keeps_what_is_new(f: &Fixture) {
    use h123::store::monitor_rows::{DeliveryLog, StoredMonitor};
    use h123_shared::monitor::{Monitor, MonitorPoint, MonitorRequest, PointState, missed_point};
    let store = &f.store;
    let hour = 3_600_000;
    let now = h123::probe::trace::unix_ms();
    let floor = now - hour;
    // Two flapping monitors' day of history (a day ago): a failed point a minute and a
    // delivery a run, beside old records of their runs.
    let request: MonitorRequest =
        serde_json::from_value(serde_json::json!({"url": "https://e.test/", "every": "1m"}))
            .unwrap();
    for monitor in ["flap1", "flap2"] {
        store
            .insert_monitor(StoredMonitor {
                monitor: Monitor {
                    id: monitor.into(),
                    created_at_unix_ms: now - 48 * hour,
                    spec: request.clone().spec(1000).unwrap(),
                    paused: true,
                    next_slot_unix_ms: now,
                },
                owner_hash: None,
                client: None,
                alert_secret: None,
                alert_state: Default::default(),
            })
            .await
            .unwrap();
        let points: Vec<MonitorPoint> = (0..24 * 60)
            .map(|minute| MonitorPoint {
                protocol: Some(h123_shared::Protocol::H2),
                state: PointState::Failed,
                detail: Some("connect: refused".into()),
                vantage: "server".into(),
                ..missed_point(now - 48 * hour + minute * 60_000, 0)
            })
            .collect();
        store.add_points(monitor.into(), points).await.unwrap();
        for attempt in 0..200 {
            let log = DeliveryLog {
                at_unix_ms: now - 47 * hour + attempt,
                target: "https://hooks.example".into(),
                key: "down".into(),
                status: "firing".into(),
                attempt: 1,
                outcome: "500".into(),
                delivered: false,
            };
            store.log_delivery(monitor.into(), log).await.unwrap();
        }
    }
    let big = |id: &str, at: u64| {
        let mut r = record(id, ProbeStatus::Done);
        r.options.headers = vec![Header {
            name: "x-pad".into(),
            value: "p".repeat(8000),
        }];
        r.created_at_unix_ms = at;
        r
    };
    for i in 0..100 {
        let old = big(&format!("old{i}"), now - 47 * hour + i);
        store.insert(old, None).await.unwrap();
    }
    // A user's probe, just made.
    store.insert(big("fresh", now), None).await.unwrap();

    // Within a cap of half of it: deliveries, old points and old records go, the new stays.
    let full = store
        .prune(None, Some(cap(u64::MAX, floor)))
        .await
        .unwrap()
        .used_bytes
        .unwrap();
    let deliveries = store.deliveries("flap1".into(), 1000).await.unwrap();
    assert_eq!(deliveries.len(), DELIVERIES_PER_MONITOR as usize);
    assert_eq!(
        deliveries[0].at_unix_ms,
        now - 47 * hour + 199,
        "the newest kept"
    );
    let pruned = store.prune(None, Some(cap(full / 2, floor))).await.unwrap();
    let used = pruned.used_bytes.unwrap();
    println!("size cap: {full} bytes, capped at {} -> {used}", full / 2);
    assert!(!pruned.over_cap && used <= full / 2, "{pruned:?} of {full}");
    assert!(pruned.records > 0, "{pruned:?}");
    assert!(store.get("fresh".into()).await.unwrap().is_some());
    assert!(
        store.get("old0".into()).await.unwrap().is_none(),
        "the oldest first"
    );

    // A cap only what is new could meet: everything older goes, the new stays, and it says so.
    let pruned = store.prune(None, Some(cap(1, floor))).await.unwrap();
    assert!(pruned.over_cap, "{pruned:?}");
    assert!(store.get("fresh".into()).await.unwrap().is_some());
    assert!(store.get("old99".into()).await.unwrap().is_none());
    let left = store
        .points("flap2".into(), 0, u64::MAX / 2, None)
        .await
        .unwrap();
    assert!(
        left.is_empty(),
        "{} points older than the floor",
        left.len()
    );
}

async fn leftovers_of_a_stopped_server_are_cancelled(f: &Fixture) {
    let first = f.another(Duration::from_millis(100)).await;
    first
        .insert(record("r", ProbeStatus::Running), None)
        .await
        .unwrap();
    first
        .insert(record("d", ProbeStatus::Done), None)
        .await
        .unwrap();
    first.insert_bench(bench("b"), None).await.unwrap();
    drop(first);
    // A new server on the same database; the old one's lease runs out.
    let second = f.another(Duration::from_secs(3600)).await;
    tokio::time::sleep(f.lease() + Duration::from_millis(300)).await;
    assert_eq!(second.cancel_running().await.unwrap(), 1);
    assert_eq!(second.cancel_running_benches(42).await.unwrap(), 1);
    assert_eq!(status_of(&second, "r").await, ProbeStatus::Cancelled);
    assert_eq!(status_of(&second, "d").await, ProbeStatus::Done);
    let b = second.get_bench("b".into()).await.unwrap().unwrap();
    assert_eq!(
        (b.status, b.finished_at_unix_ms),
        (ProbeStatus::Cancelled, Some(42))
    );
    assert_eq!(second.cancel_running().await.unwrap(), 0, "once");
}

/// A browser measurement: stored once, for the owner of a finished probe only, beside the record
/// (which stays immutable), read back with it, kept across a reopen, deleted with it.
async fn browser_measurements_attach_once_for_the_owner(f: &Fixture) {
    use h123::store::Attached;
    use h123_shared::browser::{BrowserAttempt, BrowserRun};
    let run = BrowserRun {
        user_agent: "Test/1".into(),
        measured_at_unix_ms: 7,
        attempts: vec![BrowserAttempt::failed(2.0, "offline")],
        finding: None,
    };
    let store = &f.store;
    store
        .insert(record("r", ProbeStatus::Running), Some("owner".into()))
        .await
        .unwrap();
    store
        .insert(record("f", ProbeStatus::Running), Some("owner".into()))
        .await
        .unwrap();
    store.update(record("f", ProbeStatus::Done)).await.unwrap();
    let attach = |id: &str, owner: &str| store.attach_browser(id.into(), owner.into(), run.clone());
    assert_eq!(attach("r", "owner").await.unwrap(), Attached::Running);
    assert_eq!(attach("f", "someone").await.unwrap(), Attached::NotOwner);
    assert_eq!(attach("none", "owner").await.unwrap(), Attached::NoProbe);
    assert_eq!(store.get("f".into()).await.unwrap().unwrap().browser, None);
    assert_eq!(attach("f", "owner").await.unwrap(), Attached::Stored);
    assert_eq!(
        attach("f", "owner").await.unwrap(),
        Attached::Exists,
        "once"
    );
    let read = store.get("f".into()).await.unwrap().unwrap();
    assert_eq!(read.browser.as_ref(), Some(&run));
    assert_eq!(
        read.status,
        ProbeStatus::Done,
        "the record itself is as it was"
    );
    let again = f.another(Duration::from_secs(3600)).await;
    assert_eq!(
        again.get("f".into()).await.unwrap().unwrap().browser,
        Some(run)
    );
    let raw = f
        .raw("UPDATE browser_runs SET run = '{}' WHERE probe_id = 'f'")
        .await;
    assert!(
        raw.as_ref().is_err_and(|e| e.contains("immutable")),
        "the database itself refuses: {raw:?}"
    );
    f.raw("DELETE FROM probes WHERE id = 'f'").await.unwrap();
    let left = f.raw("DELETE FROM browser_runs").await.unwrap();
    assert_eq!(left, 0, "deleting the probe deleted its measurement");
}

async fn monitor_run_records_age_out_and_their_points_stay_unlinked(f: &Fixture) {
    use h123_shared::monitor::{Figures, MonitorPoint, PointState};
    let store = &f.store;
    let point = |slot: u64, probe: &str| MonitorPoint {
        slot_unix_ms: slot,
        started_unix_ms: slot,
        vantage: String::new(),
        protocol: Some(h123_shared::Protocol::H2),
        state: PointState::Ok,
        missed: 0,
        probe_id: Some(probe.to_owned()),
        status: Some(200),
        figures: Figures::default(),
        breached: Vec::new(),
        detail: None,
    };
    for (id, created) in [("mrunold", 1_000), ("mrunnew", 5_000), ("plainold", 1_000)] {
        let mut run = record(id, ProbeStatus::Done);
        run.created_at_unix_ms = created;
        store.insert(run, None).await.unwrap();
    }
    let points = vec![point(1_000, "mrunold"), point(5_000, "mrunnew")];
    store.add_points("mon".into(), points).await.unwrap();

    assert_eq!(store.prune_monitor_records(2_000).await.unwrap(), 1);
    assert!(store.get("mrunold".into()).await.unwrap().is_none());
    assert!(store.get("mrunnew".into()).await.unwrap().is_some());
    assert!(
        store.get("plainold".into()).await.unwrap().is_some(),
        "only monitor runs go"
    );
    let kept = store.points("mon".into(), 0, 10_000, None).await.unwrap();
    let links: Vec<Option<&str>> = kept.iter().map(|p| p.probe_id.as_deref()).collect();
    assert_eq!(
        links,
        [None, Some("mrunnew")],
        "the history stays, unlinked"
    );
    assert_eq!(store.prune_monitor_records(2_000).await.unwrap(), 0);
}

async fn an_alert_state_is_swapped_only_from_what_was_read(f: &Fixture) {
    use h123::store::monitor_rows::StoredMonitor;
    use h123_shared::alert::AlertState;
    use h123_shared::monitor::{Monitor, MonitorRequest};
    let store = &f.store;
    let request: MonitorRequest =
        serde_json::from_value(serde_json::json!({"url": "https://e.test/", "every": "1m"}))
            .unwrap();
    let monitor = StoredMonitor {
        monitor: Monitor {
            id: "swapmon".into(),
            created_at_unix_ms: 0,
            spec: request.spec(1000).unwrap(),
            paused: true,
            next_slot_unix_ms: 0,
        },
        owner_hash: None,
        client: None,
        alert_secret: None,
        alert_state: AlertState::default(),
    };
    store.insert_monitor(monitor).await.unwrap();
    let state = |key: &str| AlertState {
        streaks: [(key.to_owned(), 1)].into(),
        firing: Default::default(),
    };
    let id = || "swapmon".to_owned();
    // Two runs judged on the state they both read: the first lands, the second must judge again.
    assert!(
        store
            .swap_alert_state(id(), AlertState::default(), state("a"))
            .await
            .unwrap()
    );
    assert!(
        !store
            .swap_alert_state(id(), AlertState::default(), state("b"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.get_monitor(id()).await.unwrap().unwrap().alert_state,
        state("a")
    );
    assert!(
        store
            .swap_alert_state(id(), state("a"), state("b"))
            .await
            .unwrap()
    );
    assert_eq!(
        store.get_monitor(id()).await.unwrap().unwrap().alert_state,
        state("b")
    );
    assert!(
        !store
            .swap_alert_state("nosuch".into(), state("b"), state("c"))
            .await
            .unwrap(),
        "an unknown monitor is not swapped"
    );
}

/// A monitor every 30 minutes on two protocols with 400 days of points: its status and its
/// series over 30 and 400 days read a bounded number of rows (points at the window's ragged
/// ends, rollup cells between), whatever its age, and count every run and missed slot.
async fn a_long_history_is_read_in_bounded_rows(f: &Fixture) {
    use h123::store::history::Lines;
    use h123::store::monitor_rows::StoredMonitor;
    use h123_shared::Protocol;
    use h123_shared::monitor::{Figures, MAX_BUCKETS, Monitor, MonitorPoint, MonitorRequest};
    use h123_shared::monitor::{PointState, SeriesMetric, missed_point};
    use h123_shared::monitor_rollup::POINT_SLOTS;
    let store = &f.store;
    let request: MonitorRequest = serde_json::from_value(serde_json::json!({
        "url": "https://e.test/", "every": "30m", "protocols": ["h2", "h3"]
    }))
    .unwrap();
    let every = 30 * 60_000;
    let day = 24 * 3_600_000;
    let now = 1_000 * day + 7 * 3_600_000 + 123_456;
    let runs = 400 * day / every;
    let first = now - runs * every;
    store
        .insert_monitor(StoredMonitor {
            monitor: Monitor {
                id: "longmon".into(),
                created_at_unix_ms: first,
                spec: request.spec(1000).unwrap(),
                paused: true,
                next_slot_unix_ms: now + every,
            },
            owner_hash: None,
            client: None,
            alert_secret: None,
            alert_state: Default::default(),
        })
        .await
        .unwrap();
    let mut batch = Vec::new();
    for run in 0..runs {
        let slot = first + run * every;
        if run % 1000 == 500 {
            // A stretch of six missed slots (three hours) every ~three weeks.
            batch.push(missed_point(slot, 6));
        }
        if (500..506).contains(&(run % 1000)) {
            continue;
        }
        for protocol in [Protocol::H2, Protocol::H3] {
            let ms = 30 + run % 20 + u64::from(protocol == Protocol::H3) * 5;
            batch.push(MonitorPoint {
                protocol: Some(protocol),
                state: PointState::Ok,
                probe_id: Some(format!("p{run}")),
                figures: Figures {
                    total: Some(h123_shared::Micros(ms * 1000)),
                    ..Figures::default()
                },
                ..missed_point(slot, 0)
            });
        }
        if batch.len() >= 2000 {
            store
                .add_points("longmon".into(), std::mem::take(&mut batch))
                .await
                .unwrap();
        }
    }
    store.add_points("longmon".into(), batch).await.unwrap();

    // Per window: at most two partial hours of points, 46 hourly cells and a daily cell a day,
    // for each of two lines and the missed slots; and the latest slot's two points.
    let next_slot = now + every;
    let (status, rows) = store
        .monitor_status("longmon", every, next_slot, now)
        .await
        .unwrap();
    let bound = |days: usize| 3 * (46 + days) + 2 * 2 * 2;
    assert!(
        rows <= bound(1) + bound(7) + bound(30) + 2,
        "status read {rows} rows"
    );
    let month = &status.rows[0].windows[2];
    let missed_month: u64 = status.missed[2].missed;
    assert_eq!(
        u64::from(month.runs) + missed_month,
        30 * day / every,
        "every slot of 30 days is a run or missed: {status:?}"
    );
    assert!(missed_month >= 6, "{status:?}");
    assert_eq!(status.rows[0].last.slot_unix_ms, first + (runs - 1) * every);
    assert_eq!(status.latest, None, "no slot is running or cancelled");
    let leader = async |lines: &Lines, days: u64| {
        let window = (now - days * day, now);
        let (series, rows) = store
            .monitor_series(
                "longmon",
                every,
                &[SeriesMetric::Total],
                window,
                MAX_BUCKETS,
                lines,
            )
            .await
            .unwrap();
        (series.into_iter().next().unwrap(), rows)
    };
    let (year, rows) = leader(&Lines::default(), 400).await;
    assert!(rows <= bound(400), "a 400-day series read {rows} rows");
    assert_eq!(year.bucket_ms, day);
    let counted: u64 = year.lines[0]
        .buckets
        .iter()
        .map(|b| u64::from(b.runs))
        .sum();
    let missed: u64 = year.missed.iter().map(|m| m.missed).sum();
    assert_eq!(counted + missed, runs);
    let verdict = year.verdict.unwrap();
    assert_eq!((verdict.leader, verdict.share_percent), (Protocol::H2, 100));
    // 30 days of a monitor every 30 minutes are 1,440 slots: read point by point.
    let (month, rows) = leader(&Lines::default(), 30).await;
    assert!(
        rows <= 2 * POINT_SLOTS as usize + 2,
        "a 30-day series read {rows} rows"
    );
    assert!(month.lines[0].buckets.len() > 100);
    // 20 days from hourly cells: every slot counted, at most 2 x 2 partial hours of points.
    let twenty = (now - 20 * day, now);
    let hourly = store
        .history("longmon", every, twenty, false)
        .await
        .unwrap();
    assert!(hourly.rows <= 3 * 20 * 24 + 8, "{} rows", hourly.rows);
    let slots: u64 = hourly
        .cells
        .iter()
        .map(|(key, cell)| match key.protocol {
            Some(Protocol::H2) => u64::from(cell.runs),
            Some(_) => 0,
            None => cell.missed,
        })
        .sum();
    assert_eq!(slots, 20 * day / every);
    let h3 = Lines {
        protocol: Some(Protocol::H3),
        vantage: None,
    };
    let (only, _) = leader(&h3, 30).await;
    assert_eq!(only.lines.len(), 1);
    assert!(only.verdict.is_none(), "one protocol has no verdict");

    // A database from before the rollups (and the monitors' clients and running points, which
    // came after them):
    // the upgrade fills them from the stored points.
    f.raw("DROP TABLE monitor_rollups").await.unwrap();
    f.raw("DROP INDEX monitors_client").await.unwrap();
    f.raw("ALTER TABLE monitors DROP COLUMN client")
        .await
        .unwrap();
    f.raw("DROP INDEX monitor_points_running").await.unwrap();
    f.raw("ALTER TABLE monitor_points DROP COLUMN instance_id")
        .await
        .unwrap();
    let undo = match f.db {
        Db::Sqlite(_) => "PRAGMA user_version = 9",
        Db::Postgres(_) => "DELETE FROM schema_migrations WHERE version >= 9",
    };
    f.raw(undo).await.unwrap();
    let upgraded = f.another(Duration::from_secs(3600)).await;
    let (refilled, _) = upgraded
        .monitor_status("longmon", every, next_slot, now)
        .await
        .unwrap();
    assert_eq!(refilled, status);
}

/// Generates one test per case and back end.
macro_rules! suite {
    ($($case:ident),* $(,)?) => {
        mod sqlite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    super::$case(&super::Fixture::sqlite().await).await;
                }
            )*
        }
        mod postgres {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    if let Some(fixture) = super::Fixture::postgres().await {
                        super::$case(&fixture).await;
                    }
                }
            )*
        }
    };
}

suite!(
    records_round_trip_and_become_immutable,
    secrets_are_redacted_before_they_are_stored,
    concurrent_writes_are_all_committed_and_a_bad_one_fails_alone,
    list_pages_newest_first_by_owner_and_visibility,
    benches_round_trip_apart_from_probes_and_become_immutable,
    bench_list_pages_newest_first,
    pruning_by_age_and_size_keeps_running_and_recent_records,
    a_size_cap_prunes_every_table_and_keeps_what_is_new,
    leftovers_of_a_stopped_server_are_cancelled,
    browser_measurements_attach_once_for_the_owner,
    a_long_history_is_read_in_bounded_rows,
    monitor_run_records_age_out_and_their_points_stay_unlinked,
    an_alert_state_is_swapped_only_from_what_was_read,
);

/// Cases only PostgreSQL has: several instances on one database.
mod instances {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_dead_instances_running_records_are_finished_after_the_lease_and_a_live_ones_are_not()
    {
        let Some(f) = Fixture::postgres().await else {
            return;
        };
        let alive = f.another(Duration::from_millis(100)).await;
        let dying = f.another(Duration::from_millis(100)).await;
        let dying_id = dying.instance_id().unwrap().to_owned();
        assert_ne!(Some(dying_id.as_str()), alive.instance_id());
        alive
            .insert(record("live", ProbeStatus::Running), None)
            .await
            .unwrap();
        alive.insert_bench(bench("livebench"), None).await.unwrap();
        dying
            .insert(record("dead", ProbeStatus::Running), None)
            .await
            .unwrap();
        dying.insert_bench(bench("deadbench"), None).await.unwrap();

        // A third instance starting now cancels nothing: both others are alive.
        let starting = f.another(Duration::from_secs(3600)).await;
        assert_eq!(starting.cancel_running().await.unwrap(), 0);
        assert_eq!(starting.cancel_running_benches(1).await.unwrap(), 0);
        // Past the lease, heartbeats keep both alive.
        tokio::time::sleep(LEASE + Duration::from_millis(500)).await;
        assert_eq!(status_of(&alive, "dead").await, ProbeStatus::Running);
        assert_eq!(status_of(&alive, "live").await, ProbeStatus::Running);

        // One dies: its heartbeat stops. The live instance's own heartbeat
        // finishes the dead one's records once the lease has run out.
        drop(dying);
        let died = h123_target::clock::now();
        let reaped = loop {
            let record = alive.get("dead".into()).await.unwrap().unwrap();
            if record.status != ProbeStatus::Running {
                break record;
            }
            assert!(
                died.elapsed() < LEASE + Duration::from_secs(5),
                "still running {:?} after the instance died",
                died.elapsed()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(
            died.elapsed() >= LEASE - Duration::from_millis(200),
            "{:?}",
            died.elapsed()
        );
        assert_eq!(reaped.status, ProbeStatus::Cancelled);
        let reason = reaped.cancel_reason.unwrap_or_default();
        assert!(
            reason.contains(&dying_id) && reason.contains("stopped"),
            "{reason}"
        );
        let bench = loop {
            let bench = alive.get_bench("deadbench".into()).await.unwrap().unwrap();
            if bench.status != ProbeStatus::Running {
                break bench;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(bench.finished_at_unix_ms.is_some());
        assert!(bench.cancel_reason.unwrap_or_default().contains(&dying_id));

        // The live instance's records are untouched and still its own to finish.
        assert_eq!(status_of(&alive, "live").await, ProbeStatus::Running);
        let live_bench = alive.get_bench("livebench".into()).await.unwrap().unwrap();
        assert_eq!(live_bench.status, ProbeStatus::Running);
        alive
            .update(record("live", ProbeStatus::Done))
            .await
            .unwrap();
        assert_eq!(status_of(&starting, "live").await, ProbeStatus::Done);
        assert_eq!(
            f.raw("SELECT 1 FROM instances").await.unwrap(),
            1,
            "the instances that stopped heartbeating are forgotten, the live one remains"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn instances_starting_at_once_migrate_once() {
        let Some(cluster) = PgCluster::shared() else {
            return;
        };
        let url = cluster.create_database().unwrap();
        let stores = futures_util::future::join_all(
            (0..4).map(|_| connect(&url, Duration::from_secs(3600))),
        )
        .await;
        let ids: std::collections::HashSet<_> = stores.iter().map(|s| s.instance_id()).collect();
        assert_eq!(ids.len(), 4, "each instance has its own id");
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let versions: Vec<i32> = client
            .query(
                "SELECT version FROM schema_migrations ORDER BY version",
                &[],
            )
            .await
            .unwrap()
            .iter()
            .map(|row| row.get(0))
            .collect();
        let known: Vec<i32> = h123::store::postgres::migrate::MIGRATIONS
            .iter()
            .map(|(version, _, _)| *version)
            .collect();
        assert_eq!(versions, known, "each migration applied and recorded once");
    }
}

/// The list-line columns of records stored before them (PostgreSQL's migration 8; SQLite's
/// migration 9 has its unit test): filled from each finished record's analysis, none without.
mod list_lines {
    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres_migration_fills_the_list_lines_of_finished_records() {
        let Some(cluster) = PgCluster::shared() else {
            return;
        };
        let url = cluster.create_database().unwrap();
        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        // The database as the server before the list's verdicts left it (version 7).
        client
            .batch_execute(
                "CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, \
                 applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
            )
            .await
            .unwrap();
        for (version, name, sql) in h123::store::postgres::migrate::MIGRATIONS {
            if *version > 7 {
                continue;
            }
            client.batch_execute(sql).await.unwrap();
            client
                .execute(
                    "INSERT INTO schema_migrations (version, name) VALUES ($1, $2)",
                    &[version, name],
                )
                .await
                .unwrap();
        }
        let mut analysed = record("analysed", ProbeStatus::Done);
        analysed.result = h123_shared::analysis::analyzed(analysed.result);
        let rows = [
            (analysed.clone(), "done"),
            (record("unanalysed", ProbeStatus::Done), "done"),
            (record("running", ProbeStatus::Running), "running"),
        ];
        for (record, status) in rows {
            client
                .execute(
                    "INSERT INTO probes (id, created_at_unix_ms, status, record, visibility) \
                     VALUES ($1, 1, $2, $3, 'public')",
                    &[
                        &record.id,
                        &status,
                        &serde_json::to_string(&record).unwrap(),
                    ],
                )
                .await
                .unwrap();
        }
        let store = SharedStore::postgres(connect(&url, Duration::from_secs(3600)).await);
        let list = store.list(10, None, None).await.unwrap();
        let line = |id: &str| list.iter().find(|s| s.id == id).unwrap();
        assert_eq!(
            (line("analysed").outcome, line("analysed").verdict.clone()),
            h123_shared::api::list_line(&analysed)
        );
        assert!(line("analysed").verdict.is_some());
        for id in ["unanalysed", "running"] {
            assert_eq!(
                (line(id).outcome, line(id).verdict.as_deref()),
                (None, None)
            );
        }
        let raw = client
            .execute("UPDATE probes SET verdict = 'x' WHERE id = 'analysed'", &[])
            .await;
        assert!(raw.is_err(), "the trigger is on again");
    }
}

/// Latency of the store calls on both back ends, printed (not asserted).
mod figures {
    use super::*;

    fn percentile(sorted: &[Duration], p: f64) -> Duration {
        let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
        sorted[rank.min(sorted.len()) - 1]
    }

    fn line(what: &str, mut times: Vec<Duration>) -> String {
        times.sort();
        format!(
            "{what} p50 {:.0} us, p99 {:.0} us",
            percentile(&times, 50.0).as_secs_f64() * 1e6,
            percentile(&times, 99.0).as_secs_f64() * 1e6
        )
    }

    async fn measure(name: &str, f: &Fixture) {
        const N: usize = 1000;
        let mut padded = record("pad", ProbeStatus::Running);
        padded.options.headers = vec![Header {
            name: "x-pad".into(),
            value: "p".repeat(4000),
        }];
        let bytes = serde_json::to_string(&padded).unwrap().len();
        let (mut insert, mut update, mut get, mut list) = (vec![], vec![], vec![], vec![]);
        for i in 0..N {
            let mut r = padded.clone();
            r.id = format!("id{i:08}");
            let start = h123_target::clock::now();
            f.store.insert(r, Some("o".into())).await.unwrap();
            insert.push(start.elapsed());
        }
        for i in 0..N {
            let mut r = padded.clone();
            r.id = format!("id{i:08}");
            r.status = ProbeStatus::Done;
            let start = h123_target::clock::now();
            f.store.update(r).await.unwrap();
            update.push(start.elapsed());
        }
        for i in 0..N {
            let start = h123_target::clock::now();
            let got = f.store.get(format!("id{i:08}")).await.unwrap();
            get.push(start.elapsed());
            assert!(got.is_some());
        }
        for _ in 0..N / 5 {
            let start = h123_target::clock::now();
            let page = f.store.list(20, None, Some("o".into())).await.unwrap();
            list.push(start.elapsed());
            assert_eq!(page.len(), 20);
        }
        println!(
            "{name} ({N} records of {bytes} bytes, one at a time): {}; {}; {}; {}",
            line("insert", insert),
            line("update", update),
            line("get", get),
            line("list of 20", list)
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    #[ignore = "prints figures: cargo test --release -p h123 --test server -- --ignored store:: --nocapture"]
    async fn store_call_latency_on_both_back_ends() {
        measure("sqlite", &Fixture::sqlite().await).await;
        if PgCluster::bin_dir().is_none() && !PgCluster::required() {
            return;
        }
        // A cluster of its own with fsync on, as SQLite's synchronous=FULL.
        let cluster = PgCluster::start_durable().unwrap();
        let url = cluster.create_database().unwrap();
        let f = Fixture {
            store: SharedStore::postgres(connect(&url, Duration::from_secs(3600)).await),
            db: Db::Postgres(url),
            _dir: None,
        };
        measure("postgres", &f).await;
    }
}
