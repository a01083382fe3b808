//! Where document bytes live: `object_store` over the local file system (the default),
//! an S3-compatible bucket (several processes share it), or memory (tests).
//!
//! Keys are built by [`tidemark_documents::filename::storage_key`] from ids only, so nothing
//! a client sends ever becomes part of a path.

use std::sync::Arc;

use axum::body::Bytes;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::aws::AmazonS3Builder;
use object_store::local::LocalFileSystem;
use object_store::memory::InMemory;
use object_store::path::Path;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use url::Url;

/// The document bytes' store.
#[derive(Clone, Debug)]
pub struct Storage {
    inner: Arc<dyn ObjectStore>,
}

/// Storage failed; the request or job fails with a server error and may be retried.
#[derive(Debug, thiserror::Error)]
pub enum StorageError {
    #[error("no such object")]
    NotFound,
    #[error("invalid storage setting: {0}")]
    Setting(String),
    #[error(transparent)]
    Backend(object_store::Error),
}

impl From<object_store::Error> for StorageError {
    fn from(error: object_store::Error) -> Self {
        match error {
            object_store::Error::NotFound { .. } => Self::NotFound,
            error => Self::Backend(error),
        }
    }
}

impl Storage {
    /// Opens the store a `storage_url` names: `file://DIR` (`file://./relative` allowed;
    /// the directory is created on first write), `s3://BUCKET/PREFIX` (credentials,
    /// region and endpoint from the usual `AWS_*` variables) or `memory://`.
    pub fn from_url(url: &Url) -> Result<Self, StorageError> {
        let inner: Arc<dyn ObjectStore> = match url.scheme() {
            "memory" => Arc::new(InMemory::new()),
            "file" => {
                let host = url.host_str().unwrap_or_default();
                let path = url
                    .to_file_path()
                    .ok()
                    .filter(|_| host.is_empty() || host == "localhost")
                    .unwrap_or_else(|| std::path::PathBuf::from(format!("{host}{}", url.path())));
                let absolute = std::path::absolute(&path)
                    .map_err(|e| StorageError::Setting(format!("{}: {e}", path.display())))?;
                let prefix = Path::from_absolute_path(&absolute)
                    .map_err(|e| StorageError::Setting(e.to_string()))?;
                Arc::new(object_store::prefix::PrefixStore::new(
                    LocalFileSystem::new(),
                    prefix,
                ))
            }
            "s3" => {
                let bucket = url
                    .host_str()
                    .filter(|bucket| !bucket.is_empty())
                    .ok_or_else(|| StorageError::Setting("s3:// needs a bucket".to_owned()))?;
                tidemark_carriers::tls::install_provider();
                let store = AmazonS3Builder::from_env()
                    .with_bucket_name(bucket)
                    .build()
                    .map_err(|e| StorageError::Setting(e.to_string()))?;
                let prefix = url.path().trim_matches('/');
                if prefix.is_empty() {
                    Arc::new(store)
                } else {
                    Arc::new(object_store::prefix::PrefixStore::new(
                        store,
                        Path::from(prefix),
                    ))
                }
            }
            other => return Err(StorageError::Setting(format!("unknown scheme {other}"))),
        };
        Ok(Self { inner })
    }

    /// An empty in-memory store.
    pub fn in_memory() -> Self {
        Self {
            inner: Arc::new(InMemory::new()),
        }
    }

    pub async fn put(&self, key: &str, bytes: Bytes) -> Result<(), StorageError> {
        self.inner
            .put(&Path::from(key), PutPayload::from_bytes(bytes))
            .await?;
        Ok(())
    }

    /// All of an object's bytes.
    pub async fn get(&self, key: &str) -> Result<Bytes, StorageError> {
        Ok(self.inner.get(&Path::from(key)).await?.bytes().await?)
    }

    /// An object's bytes as a stream, for downloads: never all in memory at once.
    pub async fn stream(
        &self,
        key: &str,
    ) -> Result<BoxStream<'static, Result<Bytes, StorageError>>, StorageError> {
        let result = self.inner.get(&Path::from(key)).await?;
        Ok(result.into_stream().map_err(StorageError::from).boxed())
    }

    /// Removes an object; a missing one is fine.
    pub async fn delete(&self, key: &str) -> Result<(), StorageError> {
        match self.inner.delete(&Path::from(key)).await {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(error) => Err(error.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_local_directory_keeps_what_was_put() {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = Url::from_directory_path(dir.path().join("docs")).expect("url");
        let storage = Storage::from_url(&url).expect("storage");

        storage
            .put(
                "accounts/a/documents/b.pdf",
                Bytes::from_static(b"%PDF-1.4"),
            )
            .await
            .expect("put");

        assert_eq!(
            std::fs::read(dir.path().join("docs/accounts/a/documents/b.pdf")).expect("file"),
            b"%PDF-1.4"
        );
        assert_eq!(
            storage
                .get("accounts/a/documents/b.pdf")
                .await
                .expect("get"),
            Bytes::from_static(b"%PDF-1.4")
        );
        storage
            .delete("accounts/a/documents/b.pdf")
            .await
            .expect("delete");
        assert!(matches!(
            storage.get("accounts/a/documents/b.pdf").await,
            Err(StorageError::NotFound)
        ));
    }

    #[test]
    fn storage_urls_are_understood() {
        for url in [
            "memory://",
            "file://./tidemark-data/documents",
            "file:///tmp/x",
            "s3://bucket/prefix",
        ] {
            assert!(
                Storage::from_url(&Url::parse(url).expect("url")).is_ok(),
                "{url}"
            );
        }
        assert!(Storage::from_url(&Url::parse("s3:///prefix").expect("url")).is_err());
    }
}
