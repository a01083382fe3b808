//! PostgreSQL keeps `shipment_with_containers` reads in memory and forgets one as soon as
//! the database announces a change to it (`NOTIFY` from triggers), whichever process made
//! the change. Skipped when `TIDEMARK_TEST_POSTGRES_URL` is unset.

use std::sync::Arc;
use std::time::Duration;

use tidemark_domain::{AccountId, Shipment, ShipmentId};
use tidemark_store::Store;
use tidemark_store::contract::a_tracked_shipment;
use tidemark_store_postgres::testing::{TempSchema, temp_schema};
use tidemark_store_postgres::{ListenerStatus, PgStore};
use tokio::sync::watch;

/// Generous: a notification normally arrives within milliseconds.
const PATIENCE: Duration = Duration::from_secs(20);

fn listener(store: &PgStore) -> watch::Receiver<ListenerStatus> {
    store
        .shipment_cache_listener()
        .expect("the cache is on by default")
}

async fn wait_for(store: &PgStore, what: &str, done: impl Fn(&ListenerStatus) -> bool) {
    let mut status = listener(store);
    tokio::time::timeout(PATIENCE, status.wait_for(|s| done(s)))
        .await
        .unwrap_or_else(|_| panic!("timed out waiting for {what}"))
        .expect("the listener is running");
}

/// Reads `id` until the read is cached: a read is not cached when a notification for the
/// same shipment (such as its own creation's) arrives while it runs.
async fn read_until_cached(store: &PgStore, account: AccountId, id: ShipmentId) {
    let mut status = listener(store);
    loop {
        let heard = status.borrow_and_update().notifications;
        store
            .shipment_with_containers(account, id)
            .await
            .expect("read the shipment");
        if store.shipment_is_cached(id) {
            return;
        }
        tokio::time::timeout(PATIENCE, status.wait_for(|s| s.notifications > heard))
            .await
            .expect("a notification explains the miss")
            .expect("the listener is running");
    }
}

/// A fresh schema, its store, and a tracked shipment that store has cached.
struct Cached {
    schema: TempSchema,
    store: Arc<PgStore>,
    account: AccountId,
    shipment: Shipment,
}

async fn a_cached_shipment() -> Option<Cached> {
    let schema = temp_schema().await?;
    let store = schema.pg_store();
    let (account, update) = a_tracked_shipment(store.as_ref()).await;
    read_until_cached(&store, account, update.shipment.id).await;
    Some(Cached {
        schema,
        store,
        account,
        shipment: update.shipment,
    })
}

async fn wait_until_evicted(store: &PgStore, id: ShipmentId) {
    wait_for(store, "the change to be announced", |_| {
        !store.shipment_is_cached(id)
    })
    .await;
}

#[tokio::test]
async fn a_store_starts_with_its_listener_subscribed() {
    let Some(schema) = temp_schema().await else {
        return;
    };

    let status = *listener(&schema.pg_store()).borrow();

    assert!(status.subscribed);
    assert!(status.backend_pid.is_some());
}

#[tokio::test]
async fn a_read_shipment_is_kept_until_another_process_changes_it() {
    let Some(cached) = a_cached_shipment().await else {
        return;
    };
    let Cached {
        schema,
        store,
        account,
        shipment,
    } = &cached;
    let (account, id) = (*account, shipment.id);

    let other = schema.another_process().await;
    let mut shipment = shipment.clone();
    shipment.tags = vec!["changed elsewhere".to_owned()];
    other.update_shipment(&shipment).await.unwrap();
    wait_until_evicted(store, id).await;
    let read = store.shipment_with_containers(account, id).await.unwrap();

    assert_eq!(read.shipment.tags, vec!["changed elsewhere".to_owned()]);
}

#[tokio::test]
async fn a_change_made_outside_tidemark_is_announced_too() {
    let Some(cached) = a_cached_shipment().await else {
        return;
    };
    let Cached {
        schema,
        store,
        account,
        shipment,
    } = &cached;
    let (account, id) = (*account, shipment.id);

    schema
        .execute(&format!(
            "UPDATE {}.containers SET seal_number = 'SEAL-BY-HAND' WHERE shipment_id = '{}'",
            schema.name(),
            id.0
        ))
        .await
        .unwrap();
    wait_until_evicted(store, id).await;
    let read = store.shipment_with_containers(account, id).await.unwrap();

    assert!(!read.containers.is_empty());
    assert!(
        read.containers
            .iter()
            .all(|c| c.seal_number.as_deref() == Some("SEAL-BY-HAND"))
    );
}

#[tokio::test]
async fn another_accounts_cached_shipment_is_not_found() {
    // The schema is bound so that it lives (and is dropped) with the test.
    let Some(Cached {
        schema: _schema,
        store,
        shipment,
        ..
    }) = a_cached_shipment().await
    else {
        return;
    };

    let elsewhere = store
        .shipment_with_containers(AccountId(uuid::Uuid::from_u128(7)), shipment.id)
        .await;

    assert!(matches!(
        elsewhere,
        Err(tidemark_store::StoreError::NotFound)
    ));
}

#[tokio::test]
async fn while_the_listener_is_disconnected_reads_go_to_the_database() {
    let Some(cached) = a_cached_shipment().await else {
        return;
    };
    let Cached {
        schema,
        store,
        account,
        shipment,
    } = &cached;
    let (account, id) = (*account, shipment.id);
    let pid = listener(store).borrow().backend_pid.expect("connected");

    schema
        .execute(&format!("SELECT pg_terminate_backend({pid})"))
        .await
        .unwrap();
    wait_for(store, "the listener to notice", |s| !s.subscribed).await;
    let cached_while_away = store.shipment_is_cached(id);
    store.shipment_with_containers(account, id).await.unwrap();
    let cached_after_read = store.shipment_is_cached(id);
    wait_for(store, "the listener to reconnect", |s| s.subscribed).await;
    read_until_cached(store, account, id).await;

    assert!(!cached_while_away);
    assert!(!cached_after_read);
}

#[tokio::test]
async fn with_no_cache_entries_the_cache_has_no_listener() {
    let Some(schema) = temp_schema().await else {
        return;
    };
    let store = schema
        .with_options(tidemark_store_postgres::ConnectOptions {
            shipment_cache_entries: 0,
            ..Default::default()
        })
        .await;
    let (account, update) = a_tracked_shipment(store.as_ref()).await;

    store
        .shipment_with_containers(account, update.shipment.id)
        .await
        .unwrap();

    assert!(store.shipment_cache_listener().is_none());
    assert!(!store.shipment_is_cached(update.shipment.id));
}
