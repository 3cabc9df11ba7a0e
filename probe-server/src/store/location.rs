//! Where `h123 serve --db` keeps its records: a SQLite file, or a PostgreSQL
//! database named by a `postgres://` (or `postgresql://`) URL.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

/// The value of `--db`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbLocation {
    /// A SQLite database file (created with its folder if missing).
    Sqlite(PathBuf),
    /// A PostgreSQL connection URL, parsed (its password, if any, is never displayed).
    Postgres(PostgresUrl),
}

/// A PostgreSQL connection URL that parsed as one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PostgresUrl {
    url: String,
}

impl PostgresUrl {
    /// The URL as given, password included: for connecting, never for printing.
    pub fn secret_url(&self) -> &str {
        &self.url
    }
}

impl fmt::Display for PostgresUrl {
    /// The URL with its password, if any, replaced by `***`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (scheme, rest) = self
            .url
            .split_once("://")
            .unwrap_or(("postgres", &self.url));
        let (authority, path) = match rest.find(['/', '?']) {
            Some(i) => rest.split_at(i),
            None => (rest, ""),
        };
        match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                let user = userinfo.split_once(':').map_or(userinfo, |(user, _)| user);
                let hidden = if userinfo.contains(':') { ":***" } else { "" };
                write!(f, "{scheme}://{user}{hidden}@{host}{path}")
            }
            None => write!(f, "{scheme}://{rest}"),
        }
    }
}

impl FromStr for DbLocation {
    type Err = String;

    /// `postgres://...` and `postgresql://...` are PostgreSQL URLs (checked
    /// here, so a malformed one is refused at start); anything else is a path.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let lower = text.get(..13).unwrap_or(text).to_ascii_lowercase();
        if lower.starts_with("postgres://") || lower.starts_with("postgresql://") {
            text.parse::<tokio_postgres::Config>()
                .map_err(|e| format!("not a usable PostgreSQL URL: {e}"))?;
            Ok(DbLocation::Postgres(PostgresUrl {
                url: text.to_owned(),
            }))
        } else if text.is_empty() {
            Err("give a SQLite file path or a postgres:// URL".to_owned())
        } else {
            Ok(DbLocation::Sqlite(PathBuf::from(text)))
        }
    }
}

impl fmt::Display for DbLocation {
    /// The path, or the URL without its password.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbLocation::Sqlite(path) => write!(f, "{}", path.display()),
            DbLocation::Postgres(url) => write!(f, "{url}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postgres_urls_are_recognised_and_their_passwords_hidden() {
        let db: DbLocation = "postgres://h123:s3cret@db.example:5433/h123?connect_timeout=5"
            .parse()
            .unwrap();
        assert_eq!(
            db.to_string(),
            "postgres://h123:***@db.example:5433/h123?connect_timeout=5"
        );
        let DbLocation::Postgres(url) = &db else {
            panic!("{db:?}")
        };
        assert!(url.secret_url().contains("s3cret"));
        let db: DbLocation = "postgresql://h123@127.0.0.1/h123".parse().unwrap();
        assert_eq!(db.to_string(), "postgresql://h123@127.0.0.1/h123");
        assert!(matches!(db, DbLocation::Postgres(_)));
    }

    #[test]
    fn other_values_are_sqlite_paths_and_bad_urls_are_refused() {
        assert_eq!(
            "./data/h123.sqlite".parse::<DbLocation>().unwrap(),
            DbLocation::Sqlite(PathBuf::from("./data/h123.sqlite"))
        );
        assert!(matches!(
            "postgres-data/h123.sqlite".parse::<DbLocation>().unwrap(),
            DbLocation::Sqlite(_)
        ));
        let bad = "postgres://h123@host:notaport/db".parse::<DbLocation>();
        assert!(bad.unwrap_err().contains("PostgreSQL URL"));
        assert!("".parse::<DbLocation>().is_err());
    }
}
