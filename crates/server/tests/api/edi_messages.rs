//! EDI over HTTP (`/v2/edi_messages`): public interchanges (X12 315/322 4010, 5010 and
//! 7010, EDIFACT IFTSTA D.99B and D.00B; each fixture's source is beside it in
//! `crates/edi/tests/fixtures/`) become the same shipments, containers and events as a
//! carrier's answer; duplicates, broken transactions, unmatched numbers and bad bodies are
//! handled without losing anything.

use axum::http::{Method, StatusCode};
use chrono::{TimeZone, Utc};
use serde_json::Value;

use crate::helpers::TestApp;
use crate::on_both_backends;

/// The lines without an API are followed by EDI as the server configures them.
mod edi_lines {
    use super::*;

    on_both_backends!(carriers = configured;
        a_line_without_an_api_waits_pending_until_its_first_interchange,
    );
}

on_both_backends!(
    a_discharge_status_for_a_tracked_bill_becomes_its_shipment_container_and_event,
    every_request_an_interchange_names_is_applied,
    an_interchange_naming_nothing_tracked_is_unmatched_until_its_request_arrives,
    the_same_interchange_sent_twice_is_a_duplicate_and_changes_nothing,
    a_different_interchange_reusing_a_control_number_is_read_not_dropped,
    a_file_adding_an_interchange_to_one_already_received_is_not_a_duplicate,
    a_broken_transaction_is_listed_with_its_position_while_the_others_apply,
    every_envelope_version_and_iftsta_directory_is_read,
    edi_a_file_of_several_interchanges_is_acknowledged_interchange_by_interchange,
    bodies_that_are_not_edi_are_refused_or_recorded_as_rejected,
    each_interchange_is_acknowledged_in_its_own_syntax,
    edi_input_without_its_interchange_header_is_read_but_not_acknowledged,
    interchanges_are_listed_by_status_and_seen_only_by_their_account,
    a_ramps_arrival_and_last_free_day_show_on_the_container,
    edi_the_railroad_a_ramp_names_is_the_containers_rail_carrier_for_both_legs,
    containers_are_listed_by_last_free_day_hold_and_availability,
    edi_a_senders_code_table_maps_its_private_code_to_a_rail_departure_on_the_container,
    edi_without_a_table_a_private_code_without_words_stays_an_unknown_code,
    edi_without_a_table_a_private_code_is_read_from_its_own_words,
    edi_a_vessel_arrival_at_a_city_in_one_zone_is_an_event,
    edi_a_shipment_known_only_from_a_ramps_322s_gets_its_rail_moves_and_inland_out_gate,
    edi_a_ramps_last_free_day_is_kept_once_the_box_left_the_ramp,
    edi_what_a_ramps_322s_give_says_it_comes_from_a_terminal,
    edi_a_ramps_322s_kept_raw_name_their_sender_as_provider,
    edi_an_arrival_estimate_from_a_terminals_322_says_it_comes_from_the_terminal,
    edi_an_arrival_estimate_from_a_lines_315_says_it_comes_from_the_shipping_line,
    edi_what_a_lines_315_gives_says_it_comes_from_the_shipping_line,
    edi_a_ramps_rail_moves_name_no_vessel,
);

const HAMSUD_DISCHARGED: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/x12_4010_315_hamsud_discharged.edi");
const TWO_GROUPS_ONE_BROKEN: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/x12_4010_315_two_groups_one_broken.edi");
const CARGOSMART_IFTSTA: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/iftsta_d99b_cargosmart_departed.edi");

/// Every public fixture, with its syntax's media type.
const FIXTURES: &[(&str, &str, &[u8])] = &[
    (
        "iftsta_d00b_rail_departed",
        "application/edifact",
        include_bytes!("../../../edi/tests/fixtures/iftsta_d00b_rail_departed.edi"),
    ),
    (
        "iftsta_d99b_cargosmart_departed",
        "application/edifact",
        CARGOSMART_IFTSTA,
    ),
    (
        "iftsta_d99b_cargosmart_departed_una",
        "application/edifact",
        include_bytes!("../../../edi/tests/fixtures/iftsta_d99b_cargosmart_departed_una.edi"),
    ),
    (
        "x12_4010_315_cmacgm_departed_loaded",
        "application/edi-x12",
        include_bytes!("../../../edi/tests/fixtures/x12_4010_315_cmacgm_departed_loaded.edi"),
    ),
    (
        "x12_4010_315_hamsud_discharged",
        "application/edi-x12",
        HAMSUD_DISCHARGED,
    ),
    (
        "x12_4010_322_hamsud_last_free_day",
        "application/edi-x12",
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_last_free_day.edi"),
    ),
    (
        "x12_4010_322_hamsud_rail_arrival",
        "application/edi-x12",
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_arrival.edi"),
    ),
    (
        "x12_5010_315_transshipment_arrival",
        "application/edi-x12",
        include_bytes!("../../../edi/tests/fixtures/x12_5010_315_transshipment_arrival.edi"),
    ),
    (
        "x12_7010_315_empty_arrival_crlf",
        "application/edi-x12",
        include_bytes!("../../../edi/tests/fixtures/x12_7010_315_empty_arrival_crlf.edi"),
    ),
];

async fn post_edi(app: &TestApp, media_type: &str, body: &[u8]) -> crate::helpers::TestResponse {
    app.request(
        Method::POST,
        "/v2/edi_messages",
        Some(&app.key),
        Some((media_type, body.to_vec())),
    )
    .await
}

/// Posts an interchange that must be accepted, and returns its resource.
pub(crate) async fn posted(app: &TestApp, media_type: &str, body: &[u8]) -> Value {
    let response = post_edi(app, media_type, body).await;
    assert_eq!(
        response.status,
        StatusCode::CREATED,
        "{}",
        String::from_utf8_lossy(&response.body)
    );
    response.json()["data"].clone()
}

pub(crate) async fn shipment_of(app: &TestApp, request_id: &str) -> Value {
    let request = app
        .get_ok(&format!("/v2/tracking_requests/{request_id}"))
        .await;
    let shipment = request["data"]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("no shipment yet: {request}"))
        .to_owned();
    app.get_ok(&format!("/v2/shipments/{shipment}?include=containers"))
        .await
}

fn event_names(events: &Value) -> Vec<String> {
    events["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["attributes"]["event"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_discharge_status_for_a_tracked_bill_becomes_its_shipment_container_and_event(
    app: TestApp,
) {
    let request = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;

    let message = posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    app.run_pending_jobs().await;

    assert_eq!(message["attributes"]["status"], "processed");
    assert_eq!(message["attributes"]["transactions_count"], 1);
    assert_eq!(message["attributes"]["unmatched_transactions_count"], 0);
    assert_eq!(message["attributes"]["sender"], "HAMSUD");
    let shipment = shipment_of(&app, &request).await;
    assert_eq!(
        shipment["data"]["attributes"]["port_of_discharge_locode"],
        "MXZLO"
    );
    let container = &shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .expect("the container the status names")["attributes"];
    assert_eq!(container["number"], "MRSU4371639");
    assert!(
        container["pod_discharged_at"]
            .as_str()
            .is_some_and(|at| at.starts_with("2022-11-21")),
        "{container}"
    );
    let id = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .unwrap()["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = app
        .get_ok(&format!("/v2/containers/{id}/transport_events"))
        .await;
    assert!(
        event_names(&events).contains(&"container.transport.vessel_discharged".to_owned()),
        "{events}"
    );
}

async fn every_request_an_interchange_names_is_applied(app: TestApp) {
    // The bill and the container of the same status, each asked for on its own: one job
    // applies both.
    let bill = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    let container = app.track("container", "MRSU4371639", "SUDU").await;

    let message = posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    app.run_pending_jobs().await;

    assert_eq!(message["attributes"]["unmatched_transactions_count"], 0);
    for request in [&bill, &container] {
        let found = app
            .get_ok(&format!("/v2/tracking_requests/{request}"))
            .await;
        assert_eq!(found["data"]["attributes"]["status"], "created", "{found}");
        let shipment = shipment_of(&app, request).await;
        assert_eq!(
            shipment["data"]["attributes"]["port_of_discharge_locode"],
            "MXZLO"
        );
    }
}

async fn a_line_without_an_api_waits_pending_until_its_first_interchange(app: TestApp) {
    // OOCL sends its status through CargoSmart, whose IFTSTA uses 315 codes.
    let request = app.track("bill_of_lading", "1234567890AB", "OOLU").await;
    app.tick().await;
    let waiting = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await;
    assert_eq!(waiting["data"]["attributes"]["status"], "pending");
    assert_eq!(waiting["data"]["attributes"]["failed_reason"], Value::Null);

    posted(&app, "application/edifact", CARGOSMART_IFTSTA).await;
    app.run_pending_jobs().await;

    let found = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await;
    assert_ne!(found["data"]["attributes"]["status"], "pending", "{found}");
    let shipment = shipment_of(&app, &request).await;
    assert_eq!(
        shipment["data"]["attributes"]["port_of_lading_locode"],
        "CNXGG"
    );
}

async fn an_interchange_naming_nothing_tracked_is_unmatched_until_its_request_arrives(
    app: TestApp,
) {
    let message = posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    assert_eq!(message["attributes"]["unmatched_transactions_count"], 1);
    let unmatched = app
        .get_ok("/v2/edi_messages?filter[status]=unmatched")
        .await;
    assert_eq!(unmatched["data"][0]["id"], message["id"]);

    let request = app.track("container", "MRSU4371639", "SUDU").await;
    app.run_pending_jobs().await;

    let shipment = shipment_of(&app, &request).await;
    assert_eq!(
        shipment["data"]["attributes"]["bill_of_lading_number"],
        "SUDUN2SL008733AF"
    );
    let unmatched = app
        .get_ok("/v2/edi_messages?filter[status]=unmatched")
        .await;
    assert_eq!(unmatched["data"], serde_json::json!([]), "{unmatched}");
}

async fn the_same_interchange_sent_twice_is_a_duplicate_and_changes_nothing(app: TestApp) {
    let request = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    let first = posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &request).await;
    let container = shipment["data"]["relationships"]["containers"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let raw_before = app
        .get_ok(&format!("/v2/containers/{container}/raw_events"))
        .await;

    let second = posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    app.run_pending_jobs().await;

    assert_eq!(second["attributes"]["status"], "duplicate");
    assert_eq!(
        second["relationships"]["duplicate_of"]["data"]["id"],
        first["id"]
    );
    let raw_after = app
        .get_ok(&format!("/v2/containers/{container}/raw_events"))
        .await;
    assert!(!raw_before["data"].as_array().unwrap().is_empty());
    assert_eq!(raw_before["data"], raw_after["data"]);
}

async fn a_different_interchange_reusing_a_control_number_is_read_not_dropped(app: TestApp) {
    // Hamburg Süd's 322 guide gives each example the same sender and ISA13 (053849086),
    // as careless senders do too: a different interchange under a used number still counts.
    let last_free_day: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_last_free_day.edi");
    let rail_arrival: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_arrival.edi");
    let first = posted(&app, "application/edi-x12", last_free_day).await;

    let second = posted(&app, "application/edi-x12", rail_arrival).await;

    assert_eq!(
        first["attributes"]["control_number"],
        second["attributes"]["control_number"]
    );
    assert_eq!(
        first["attributes"]["sender"],
        second["attributes"]["sender"]
    );
    assert_eq!(second["attributes"]["status"], "processed", "{second}");
    assert_eq!(second["relationships"]["duplicate_of"]["data"], Value::Null);
    assert_eq!(second["attributes"]["transactions_count"], 1, "{second}");
}

async fn a_file_adding_an_interchange_to_one_already_received_is_not_a_duplicate(app: TestApp) {
    let cma_cgm: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_315_cmacgm_departed_loaded.edi");
    let both = [HAMSUD_DISCHARGED, b"\n", cma_cgm].concat();
    posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;

    let added = posted(&app, "application/edi-x12", &both).await;
    let again = posted(&app, "application/edi-x12", &both).await;

    assert_ne!(added["attributes"]["status"], "duplicate", "{added}");
    // Hamburg Süd's one 315 and CMA CGM's two.
    assert_eq!(added["attributes"]["transactions_count"], 3, "{added}");
    assert_eq!(again["attributes"]["status"], "duplicate", "{again}");
    assert_eq!(
        again["relationships"]["duplicate_of"]["data"]["id"],
        added["id"]
    );
}

async fn a_broken_transaction_is_listed_with_its_position_while_the_others_apply(app: TestApp) {
    let message = posted(&app, "application/edi-x12", TWO_GROUPS_ONE_BROKEN).await;

    let attributes = &message["attributes"];
    assert_eq!(attributes["status"], "partially_processed", "{message}");
    assert_eq!(attributes["transactions_count"], 3);
    assert_eq!(attributes["rejected_transactions_count"], 1);
    let error = &attributes["errors"][0];
    assert_eq!(error["transaction"], 2, "{error}");
    assert!(error["reason"].as_str().is_some_and(|r| !r.is_empty()));
    assert!(
        error["position"].is_number()
            || error["segment"].is_string()
            || error["reason"].is_string()
    );
}

async fn every_envelope_version_and_iftsta_directory_is_read(app: TestApp) {
    // CargoSmart's guide gives the same IFTSTA with and without UNA: the same sender,
    // control number and message, so the second is, rightly, a duplicate. Hamburg Süd's two
    // 322s share a control number but report different moves: each is read.
    for (name, media_type, body) in FIXTURES {
        let message = posted(&app, media_type, body).await;
        let status = message["attributes"]["status"].as_str().unwrap();
        if *name == "iftsta_d99b_cargosmart_departed_una" {
            assert_eq!(status, "duplicate", "{name}: {message}");
            continue;
        }
        assert!(
            status == "processed" || status == "partially_processed",
            "{name}: {message}"
        );
        assert!(
            message["attributes"]["statuses_count"].as_u64().unwrap() >= 1,
            "{name}: {message}"
        );
    }
}

async fn bodies_that_are_not_edi_are_refused_or_recorded_as_rejected(app: TestApp) {
    let json = post_edi(&app, "application/json", b"{}").await;
    assert_eq!(json.status, StatusCode::UNSUPPORTED_MEDIA_TYPE);
    assert!(
        json.error_member("detail")
            .as_str()
            .unwrap()
            .contains("application/edi-x12")
    );

    let empty = post_edi(&app, "application/edi-x12", b"  \n").await;
    assert_eq!(empty.status, StatusCode::BAD_REQUEST);

    let read_only = app
        .request(
            Method::POST,
            "/v2/edi_messages",
            Some(&app.read_only_key),
            Some(("application/edi-x12", HAMSUD_DISCHARGED.to_vec())),
        )
        .await;
    assert_eq!(read_only.status, StatusCode::FORBIDDEN);

    // Kept, so nothing sent is lost, and said why.
    let garbage = posted(
        &app,
        "application/edi-x12",
        b"<html><script>alert(1)</script>",
    )
    .await;
    assert_eq!(garbage["attributes"]["status"], "rejected");
    assert!(
        garbage["attributes"]["errors"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("neither X12")
    );
    let ack = app
        .get(&format!(
            "/v2/edi_messages/{}/acknowledgement",
            garbage["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ack.status, StatusCode::CONFLICT);
}

async fn each_interchange_is_acknowledged_in_its_own_syntax(app: TestApp) {
    let x12 = posted(&app, "application/edi-x12", TWO_GROUPS_ONE_BROKEN).await;
    let edifact = posted(&app, "application/edifact", CARGOSMART_IFTSTA).await;

    let ack = app
        .get(&format!(
            "/v2/edi_messages/{}/acknowledgement",
            x12["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ack.status, StatusCode::OK);
    assert_eq!(ack.header("content-type"), Some("application/edi-x12"));
    let text = String::from_utf8(ack.body.clone()).unwrap();
    assert!(text.starts_with("ISA"), "{text}");
    assert!(text.contains("ST*997"), "{text}");
    // The broken transaction is rejected (AK5*R), the good ones accepted.
    assert!(text.contains("AK5*R"), "{text}");
    assert!(text.contains("AK5*A"), "{text}");

    let ack = app
        .get(&format!(
            "/v2/edi_messages/{}/acknowledgement",
            edifact["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ack.status, StatusCode::OK);
    assert_eq!(ack.header("content-type"), Some("application/edifact"));
    assert!(String::from_utf8_lossy(&ack.body).contains("CONTRL"));
}

async fn edi_input_without_its_interchange_header_is_read_but_not_acknowledged(app: TestApp) {
    // A transaction set and a message printed without ISA / UNB: read, but there is no
    // envelope (sender, receiver, control number) to address a 997 or CONTRL to.
    let bare_x12: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_5010_315_bare_transaction_set.edi");
    let bare_edifact: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/iftsta_d01b_eancom_bare_message_crlf.edi");
    for (media_type, body) in [
        ("application/edi-x12", bare_x12),
        ("application/edifact", bare_edifact),
    ] {
        let message = posted(&app, media_type, body).await;
        let ack = app
            .get(&format!(
                "/v2/edi_messages/{}/acknowledgement",
                message["id"].as_str().unwrap()
            ))
            .await;
        assert_eq!(ack.status, StatusCode::CONFLICT, "{media_type}");
        assert_eq!(ack.error_member("code"), "not_acknowledgeable");
        assert!(
            ack.error_member("detail")
                .as_str()
                .unwrap()
                .contains("no envelope to address"),
            "{media_type}"
        );
        // It was read: only the answer is impossible.
        assert!(
            !ack.error_member("detail")
                .as_str()
                .unwrap()
                .contains("could not be read"),
            "{media_type}"
        );
    }
}

/// The acknowledgement of `message`, as text.
async fn acknowledgement_of(app: &TestApp, message: &Value) -> String {
    let ack = app
        .get(&format!(
            "/v2/edi_messages/{}/acknowledgement",
            message["id"].as_str().unwrap()
        ))
        .await;
    assert_eq!(ack.status, StatusCode::OK);
    String::from_utf8(ack.body.clone()).unwrap()
}

async fn edi_a_file_of_several_interchanges_is_acknowledged_interchange_by_interchange(
    app: TestApp,
) {
    let cma_cgm: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_315_cmacgm_departed_loaded.edi");
    let x12 = posted(
        &app,
        "application/edi-x12",
        &[HAMSUD_DISCHARGED, b"\n", cma_cgm].concat(),
    )
    .await;
    let text = acknowledgement_of(&app, &x12).await;
    // One 997 interchange per interchange received, each to its own sender, with its own
    // control number (the second the first's plus one).
    let isas: Vec<&str> = text
        .split('~')
        .filter(|s| s.trim_start().starts_with("ISA"))
        .collect();
    assert_eq!(isas.len(), 2, "{text}");
    assert!(isas[0].contains("*ZZ*HAMSUD         *"), "{text}");
    assert!(isas[1].contains("*ZZ*CMACGM         *"), "{text}");
    let numbers: Vec<u32> = isas
        .iter()
        .map(|isa| isa.split('*').nth(13).unwrap().parse().unwrap())
        .collect();
    assert_eq!(numbers[1], numbers[0] % 999_999_999 + 1, "{text}");
    assert_eq!(text.matches("IEA*1*").count(), 2, "{text}");
    assert!(text.contains("AK1*QO*720857~"), "{text}");
    assert!(text.contains("AK1*QO*81466~"), "{text}");

    let departed: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/iftsta_d99b_cargosmart_departed.edi");
    let departed_una: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/iftsta_d99b_cargosmart_departed_una.edi");
    let edifact = posted(
        &app,
        "application/edifact",
        &[departed, departed_una].concat(),
    )
    .await;
    let text = acknowledgement_of(&app, &edifact).await;
    // One CONTRL interchange per interchange received.
    assert_eq!(text.matches("UNB+UNOC:3+").count(), 2, "{text}");
    assert_eq!(
        text.matches("UCI+6771+IITTRR:ZZZ+999999:ZZZ+7'").count(),
        2,
        "{text}"
    );
    assert_eq!(text.matches("UNZ+1+").count(), 2, "{text}");
}

async fn interchanges_are_listed_by_status_and_seen_only_by_their_account(app: TestApp) {
    let good = posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    let bad = posted(&app, "application/edi-x12", b"not edi at all").await;

    let all = app.get_ok("/v2/edi_messages").await;
    assert_eq!(all["meta"]["total"], 2, "{all}");
    assert_eq!(all["data"][0]["id"], bad["id"], "newest first");
    let rejected = app.get_ok("/v2/edi_messages?filter[status]=rejected").await;
    assert_eq!(rejected["data"].as_array().unwrap().len(), 1);
    let bad_filter = app.get("/v2/edi_messages?filter[status]=lost").await;
    assert_eq!(bad_filter.status, StatusCode::BAD_REQUEST);

    let other = app.other_account_key().await;
    let elsewhere = app
        .request(
            Method::GET,
            &format!("/v2/edi_messages/{}", good["id"].as_str().unwrap()),
            Some(&other),
            None,
        )
        .await;
    assert_eq!(elsewhere.status, StatusCode::NOT_FOUND);
}

/// A container with its ramp's last free day (2016-06-25), on the clock of that summer.
async fn container_with_a_ramp_last_free_day(app: &TestApp) -> (String, Value) {
    const RAIL_ARRIVAL: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_arrival.edi");
    const LAST_FREE_DAY: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_last_free_day.edi");
    // The guide's two examples share one control number; the second is renumbered (ISA13
    // and IEA02 only) so that it counts as the next interchange, as it would in a feed.
    let last_free_day = String::from_utf8(LAST_FREE_DAY.to_vec())
        .unwrap()
        .replace("053849086", "053849087");
    // Then, not years later: a shipment long past its arrival stops being followed.
    app.clock
        .set(Utc.with_ymd_and_hms(2016, 5, 27, 12, 0, 0).unwrap());
    let request = app.track("container", "HASU4316170", "SUDU").await;
    posted(app, "application/edi-x12", RAIL_ARRIVAL).await;
    app.run_pending_jobs().await;
    let message = posted(app, "application/edi-x12", last_free_day.as_bytes()).await;
    app.run_pending_jobs().await;
    assert_eq!(message["attributes"]["status"], "processed", "{message}");
    let shipment = shipment_of(app, &request).await;
    let container = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .expect("the container")
        .clone();
    (container["id"].as_str().unwrap().to_owned(), container)
}

async fn a_ramps_arrival_and_last_free_day_show_on_the_container(app: TestApp) {
    let (_, container) = container_with_a_ramp_last_free_day(&app).await;

    let attributes = &container["attributes"];
    assert!(
        attributes["pickup_lfd"]
            .as_str()
            .is_some_and(|at| at.starts_with("2016-06-2")),
        "{attributes}"
    );
    assert_eq!(
        attributes["import_deadlines"]["pickup_lfd_rail"],
        attributes["pickup_lfd"]
    );
    assert!(
        attributes["terminal_checked_at"].is_string(),
        "{attributes}"
    );
    assert_eq!(attributes["ind_facility_lfd_on"], "2016-06-25");
    // The ramp's arrival (its 322 names the railroad) is the rail leg's, never the ship's
    // (with no ocean route known yet it stays a raw event).
    assert_eq!(attributes["pod_arrived_at"], Value::Null, "{attributes}");
}

async fn edi_the_railroad_a_ramp_names_is_the_containers_rail_carrier_for_both_legs(app: TestApp) {
    const RAIL_ARRIVAL: &[u8] =
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_arrival.edi");
    app.clock
        .set(Utc.with_ymd_and_hms(2016, 5, 27, 12, 0, 0).unwrap());
    let request = app.track("container", "HASU4316170", "SUDU").await;
    posted(&app, "application/edi-x12", RAIL_ARRIVAL).await;
    app.run_pending_jobs().await;
    let shipment = shipment_of(&app, &request).await;
    let id = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .and_then(|c| c["id"].as_str())
        .expect("the container")
        .to_owned();

    let container = app.get_ok(&format!("/v2/containers/{id}")).await;

    let attributes = &container["data"]["attributes"];
    // N1*RR*BNSF Railway*ZZ*BNSF on the ramp's arrival: the inland leg's railroad, and the
    // only one known, so the leg from the port's as well.
    assert_eq!(attributes["ind_rail_carrier_scac"], "BNSF", "{attributes}");
    assert_eq!(attributes["pod_rail_carrier_scac"], "BNSF", "{attributes}");
    // Naming a railroad is no terminal's report.
    assert_eq!(
        attributes["terminal_checked_at"],
        Value::Null,
        "{attributes}"
    );
}

async fn containers_are_listed_by_last_free_day_hold_and_availability(app: TestApp) {
    let (id, _) = container_with_a_ramp_last_free_day(&app).await;
    let ids = |list: Value| -> Vec<String> {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["id"].as_str().unwrap().to_owned())
            .collect()
    };
    app.clock
        .set(Utc.with_ymd_and_hms(2016, 6, 20, 12, 0, 0).unwrap());

    let within_7 = app
        .get_ok("/v2/containers?filter[pickup_lfd_within_days]=7")
        .await;
    let within_3 = app
        .get_ok("/v2/containers?filter[pickup_lfd_within_days]=3")
        .await;
    let not_held = app.get_ok("/v2/containers?filter[on_hold]=false").await;
    let held = app.get_ok("/v2/containers?filter[on_hold]=true").await;
    let available = app
        .get_ok("/v2/containers?filter[available_for_pickup]=true")
        .await;
    let bad = app
        .get("/v2/containers?filter[pickup_lfd_within_days]=soon")
        .await;

    assert_eq!(ids(within_7), vec![id.clone()]);
    assert!(ids(within_3).is_empty());
    assert_eq!(ids(not_held), vec![id]);
    assert!(ids(held).is_empty());
    assert!(ids(available).is_empty());
    assert_eq!(bad.status, StatusCode::BAD_REQUEST);
}

/// The D.00B sample (sender `SENDER`, private code `P` with its words "Rail Departed from
/// In-Transit Locat"), its status time given a zone (Syracuse is not in the reference data)
/// and its STS replaced by `sts`.
fn rail_departed_with(sts: &str) -> Vec<u8> {
    const RAIL: &[u8] = include_bytes!("../../../edi/tests/fixtures/iftsta_d00b_rail_departed.edi");
    String::from_utf8(RAIL.to_vec())
        .unwrap()
        .replace("DTM+334:202211190710:203", "DTM+334:202211190710-0500:303")
        .replace("STS+1+P::HS:Rail Departed from In-Transit Locat'", sts)
        .into_bytes()
}

/// The app with `SENDER`'s own code table, in which `P` is a rail departure.
async fn with_senders_table(app: &TestApp, dir: &std::path::Path) -> TestApp {
    let file = dir.join("sender_codes.toml");
    std::fs::write(
        &file,
        "[[code]]\ncode = \"P\"\nmeaning = \"Rail departed from in-transit location\"\n\
         event = \"DEPA\"\nmode = \"RAIL\"\nsource = \"the sender's IFTSTA guide\"\n",
    )
    .unwrap();
    TestApp::with_config(
        app.backend,
        &[
            ("edi.code_tables.0.sender", "SENDER"),
            ("edi.code_tables.0.file", file.to_str().unwrap()),
        ],
    )
    .await
    .unwrap()
}

/// The sample's rail departure at Syracuse is kept on its container: as a raw event (the
/// shipment has no ocean route yet to place it on), or as a milestone.
fn assert_rail_departure_kept(events: &Value, raw: &Value) {
    let departure = raw["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|event| event["attributes"]["original_event"] == "TRANSPORT DEPA ACT LADEN")
        .unwrap_or_else(|| panic!("the rail departure: {raw}"));
    assert_eq!(departure["attributes"]["location_locode"], "USSYR");
    assert_eq!(departure["attributes"]["actual_at"], "2022-11-19T12:10:00Z");
    // The train's carrier (TDT C040 names CSX Transportation) is no vessel.
    assert_eq!(departure["attributes"]["vessel_name"], Value::Null);
    let names = event_names(events);
    assert!(
        names.is_empty() || names.contains(&"container.transport.rail_departed".to_owned()),
        "{events}"
    );
}

/// The sample's container's milestones and raw events.
async fn container_events(app: &TestApp, request: &str) -> (Value, Value) {
    let shipment = shipment_of(app, request).await;
    let container = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .unwrap_or_else(|| panic!("the container: {shipment}"))
        .clone();
    let id = container["id"].as_str().unwrap().to_owned();
    let events = app
        .get_ok(&format!("/v2/containers/{id}/transport_events"))
        .await;
    let raw = app.get_ok(&format!("/v2/containers/{id}/raw_events")).await;
    (events, raw)
}

async fn edi_a_senders_code_table_maps_its_private_code_to_a_rail_departure_on_the_container(
    app: TestApp,
) {
    let dir = tempfile::tempdir().unwrap();
    let app = with_senders_table(&app, dir.path()).await;
    let request = app
        .track("bill_of_lading", "ABCD224O4023815X", "SUDU")
        .await;

    // Without its words, so only the table can read the code.
    let message = posted(
        &app,
        "application/edifact",
        &rail_departed_with("STS+1+P::HS'"),
    )
    .await;
    app.run_pending_jobs().await;

    let attributes = &message["attributes"];
    assert_eq!(attributes["status"], "processed", "{message}");
    assert_eq!(attributes["sender"], "SENDER");
    assert_eq!(attributes["unknown_codes_count"], 0, "{message}");
    assert_eq!(attributes["events_count"], 1, "{message}");
    let (events, raw) = container_events(&app, &request).await;
    assert_rail_departure_kept(&events, &raw);
}

async fn edi_without_a_table_a_private_code_without_words_stays_an_unknown_code(app: TestApp) {
    let message = posted(
        &app,
        "application/edifact",
        &rail_departed_with("STS+1+P::HS'"),
    )
    .await;

    let attributes = &message["attributes"];
    assert_eq!(attributes["status"], "processed", "{message}");
    assert_eq!(attributes["unknown_codes_count"], 1, "{message}");
    assert_eq!(attributes["events_count"], 0, "{message}");
}

async fn edi_without_a_table_a_private_code_is_read_from_its_own_words(app: TestApp) {
    let request = app
        .track("bill_of_lading", "ABCD224O4023815X", "SUDU")
        .await;

    let message = posted(
        &app,
        "application/edifact",
        &rail_departed_with("STS+1+P::HS:Rail Departed from In-Transit Locat'"),
    )
    .await;
    app.run_pending_jobs().await;

    let attributes = &message["attributes"];
    assert_eq!(attributes["status"], "processed", "{message}");
    assert_eq!(attributes["unknown_codes_count"], 0, "{message}");
    assert_eq!(attributes["events_count"], 1, "{message}");
    let (events, raw) = container_events(&app, &request).await;
    assert_rail_departure_kept(&events, &raw);
}

async fn edi_a_vessel_arrival_at_a_city_in_one_zone_is_an_event(app: TestApp) {
    // The public 7010 315's arrival at LOCKBOURNE (B4 city `CI`, no UN/LOCODE, no state):
    // the route is all in the US, where UN/LOCODE's only Lockbourne is in Ohio (Eastern).
    let message = posted(
        &app,
        "application/edi-x12",
        include_bytes!("../../../edi/tests/fixtures/x12_7010_315_empty_arrival_crlf.edi"),
    )
    .await;

    let attributes = &message["attributes"];
    assert_eq!(attributes["status"], "processed", "{message}");
    assert_eq!(attributes["statuses_count"], 1, "{message}");
    assert_eq!(attributes["events_count"], 1, "{message}");
}

/// Hamburg Süd's four ramp 322s for HASU4316170, in the order they happened: loaded on
/// rail at Long Beach (05-24), arrived at Saint Paul (05-26), out-gated at Chicago, the
/// destination rail terminal (06-10), and the ramp's last free day (06-25). The guide's
/// examples share one control number; each is renumbered (ISA13 and IEA02 only), as a
/// feed's would be. Returns the tracking request.
async fn ramp_only_shipment(app: &TestApp) -> String {
    const RAMP_322S: [&[u8]; 4] = [
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_loaded.edi"),
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_rail_arrival.edi"),
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_outgate.edi"),
        include_bytes!("../../../edi/tests/fixtures/x12_4010_322_hamsud_last_free_day.edi"),
    ];
    app.clock
        .set(Utc.with_ymd_and_hms(2016, 6, 11, 12, 0, 0).unwrap());
    let request = app.track("container", "HASU4316170", "SUDU").await;
    for (n, body) in RAMP_322S.iter().enumerate() {
        let body = String::from_utf8(body.to_vec())
            .unwrap()
            .replace("053849086", &format!("05384910{n}"));
        let message = posted(app, "application/edi-x12", body.as_bytes()).await;
        assert_eq!(message["attributes"]["status"], "processed", "{message}");
        app.run_pending_jobs().await;
    }
    request
}

async fn edi_a_shipment_known_only_from_a_ramps_322s_gets_its_rail_moves_and_inland_out_gate(
    app: TestApp,
) {
    let request = ramp_only_shipment(&app).await;

    let shipment = shipment_of(&app, &request).await;
    let attributes = &shipment["data"]["attributes"];
    // No port of discharge is known; the destination rail terminal (R4*7) is the inland
    // destination.
    assert_eq!(
        attributes["port_of_discharge_locode"],
        Value::Null,
        "{attributes}"
    );
    assert_eq!(attributes["destination_locode"], "USCHI", "{attributes}");
    let container = &shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .expect("the container")["attributes"];
    let starts = |field: &str, prefix: &str| {
        assert!(
            container[field]
                .as_str()
                .is_some_and(|at| at.starts_with(prefix)),
            "{field}: {container}"
        );
    };
    // 07:30 PDT at Long Beach; 21:45:20 CDT at Saint Paul; 10:45:20 CDT at Chicago.
    starts("pod_rail_loaded_at", "2016-05-24T14:30");
    starts("ind_ata_at", "2016-05-27T02:45");
    starts("final_destination_full_out_at", "2016-06-10T15:45");
    // Never the ship's: no vessel milestone comes from a ramp.
    assert_eq!(container["pod_arrived_at"], Value::Null, "{container}");
    assert_eq!(container["pod_full_out_at"], Value::Null, "{container}");

    let (events, _) = container_events(&app, &request).await;
    let names = event_names(&events);
    for name in [
        "container.transport.rail_loaded",
        "container.transport.rail_arrived",
        "container.transport.full_out",
    ] {
        assert!(names.contains(&name.to_owned()), "{name}: {events}");
    }
}

async fn edi_a_ramps_last_free_day_is_kept_once_the_box_left_the_ramp(app: TestApp) {
    ramp_only_shipment(&app).await;
    app.clock
        .set(Utc.with_ymd_and_hms(2016, 7, 20, 12, 0, 0).unwrap());
    let cookie = crate::console::sign_in(&app, &app.key).await;

    let rows = crate::console::text(&crate::console::page(&app, "/board/rows", &cookie).await);

    // Out-gated at the ramp on 06-10, before its last free day of 06-25.
    assert!(rows.contains("2016-06-25 (out in time)"), "{rows}");
    assert!(!rows.contains("days ago"), "{rows}");
}

/// Every `data_source` of a list of events.
fn data_sources(list: &Value) -> Vec<String> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["attributes"]["data_source"]
                .as_str()
                .unwrap_or("")
                .to_owned()
        })
        .collect()
}

async fn edi_what_a_ramps_322s_give_says_it_comes_from_a_terminal(app: TestApp) {
    let request = ramp_only_shipment(&app).await;

    let (events, raw) = container_events(&app, &request).await;

    // Its moves, the availability it gives and the ramp's own notices
    // (`container.pickup_lfd_rail.changed`); the merged `pickup_lfd` is no one source's.
    let moves: Vec<&Value> = events["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["attributes"]["event"] != "container.pickup_lfd.changed")
        .collect();
    assert!(!moves.is_empty());
    for event in moves {
        assert_eq!(event["attributes"]["data_source"], "terminal", "{event}");
    }
    let raw = data_sources(&raw);
    assert!(!raw.is_empty());
    assert!(raw.iter().all(|s| s == "terminal"), "{raw:?}");
}

async fn edi_a_ramps_322s_kept_raw_name_their_sender_as_provider(app: TestApp) {
    let request = ramp_only_shipment(&app).await;

    let (_, raw) = container_events(&app, &request).await;

    let raw = raw["data"].as_array().unwrap();
    assert!(!raw.is_empty());
    for event in raw {
        // ISA06 of the ramp's interchanges, not the line's SCAC (SUDU).
        assert_eq!(
            event["attributes"]["data_provider_code"], "HAMSUD",
            "{event}"
        );
        assert_eq!(
            event["attributes"]["data_provider_name"],
            Value::Null,
            "{event}"
        );
    }
}

/// A terminal's 322 (its sender is the discharge terminal, not the line): the line's ETA at
/// Manzanillo moved (`E`) for the HAMSUD fixture's box.
const TERMINAL_322_ETA: &str = "ISA*00*          *00*          *ZZ*SSAMEXICO      *ZZ*GSCL           *221119*0751*U*00401*000720901*0*P*>~\
GS*SO*SSAMEXICO*GSCL*20221119*0751*720901*X*004010~\
ST*322*0001~\
Q5*E*20221122*230000*LT**MANZANILLO**MX~\
N7*MRSU*437163~\
V1*9352004*MAERSK STEPNICA**242S~\
N9*BM*SUDUN2SL008733AF~\
N9*EQ*MRSU4371639~\
N9*SCA*SUDU~\
R4*D*UN*MXZLO*SSA MEXICO HOLDINGS*MX~\
R4*5*UN*MXZLO*MANZANILLO*MX~\
SE*12*0001~\
GE*1*720901~\
IEA*1*000720901~";

/// The same news from the line's own 315 (HAMSUD, the HAMSUD fixture's sender).
const LINE_315_ETA: &str = "ISA*00*          *00*          *ZZ*HAMSUD         *ZZ*GSCL           *221119*0751*U*00401*000720902*0*P*>~\
GS*QO*HAMSUD*GSCL*20221119*0751*720902*X*004010~\
ST*315*0001~\
B4***E*20221119*0751**MRSU*437163*L*45G1*MXZLO*UN*9~\
N9*BM*SUDUN2SL008733AF~\
N9*EQ*MRSU4371639~\
N9*SCA*SUDU~\
Q2*9352004********242S***L*MAERSK STEPNICA~\
R4*L*UN*KRPUS*PUSAN NEWPORT CONTAINER *KR~\
DTM*140*20221103*125500*LT~\
R4*D*UN*MXZLO*SSA MEXICO HOLDINGS*MX~\
DTM*139*20221122*230000*LT~\
SE*12*0001~\
GE*1*720902~\
IEA*1*000720902~";

/// The `data_source` of each `estimated_event` the account's webhook was sent, after the
/// bill was tracked and `body` posted.
async fn estimated_event_sources(app: &TestApp, body: &str) -> Vec<String> {
    let webhook = app
        .post_json(
            "/v2/webhooks",
            &serde_json::json!({"data": {"type": "webhook", "attributes": {
                "url": "https://hooks.example.com/tidemark",
                "events": ["shipment.estimated.arrival"],
            }}}),
        )
        .await;
    assert_eq!(webhook.status.as_u16(), 201, "{:?}", webhook.json());
    app.clock
        .set(Utc.with_ymd_and_hms(2022, 11, 19, 12, 0, 0).unwrap());
    app.track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    let message = posted(app, "application/edi-x12", body.as_bytes()).await;
    assert_eq!(message["attributes"]["status"], "processed", "{message}");
    app.run_pending_jobs().await;
    let notified = app
        .get_ok("/v2/webhook_notifications?include=reference_object")
        .await;
    notified["included"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["type"] == "estimated_event")
        .map(|i| {
            i["attributes"]["data_source"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

async fn edi_an_arrival_estimate_from_a_terminals_322_says_it_comes_from_the_terminal(
    app: TestApp,
) {
    let sources = estimated_event_sources(&app, TERMINAL_322_ETA).await;

    assert_eq!(sources, ["terminal"]);
}

async fn edi_an_arrival_estimate_from_a_lines_315_says_it_comes_from_the_shipping_line(
    app: TestApp,
) {
    let sources = estimated_event_sources(&app, LINE_315_ETA).await;

    assert_eq!(sources, ["shipping_line"]);
}

async fn edi_what_a_lines_315_gives_says_it_comes_from_the_shipping_line(app: TestApp) {
    let request = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    posted(&app, "application/edi-x12", HAMSUD_DISCHARGED).await;
    app.run_pending_jobs().await;

    let (events, raw) = container_events(&app, &request).await;

    let (events, raw) = (data_sources(&events), data_sources(&raw));
    assert!(!events.is_empty() && !raw.is_empty());
    assert!(events.iter().all(|s| s == "shipping_line"), "{events:?}");
    assert!(raw.iter().all(|s| s == "shipping_line"), "{raw:?}");
}

async fn edi_a_ramps_rail_moves_name_no_vessel(app: TestApp) {
    let request = ramp_only_shipment(&app).await;

    let (_, raw) = container_events(&app, &request).await;

    let rail: Vec<&Value> = raw["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| {
            e["attributes"]["event"]
                .as_str()
                .is_some_and(|name| name.starts_with("rail_"))
        })
        .collect();
    assert!(!rail.is_empty(), "{raw}");
    for event in rail {
        // N1*RR*BNSF Railway is the container's rail carrier, not a vessel.
        assert_eq!(event["attributes"]["vessel_name"], Value::Null, "{event}");
        assert_eq!(event["attributes"]["voyage_number"], Value::Null, "{event}");
    }
}
