//! `--cors-origin`: an origin the server lets read its API (the layer that does it is
//! `api::cors`), as the configuration holds it.

use axum::http::HeaderValue;
use std::fmt;
use std::str::FromStr;

/// An origin allowed to read the API: `scheme://host[:port]`, or any (`*`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CorsOrigin {
    /// Every origin.
    Any,
    /// One origin, as browsers send it in `Origin`.
    Exact(HeaderValue),
}

impl FromStr for CorsOrigin {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        if text == "*" {
            return Ok(CorsOrigin::Any);
        }
        let bad = |why: &str| format!("--cors-origin `{text}`: {why}");
        let url = url::Url::parse(text).map_err(|e| bad(&e.to_string()))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(bad("must be http:// or https://"));
        }
        if url.host().is_none()
            || !url.username().is_empty()
            || url.password().is_some()
            || url.query().is_some()
            || url.fragment().is_some()
            || url.path() != "/"
        {
            return Err(bad(
                "must be an origin, scheme://host[:port], with no path (or `*`)",
            ));
        }
        let origin = url.origin().ascii_serialization();
        HeaderValue::from_str(&origin)
            .map(CorsOrigin::Exact)
            .map_err(|e| bad(&e.to_string()))
    }
}

impl fmt::Display for CorsOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorsOrigin::Any => f.write_str("*"),
            CorsOrigin::Exact(origin) => f.write_str(origin.to_str().unwrap_or("?")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_are_read_as_browsers_send_them() {
        let exact = |text: &str| text.parse::<CorsOrigin>().map(|o| o.to_string());
        assert_eq!(exact("https://ui.example"), Ok("https://ui.example".into()));
        assert_eq!(
            exact("https://UI.example:443/"),
            Ok("https://ui.example".into())
        );
        assert_eq!(
            exact("http://127.0.0.1:8081"),
            Ok("http://127.0.0.1:8081".into())
        );
        assert_eq!(exact("*"), Ok("*".into()));
        for bad in [
            "ui.example",
            "ftp://ui.example",
            "https://ui.example/app",
            "https://ui.example?x=1",
            "https://user@ui.example",
            "",
        ] {
            let error = exact(bad).unwrap_err();
            assert!(
                error.starts_with(&format!("--cors-origin `{bad}`")),
                "{error}"
            );
        }
    }
}
