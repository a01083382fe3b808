//! The [`EdiStore`](crate::EdiStore) part of the contract that backends' migration tests
//! call.

use chrono::{TimeZone, Utc};
use tidemark_domain::{AccountId, JobId, NewJob};
use uuid::Uuid;

use crate::{EdiFinish, EdiMessage, EdiStore};

/// The EDI event id of the status the seed's interchange gave.
pub const SEEDED_EVENT_ID: &str = "edi:HAMSUD:UV:MRSU4371639:MXZLO:2022-11-21T01:24:00Z";

/// A database upgraded with an interchange finished before the EDI event ids were recorded,
/// whose one transaction gave [`SEEDED_EVENT_ID`] for `acme`: an interchange resending that
/// status gives no new event, one with another status does.
pub async fn event_ids_from_before_their_record_are_known(store: &dyn EdiStore, acme: AccountId) {
    let at = Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).single().unwrap();
    let finish = async |n: u128, event_id: &str| {
        let id = Uuid::from_u128(0x0195_0000_0000_7000_8000_0000_0000_0000 + n);
        let received = EdiMessage::received(id, acme, "api", None, false, 1, at);
        let job = NewJob {
            id: JobId(Uuid::from_u128(
                0x0195_0000_0000_7000_9000_0000_0000_0000 + n,
            )),
            kind: "process_edi_message".to_owned(),
            payload: serde_json::json!({"account_id": acme, "edi_message_id": id}),
            dedup_key: None,
            run_at: at,
            max_attempts: 1,
        };
        store
            .insert_edi_message(&received, b"x", &job)
            .await
            .unwrap();
        let read = EdiMessage {
            status: "processed".to_owned(),
            statuses: 1,
            events: 1,
            ..received
        };
        let key = format!("key-{n}");
        let finished = store
            .finish_edi_message(&read, Some(&key), &[], &[event_id.to_owned()], &[])
            .await
            .unwrap();
        assert_eq!(finished, EdiFinish::Finished);
        store.edi_message(acme, id).await.unwrap().events
    };

    assert_eq!(finish(1, SEEDED_EVENT_ID).await, 0, "the resend");
    assert_eq!(
        finish(2, "edi:HAMSUD:UV:MRSU4371639:MXZLO:2022-11-22T01:24:00Z").await,
        1
    );
}
