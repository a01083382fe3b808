//! A status sent again in a new interchange (a VAN's retransmission, a carrier resending the
//! day's statuses, a terminal repeating its last free day): the interchange is read as its
//! own (`processed`, not `duplicate`), but the status it repeats is the event already
//! recorded, never a second one, and notifies no one again.

use chrono::{Duration, TimeZone, Utc};
use serde_json::Value;
use tidemark_domain::{AccountId, Clock, JobId, NewJob};
use tidemark_store::{EdiMessage, EdiTransactionRecord};
use uuid::Uuid;

use crate::edi_messages::{posted, shipment_of};
use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    edi_a_status_resent_in_a_new_interchange_is_one_transport_event_notified_once,
    edi_a_status_resent_in_a_new_interchange_is_one_raw_event,
    edi_a_resent_interchange_is_processed_and_counts_no_new_event,
    edi_a_status_resent_with_another_time_is_a_new_event,
    edi_an_availability_resent_in_a_new_interchange_is_one_event,
    edi_a_status_resent_after_a_long_history_of_its_numbers_counts_no_new_event,
    edi_one_status_about_two_bookings_is_an_event_for_each_booking,
    edi_one_status_about_two_bookings_resent_is_still_one_event_for_each,
);

const HAMSUD_DISCHARGED: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/x12_4010_315_hamsud_discharged.edi");

const DISCHARGED: &str = "container.transport.vessel_discharged";

/// The same transactions in a new interchange: only the control numbers (ISA13, GS06, GE02,
/// IEA02) differ, as when a VAN retransmits or a line resends the day's statuses.
fn resent(interchange: &[u8], control: &str) -> Vec<u8> {
    String::from_utf8(interchange.to_vec())
        .unwrap()
        .replace("720857", control)
        .into_bytes()
}

/// Tracks the Hamburg Süd sample's bill with a webhook for discharges, receives its 315 and
/// returns its container's id.
async fn discharged_once(app: &TestApp) -> String {
    let webhook = app
        .post_json(
            "/v2/webhooks",
            &serde_json::json!({"data": {"type": "webhook", "attributes": {
                "url": "https://hooks.example.com/tidemark",
                "events": [DISCHARGED],
            }}}),
        )
        .await;
    assert_eq!(webhook.status.as_u16(), 201, "{:?}", webhook.json());
    let request = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    let first = posted(app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    app.run_pending_jobs().await;
    assert_eq!(first["attributes"]["status"], "processed", "{first}");
    let shipment = shipment_of(app, &request).await;
    shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn named(app: &TestApp, container: &str, name: &str) -> Vec<Value> {
    let events = app
        .get_ok(&format!("/v2/containers/{container}/transport_events"))
        .await;
    events["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["attributes"]["event"] == name)
        .cloned()
        .collect()
}

async fn notified(app: &TestApp, event: &str) -> Value {
    app.get_ok(&format!("/v2/webhook_notifications?filter[event]={event}"))
        .await["meta"]["total"]
        .clone()
}

async fn edi_a_status_resent_in_a_new_interchange_is_one_transport_event_notified_once(
    app: TestApp,
) {
    let container = discharged_once(&app).await;
    app.clock.advance(Duration::hours(1));

    posted(
        &app,
        "application/edi-x12",
        &resent(HAMSUD_DISCHARGED, "720858"),
    )
    .await;
    app.run_pending_jobs().await;

    let discharges = named(&app, &container, DISCHARGED).await;
    assert_eq!(discharges.len(), 1, "{discharges:?}");
    assert_eq!(notified(&app, DISCHARGED).await, 1);
}

async fn edi_a_status_resent_in_a_new_interchange_is_one_raw_event(app: TestApp) {
    let container = discharged_once(&app).await;
    let before = app
        .get_ok(&format!("/v2/containers/{container}/raw_events"))
        .await;
    app.clock.advance(Duration::hours(1));

    posted(
        &app,
        "application/edi-x12",
        &resent(HAMSUD_DISCHARGED, "720858"),
    )
    .await;
    app.run_pending_jobs().await;

    let after = app
        .get_ok(&format!("/v2/containers/{container}/raw_events"))
        .await;
    assert!(!before["data"].as_array().unwrap().is_empty(), "{before}");
    assert_eq!(before["data"], after["data"]);
}

async fn edi_a_resent_interchange_is_processed_and_counts_no_new_event(app: TestApp) {
    discharged_once(&app).await;

    let again = posted(
        &app,
        "application/edi-x12",
        &resent(HAMSUD_DISCHARGED, "720858"),
    )
    .await;

    let attributes = &again["attributes"];
    assert_eq!(attributes["status"], "processed", "{again}");
    assert_eq!(again["relationships"]["duplicate_of"]["data"], Value::Null);
    assert_eq!(attributes["control_number"], "000720858", "{again}");
    assert_eq!(attributes["statuses_count"], 1, "{again}");
    assert_eq!(attributes["events_count"], 0, "{again}");
}

async fn edi_a_status_resent_with_another_time_is_a_new_event(app: TestApp) {
    // The same discharge, with its time (B4-07, and the R4*5's DTM) moved two hours: a new
    // word on when it happened, applied as a carrier event with another id is.
    let container = discharged_once(&app).await;
    let moved = String::from_utf8(resent(HAMSUD_DISCHARGED, "720858"))
        .unwrap()
        .replace("*20221121*0124*", "*20221121*0324*")
        .replace("DTM*140*20221121*012400*LT", "DTM*140*20221121*032400*LT");

    let message = posted(&app, "application/edi-x12", moved.as_bytes()).await;
    app.run_pending_jobs().await;

    assert_eq!(message["attributes"]["events_count"], 1, "{message}");
    let discharges = named(&app, &container, DISCHARGED).await;
    assert_eq!(discharges.len(), 2, "{discharges:?}");
    assert_eq!(notified(&app, DISCHARGED).await, 2);
}

async fn edi_an_availability_resent_in_a_new_interchange_is_one_event(app: TestApp) {
    const RAIL_ARRIVAL: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_arrival.edi");
    const LAST_FREE_DAY: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_last_free_day.edi");
    const AVAILABLE: &str = "container.transport.available";
    // The guide's 322 with its status made "available for delivery" (`AV`).
    let available = |control: &str| {
        String::from_utf8(LAST_FREE_DAY.to_vec())
            .unwrap()
            .replace("Q5*NF*", "Q5*AV*")
            .replace("053849086", control)
    };
    app.clock
        .set(Utc.with_ymd_and_hms(2016, 5, 27, 12, 0, 0).unwrap());
    let request = app.track("container", "HASU4316170", "SUDU").await;
    posted(&app, "application/edi-x12", RAIL_ARRIVAL).await;
    app.run_pending_jobs().await;
    posted(
        &app,
        "application/edi-x12",
        available("053849087").as_bytes(),
    )
    .await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &request).await;
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let before = named(&app, &container, AVAILABLE).await;
    assert!(!before.is_empty());
    app.clock.advance(Duration::days(1));

    posted(
        &app,
        "application/edi-x12",
        available("053849088").as_bytes(),
    )
    .await;
    app.run_pending_jobs().await;

    assert_eq!(named(&app, &container, AVAILABLE).await, before);
}

/// `transactions` stored transactions naming `number` (and saying nothing), received a day
/// before now: a long history, written as the store keeps it, since sending that many
/// through the API would only make the test slow.
async fn history_naming(app: &TestApp, account: AccountId, number: &str, transactions: u32) {
    let at = app.clock.now() - Duration::days(1);
    let id = Uuid::from_u128(0x0194_0000_0000_7000_8000_0000_0000_0001);
    let received = EdiMessage::received(id, account, "api", None, false, 7, at);
    let job = NewJob {
        id: JobId(Uuid::from_u128(0x0194_0000_0000_7000_8000_0000_0000_0002)),
        kind: "process_edi_message".to_owned(),
        payload: serde_json::json!({"account_id": account, "edi_message_id": id}),
        dedup_key: None,
        run_at: at,
        max_attempts: 1,
    };
    let store = &app.app.store;
    store
        .insert_edi_message(&received, b"history", &job)
        .await
        .unwrap();
    let records: Vec<EdiTransactionRecord> = (0..transactions)
        .map(|position| EdiTransactionRecord {
            message_id: id,
            account_id: account,
            position,
            set_id: "315".to_owned(),
            control_number: format!("{position:09}"),
            numbers: vec![number.to_owned()],
            scac: None,
            events: serde_json::json!([]),
            facts: serde_json::json!([]),
            segments: String::new(),
            matched: true,
            created_at: at,
        })
        .collect();
    let processed = EdiMessage {
        status: "processed".to_owned(),
        transactions,
        ..received
    };
    store
        .finish_edi_message(&processed, Some("history"), &records, &[], &[])
        .await
        .unwrap();
}

async fn edi_a_status_resent_after_a_long_history_of_its_numbers_counts_no_new_event(app: TestApp) {
    discharged_once(&app).await;
    let listed = app.get_ok("/v2/edi_messages").await;
    let account = AccountId(
        listed["data"][0]["relationships"]["account"]["data"]["id"]
            .as_str()
            .unwrap()
            .parse()
            .unwrap(),
    );
    // Twenty thousand older transactions naming the bill: more than a read of its history
    // would take before reaching the discharge.
    history_naming(&app, account, "SUDUN2SL008733AF", 20_000).await;
    app.clock.advance(Duration::hours(1));

    let again = posted(
        &app,
        "application/edi-x12",
        &resent(HAMSUD_DISCHARGED, "720858"),
    )
    .await;

    assert_eq!(again["attributes"]["statuses_count"], 1, "{again}");
    assert_eq!(again["attributes"]["events_count"], 0, "{again}");
}

const DEPARTED: &str = "container.transport.vessel_departed";

/// One IFTSTA whose vessel departure of container ABCD1234567 is given twice, once for each
/// booking the box carries cargo of (`CNI+1`, `CNI+2`): one status each, with one EDI event
/// id (sender, code, container, place and time).
fn departed_for_two_bookings(control: &str) -> String {
    let status = |consignment: u32, booking: &str| {
        format!(
            "CNI+{consignment}'STS+1+VD::22'RFF+BN:{booking}'DTM+334:209904172300:203'\
             LOC+175+CNXGG:139:6:XINGANG'TDT+20+9996R+1++:172+++9999999:146:11:DUMP VESSEL'\
             EQD+CN+ABCD1234567+42G0:102:5+++5'"
        )
    };
    format!(
        "UNB+UNOC:2+IITTRR:ZZZ+999999:ZZZ+110419:0540+{control}'UNH+1+IFTSTA:D:99B:UN'\
         BGM+23+315+9'DTM+137:209904172300:203'NAD+CA+ABCD:160:87'{}{}UNT+19+1'\
         UNZ+1+{control}'",
        status(1, "BKAAA111"),
        status(2, "BKBBB222"),
    )
}

/// The departures listed for the container of `request`'s shipment.
async fn departures_of(app: &TestApp, request: &str) -> Vec<Value> {
    let shipment = shipment_of(app, request).await;
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("the shipment has a container: {shipment}"))
        .to_owned();
    named(app, &container, DEPARTED).await
}

async fn edi_one_status_about_two_bookings_is_an_event_for_each_booking(app: TestApp) {
    let first = app.track("booking_number", "BKAAA111", "OOLU").await;
    let second = app.track("booking_number", "BKBBB222", "OOLU").await;

    let message = posted(
        &app,
        "application/edifact",
        departed_for_two_bookings("6771").as_bytes(),
    )
    .await;
    app.run_pending_jobs().await;

    assert_eq!(message["attributes"]["events_count"], 2, "{message}");
    assert_eq!(departures_of(&app, &first).await.len(), 1);
    assert_eq!(departures_of(&app, &second).await.len(), 1);
}

async fn edi_one_status_about_two_bookings_resent_is_still_one_event_for_each(app: TestApp) {
    let first = app.track("booking_number", "BKAAA111", "OOLU").await;
    posted(
        &app,
        "application/edifact",
        departed_for_two_bookings("6771").as_bytes(),
    )
    .await;
    app.run_pending_jobs().await;
    app.clock.advance(Duration::hours(1));

    let again = posted(
        &app,
        "application/edifact",
        departed_for_two_bookings("6772").as_bytes(),
    )
    .await;
    app.run_pending_jobs().await;

    assert_eq!(again["attributes"]["status"], "processed", "{again}");
    assert_eq!(again["attributes"]["events_count"], 0, "{again}");
    assert_eq!(departures_of(&app, &first).await.len(), 1);
}
