//! A shipment with its containers as one read of the database saw them.

use std::sync::{Mutex, PoisonError};

use bytes::Bytes;
use tidemark_domain::{Container, Shipment};

/// Renderings kept per read at most (one per include set asked for, in practice a few).
const MAX_RENDERINGS: usize = 4;

/// A shipment and its containers, as one read saw them (`Store::shipment_with_containers`).
///
/// A backend that caches reads hands the same `ShipmentRead` (behind an `Arc`) to every
/// reader until the shipment changes, and then reads it again into a new one. What a
/// caller derives from exactly these rows (the API's serialized document for an include
/// set) can therefore be kept with it: [`ShipmentRead::rendering`] finds it again as long
/// as the read is served, and it goes when the read is evicted, on the same change.
#[derive(Debug)]
pub struct ShipmentRead {
    pub shipment: Shipment,
    pub containers: Vec<Container>,
    renderings: Mutex<Vec<(String, Bytes)>>,
}

impl ShipmentRead {
    pub fn new(shipment: Shipment, containers: Vec<Container>) -> Self {
        Self {
            shipment,
            containers,
            renderings: Mutex::new(Vec::new()),
        }
    }

    /// What was kept under `key` with [`ShipmentRead::keep_rendering`].
    pub fn rendering(&self, key: &str) -> Option<Bytes> {
        self.renderings
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, bytes)| bytes.clone())
    }

    /// Keeps `bytes`, derived from these rows alone, under `key` (the first few keys only).
    pub fn keep_rendering(&self, key: &str, bytes: Bytes) {
        let mut renderings = self
            .renderings
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if renderings.len() < MAX_RENDERINGS && !renderings.iter().any(|(k, _)| k == key) {
            renderings.push((key.to_owned(), bytes));
        }
    }
}
