//! The web UI's pages by path. Each page is its own wasm bundle, chosen by `index.html`'s loader
//! from the path's first segment (`r`, `b`, `compare`, anything else: the home bundle); the bundle
//! then reads the whole path with [`Route::parse`] and shows "not found" for what it does not know.
//! A monitor's pages (`/m/...`) are drawn whole by the server, and the loader loads no bundle there.

/// A page of the web UI.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// `/`: the probe and load forms.
    Home,
    /// `/r/{id}`: a probe's result.
    Result(String),
    /// `/b/{id}`: a bench's result.
    Bench(String),
    /// `/compare/{a}/{b}`: two probes side by side, `a` before `b`.
    Compare(String, String),
    /// Any other path.
    NotFound,
}

impl Route {
    /// The page a URL path names; one trailing slash is allowed.
    pub fn parse(path: &str) -> Self {
        let Some(rest) = path.strip_prefix('/') else {
            return Self::NotFound;
        };
        let rest = match rest.strip_suffix('/') {
            Some(inner) if !inner.is_empty() => inner,
            _ => rest,
        };
        let segments: Vec<&str> = rest.split('/').collect();
        if segments.iter().skip(1).any(|s| s.is_empty()) {
            return Self::NotFound;
        }
        match segments.as_slice() {
            [""] => Self::Home,
            ["r", id] => Self::Result((*id).to_owned()),
            ["b", id] => Self::Bench((*id).to_owned()),
            ["compare", a, b] => Self::Compare((*a).to_owned(), (*b).to_owned()),
            _ => Self::NotFound,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Route;

    #[test]
    fn each_page_is_found_by_its_path() {
        assert_eq!(Route::parse("/"), Route::Home);
        assert_eq!(Route::parse("/r/abc"), Route::Result("abc".into()));
        assert_eq!(Route::parse("/r/abc/"), Route::Result("abc".into()));
        assert_eq!(Route::parse("/b/xyz"), Route::Bench("xyz".into()));
        assert_eq!(
            Route::parse("/compare/a1/b2"),
            Route::Compare("a1".into(), "b2".into())
        );
    }

    #[test]
    fn other_paths_are_not_found() {
        for path in [
            "",
            "//",
            "/r",
            "/r/",
            "/r//",
            "/r/a/b",
            "/b",
            "/compare/a",
            "/compare//b",
            "/compare/a/b/c",
            "/x",
            "/R/abc",
            "r/abc",
        ] {
            assert_eq!(Route::parse(path), Route::NotFound, "{path:?}");
        }
    }
}
