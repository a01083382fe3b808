//! Identifier newtypes and the injected id generator.

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! id_type {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            pub fn new(ids: &dyn IdGenerator) -> Self {
                Self(ids.next_id())
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl From<Uuid> for $name {
            fn from(id: Uuid) -> Self {
                Self(id)
            }
        }
    };
}

id_type!(
    /// An account: the owner of every tenant-scoped resource.
    AccountId
);
id_type!(
    /// An API key (its public identity, never the secret).
    ApiKeyId
);
id_type!(
    /// A durable background job.
    JobId
);
id_type!(
    /// A tracking request: a number a client asked Tidemark to follow.
    TrackingRequestId
);
id_type!(
    /// A shipment: what a bill of lading or booking covers.
    ShipmentId
);
id_type!(
    /// A container on a shipment.
    ContainerId
);
id_type!(
    /// A milestone of a container's journey.
    TransportEventId
);
id_type!(
    /// Something that happened to a tracked object, kept for notifications.
    DomainEventId
);
id_type!(
    /// One event exactly as a carrier reported it, before Tidemark named it.
    RawEventId
);
id_type!(
    /// A customer (Terminal49's `party`) that shipments are tracked for.
    PartyId
);
id_type!(
    /// A webhook subscription.
    WebhookId
);
id_type!(
    /// One event to deliver to one webhook.
    WebhookNotificationId
);
id_type!(
    /// One delivery attempt of a notification.
    NotificationLogId
);

/// Source of new ids. Production uses UUIDv7 (time-ordered, which keeps B-tree inserts
/// cheap); tests use [`SequentialIds`] so snapshots are stable.
pub trait IdGenerator: Send + Sync {
    fn next_id(&self) -> Uuid;
}

/// Time-ordered random UUIDv7 ids.
#[derive(Debug, Default)]
pub struct UuidV7Ids;

impl IdGenerator for UuidV7Ids {
    #[expect(
        clippy::disallowed_methods,
        reason = "this is the one place that creates UUIDv7 ids"
    )]
    fn next_id(&self) -> Uuid {
        Uuid::now_v7()
    }
}

/// Deterministic ids for tests: a fixed prefix and a counter, still sorted by creation.
#[derive(Debug, Default)]
pub struct SequentialIds {
    next: AtomicU64,
}

impl SequentialIds {
    /// A generator whose first id follows `n`, so two generators over one database (a test
    /// restarting its app) do not collide.
    pub fn starting_after(n: u64) -> Self {
        Self {
            next: AtomicU64::new(n),
        }
    }
}

impl IdGenerator for SequentialIds {
    fn next_id(&self) -> Uuid {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        Uuid::from_u64_pair(0x0000_0000_0000_7000, 0x8000_0000_0000_0000 | n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequential_ids_are_distinct_and_increasing() {
        let ids = SequentialIds::default();

        let first = ids.next_id();
        let second = ids.next_id();

        assert!(first < second);
    }

    #[test]
    fn uuid_v7_ids_are_version_seven() {
        assert_eq!(UuidV7Ids.next_id().get_version_num(), 7);
    }
}
