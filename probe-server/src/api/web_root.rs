//! Files of the web root (`--web-root`), and never anything outside it: a
//! file is opened only when its real path (symlinks resolved) lies under the
//! root's, so a symlink inside the root that points out of it is refused.

use std::path::{Path, PathBuf};

/// The real path of the regular file `name` under `root`, when it exists
/// and lies inside the root once every symlink is resolved.
pub async fn inside(root: &Path, name: impl AsRef<Path>) -> Option<PathBuf> {
    let root = tokio::fs::canonicalize(root).await.ok()?;
    let real = tokio::fs::canonicalize(root.join(name)).await.ok()?;
    let is_file = tokio::fs::metadata(&real).await.ok()?.is_file();
    (is_file && real.starts_with(&root)).then_some(real)
}

/// The bytes of `name` under `root`, as [`inside`] allows.
pub async fn read(root: &Path, name: impl AsRef<Path>) -> Option<Vec<u8>> {
    tokio::fs::read(inside(root, name).await?).await.ok()
}

/// The text of `name` under `root`, read without a runtime, as [`inside`] allows.
pub fn read_text_blocking(root: &Path, name: impl AsRef<Path>) -> Option<String> {
    let root = std::fs::canonicalize(root).ok()?;
    let real = std::fs::canonicalize(root.join(name)).ok()?;
    if !real.starts_with(&root) {
        return None;
    }
    std::fs::read_to_string(real).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_symlink_out_of_the_root_is_refused() {
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("secret.txt"), "secret").unwrap();
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("app.js"), "ok").unwrap();
        std::fs::create_dir(root.path().join("assets")).unwrap();
        std::os::unix::fs::symlink(
            outside.path().join("secret.txt"),
            root.path().join("leak.js"),
        )
        .unwrap();
        std::os::unix::fs::symlink(outside.path(), root.path().join("assets/out")).unwrap();
        std::os::unix::fs::symlink(root.path().join("app.js"), root.path().join("alias.js"))
            .unwrap();
        assert_eq!(
            read(root.path(), "app.js").await.as_deref(),
            Some(&b"ok"[..])
        );
        assert_eq!(
            read(root.path(), "alias.js").await.as_deref(),
            Some(&b"ok"[..]),
            "a link inside stays served"
        );
        assert_eq!(read(root.path(), "leak.js").await, None);
        assert_eq!(read(root.path(), "assets/out/secret.txt").await, None);
        assert_eq!(read(root.path(), "assets").await, None, "not a file");
        assert_eq!(read_text_blocking(root.path(), "leak.js"), None);
        assert_eq!(
            read_text_blocking(root.path(), "app.js").as_deref(),
            Some("ok")
        );
    }
}
