//! Token buckets in PostgreSQL: the creation rate shared by every instance on
//! the database. One statement refills a client's bucket by the database's
//! clock and takes a token if there is one, under the row's lock, so
//! concurrent requests at different instances never both take the last one.

use super::super::Result;
use std::time::Duration;

/// A client's bucket after one request.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Taken {
    /// Tokens left (after the one taken, if taken).
    pub tokens: f64,
    /// Whether the request took a token.
    pub took: bool,
}

/// Refills `client`'s bucket (`burst` tokens at most, `per_sec` a second)
/// and takes a token if a whole one is there.
///
/// # Errors
/// When the database fails.
pub async fn take(
    client: &tokio_postgres::Client,
    key: &str,
    burst: f64,
    per_sec: f64,
) -> Result<Taken> {
    let row = client
        .query_one(
            // In SET, `b` is the row before this statement: both columns
            // read the same refilled count.
            "INSERT INTO rate_buckets AS b (client, tokens, at, took)
             VALUES ($1, $2::float8 - 1, now(), true)
             ON CONFLICT (client) DO UPDATE SET
                 tokens = LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.at)::float8 * $3::float8)
                     - CASE WHEN LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.at)::float8 * $3::float8)
                         >= 1 THEN 1 ELSE 0 END,
                 took = LEAST($2::float8, b.tokens + EXTRACT(EPOCH FROM now() - b.at)::float8 * $3::float8) >= 1,
                 at = now()
             RETURNING tokens, took",
            &[&key, &burst, &per_sec],
        )
        .await?;
    Ok(Taken {
        tokens: row.get(0),
        took: row.get(1),
    })
}

/// Deletes the buckets untouched for `full_after` (the time an empty one
/// takes to refill): they are full, as good as absent.
///
/// # Errors
/// When the database fails.
pub async fn prune(client: &tokio_postgres::Client, full_after: Duration) -> Result<u64> {
    Ok(client
        .execute(
            "DELETE FROM rate_buckets WHERE at < now() - make_interval(secs => $1)",
            &[&full_after.as_secs_f64()],
        )
        .await?)
}
