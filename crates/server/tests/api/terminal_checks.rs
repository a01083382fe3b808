//! Terminals asked about containers on their way to pick-up: the sandbox terminal's story on
//! a sandbox voyage, through the workers' own ticks — asked hourly from three days before
//! arrival, every 15 minutes once discharged, silent for a while after discharge, a customs
//! hold, then released and available with a last free day — and which configured terminal
//! is asked when the carrier names the POD terminal, on both stores.

use chrono::Duration;
use serde_json::Value;
use tidemark_domain::Clock as _;

use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_container_is_picked_up_at_its_pod_terminal_when_it_goes_no_further,
    a_container_moving_inland_by_rail_has_no_pickup_facility,
    a_discharged_sandbox_container_is_held_then_released_with_a_last_free_day,
    what_a_terminal_check_gives_says_it_comes_from_the_terminal,
    a_terminals_answer_kept_raw_names_the_terminal_as_its_provider,
    a_webhook_for_a_terminals_availability_says_it_comes_from_the_terminal,
    a_new_last_free_day_is_a_transport_event_carrying_it_and_a_webhook_notification,
    the_console_shows_and_filters_what_the_terminal_said,
    a_sandbox_container_is_asked_hourly_from_three_days_before_arrival_then_every_15_minutes,
);

/// The first container of the request's shipment, as the API shows it.
async fn first_container(app: &TestApp, request: &str) -> Value {
    let request = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await;
    let Some(shipment) = request["data"]["relationships"]["tracked_object"]["data"]["id"].as_str()
    else {
        return Value::Null;
    };
    let shipment = app
        .get_ok(&format!("/v2/shipments/{shipment}?include=containers"))
        .await;
    shipment["included"]
        .as_array()
        .and_then(|included| included.iter().find(|i| i["type"] == "container"))
        .cloned()
        .unwrap_or(Value::Null)
}

async fn a_container_is_picked_up_at_its_pod_terminal_when_it_goes_no_further(app: TestApp) {
    let request = app.track("bill_of_lading", "TEST-TERMINAL-3", "TEST").await;
    app.run_pending_jobs().await;
    let container = first_container(&app, &request).await;
    let id = container["id"].as_str().unwrap();

    let shown = app
        .get_ok(&format!("/v2/containers/{id}?include=pickup_facility"))
        .await;

    let relationships = &shown["data"]["relationships"];
    let pod_terminal = &relationships["pod_terminal"]["data"];
    assert!(pod_terminal["id"].is_string(), "{shown}");
    assert_eq!(
        &relationships["pickup_facility"]["data"], pod_terminal,
        "{shown}"
    );
    let included = shown["included"].as_array().unwrap();
    assert!(
        included
            .iter()
            .any(|i| i["type"] == "terminal" && i["id"] == pod_terminal["id"]),
        "{shown}"
    );
}

async fn a_container_moving_inland_by_rail_has_no_pickup_facility(app: TestApp) {
    use tidemark_domain::tracking_update::TrackingUpdate;
    let request = app.track("bill_of_lading", "TEST-TERMINAL-3", "TEST").await;
    app.run_pending_jobs().await;
    let id = first_container(&app, &request).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    // Loaded on a train at the port of discharge and gone (as its rail milestones say); the
    // shipment still names its POD terminal and goes no further than the port.
    let store = &app.app.store;
    let shipment = shipment_of(&app, &request).await;
    let shipment_id =
        tidemark_domain::ShipmentId(shipment["id"].as_str().unwrap().parse().unwrap());
    let mut containers = store.containers_of_shipment(shipment_id).await.unwrap();
    let account = containers[0].account_id;
    for container in &mut containers {
        container.inland.pod_rail_loaded_at = Some(app.clock.now() - Duration::hours(3));
        container.inland.pod_rail_departed_at = Some(app.clock.now() - Duration::hours(1));
    }
    let shipment = store.shipment(account, shipment_id).await.unwrap();
    let tracking = store
        .tracking_request(account, shipment.tracking_request_id)
        .await
        .unwrap();
    let update = TrackingUpdate {
        changed_containers: containers,
        ..TrackingUpdate::shipment_only(shipment)
    };
    store
        .record_tracking_result(&tracking, tracking.updated_at, Some(&update), &[])
        .await
        .unwrap();

    let shown = app
        .get_ok(&format!("/v2/containers/{id}?include=pickup_facility"))
        .await;

    let relationships = &shown["data"]["relationships"];
    assert!(
        relationships["pod_terminal"]["data"]["id"].is_string(),
        "{shown}"
    );
    assert!(
        shown["data"]["attributes"]["pod_rail_departed_at"].is_string(),
        "{shown}"
    );
    assert!(
        relationships["pickup_facility"]["data"].is_null(),
        "picked up inland, at a facility not known: {shown}"
    );
    assert!(
        !shown["included"]
            .as_array()
            .is_some_and(|included| included.iter().any(|i| i["type"] == "terminal")),
        "{shown}"
    );
}

/// Sails the request's voyage until its first container is discharged (the sandbox's clock
/// is the test's), and returns that container.
async fn sail_until_discharged(app: &TestApp, request: &str) -> Value {
    app.run_pending_jobs().await;
    let mut container = Value::Null;
    for _ in 0..(90 * 4) {
        app.clock.advance(Duration::hours(6));
        app.tick().await;
        container = first_container(app, request).await;
        if container["attributes"]["pod_discharged_at"].is_string() {
            break;
        }
    }
    assert!(
        container["attributes"]["pod_discharged_at"].is_string(),
        "never discharged: {container}"
    );
    container
}

/// The shipment the request tracks, as the API shows it.
async fn shipment_of(app: &TestApp, request: &str) -> Value {
    let request = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await;
    let Some(shipment) = request["data"]["relationships"]["tracked_object"]["data"]["id"].as_str()
    else {
        return Value::Null;
    };
    app.get_ok(&format!("/v2/shipments/{shipment}")).await["data"].clone()
}

async fn a_sandbox_container_is_asked_hourly_from_three_days_before_arrival_then_every_15_minutes(
    app: TestApp,
) {
    let request = app.track("bill_of_lading", "TEST-TERMINAL-3", "TEST").await;
    app.run_pending_jobs().await;
    let check = || async {
        tidemark_server::use_cases::terminals::check::check(&app.app.terminals_context(), "sandbox")
            .await
            .expect("terminal check")
    };
    // Sail until the vessel is due within three days.
    for _ in 0..(90 * 4) {
        let shipment = shipment_of(&app, &request).await;
        let eta = shipment["attributes"]["pod_eta_at"]
            .as_str()
            .and_then(|eta| chrono::DateTime::parse_from_rfc3339(eta).ok());
        if eta.is_some_and(|eta| eta <= app.clock.now() + Duration::days(3)) {
            break;
        }
        app.clock.advance(Duration::hours(6));
        app.tick().await;
    }
    check().await;
    let before = first_container(&app, &request).await["attributes"].clone();
    assert!(before["pod_discharged_at"].is_null(), "{before}");
    assert!(
        before["terminal_checked_at"].is_string(),
        "asked before discharge: {before}"
    );
    assert!(
        !before["availability_known"].as_bool().unwrap_or(true),
        "nothing known yet: {before}"
    );

    app.clock.advance(Duration::minutes(30));
    let within_the_hour = check().await;
    app.clock.advance(Duration::minutes(31));
    let an_hour_on = check().await;

    assert_eq!(within_the_hour.asked, 0, "{within_the_hour:?}");
    assert!(an_hour_on.asked >= 1, "{an_hour_on:?}");
    assert_eq!(
        an_hour_on.answered, 0,
        "the sandbox knows nothing before discharge"
    );

    sail_until_discharged(&app, &request).await;
    app.clock.advance(Duration::minutes(16));
    let discharged = check().await;
    app.clock.advance(Duration::minutes(10));
    let within_15_minutes = check().await;
    app.clock.advance(Duration::minutes(6));
    let a_quarter_on = check().await;

    assert!(discharged.asked >= 1, "{discharged:?}");
    assert_eq!(within_15_minutes.asked, 0, "{within_15_minutes:?}");
    assert!(a_quarter_on.asked >= 1, "{a_quarter_on:?}");
}

async fn a_discharged_sandbox_container_is_held_then_released_with_a_last_free_day(app: TestApp) {
    let request = app.track("bill_of_lading", "TEST-TERMINAL-1", "TEST").await;
    let container = sail_until_discharged(&app, &request).await;
    assert!(container["attributes"]["pod_full_out_at"].is_null());

    // The terminal is asked at once (the workers' job, without another carrier poll that
    // could reveal the box already gone): a customs hold, or already released.
    let check = || async {
        tidemark_server::use_cases::terminals::check::check(&app.app.terminals_context(), "sandbox")
            .await
            .expect("terminal check")
    };
    app.clock.advance(Duration::hours(9));
    let first = check().await;
    assert_eq!(first.answered, 1, "{first:?}");
    let held = first_container(&app, &request).await["attributes"].clone();
    assert!(held["terminal_checked_at"].is_string(), "{held}");
    assert!(held["availability_known"].as_bool().unwrap(), "{held}");
    assert!(held["location_at_pod_terminal"].is_string(), "{held}");
    let holds = held["holds_at_pod_terminal"].as_array().unwrap().clone();
    if !held["available_for_pickup"].as_bool().unwrap() {
        assert_eq!(
            holds.first().map(|h| h["name"].clone()),
            Some(Value::from("customs")),
            "{held}"
        );
    }

    // Two days on, unless its number is one the sandbox never releases, it is free to go,
    // with a last free day four days after discharge.
    app.clock.advance(Duration::hours(48));
    check().await;
    let released = first_container(&app, &request).await;
    let number = released["attributes"]["number"]
        .as_str()
        .unwrap()
        .to_owned();
    let never = tidemark_terminals::sandbox::never_released(
        &tidemark_domain::ContainerNumber::parse(&number).unwrap(),
    );
    let attributes = &released["attributes"];
    assert_eq!(attributes["available_for_pickup"], !never, "{attributes}");
    assert_eq!(
        attributes["holds_at_pod_terminal"]
            .as_array()
            .unwrap()
            .is_empty(),
        !never,
        "{attributes}"
    );
    assert!(attributes["pickup_lfd"].is_string(), "{attributes}");
    let id = released["id"].as_str().unwrap();
    let events = app
        .get_ok(&format!("/v2/containers/{id}/transport_events"))
        .await;
    let names: Vec<&str> = events["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["attributes"]["event"].as_str())
        .collect();
    let expected = if never {
        "container.transport.not_available"
    } else {
        "container.transport.available"
    };
    assert!(names.contains(&expected), "{names:?}");
    let answers_kept = || async {
        let raw = app.get_ok(&format!("/v2/containers/{id}/raw_events")).await;
        raw["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["attributes"]["original_event"]
                    .as_str()
                    .is_some_and(|text| text.starts_with("terminal sandbox: {"))
            })
            .count()
    };
    let kept = answers_kept().await;
    assert!(kept >= 1, "the terminal's answers are kept raw");
    app.clock.advance(Duration::minutes(16));
    check().await;
    assert_eq!(
        answers_kept().await,
        kept,
        "the same answer again is not kept twice"
    );
}

/// Each event's `data_source` by a name or original event picked by `pick`.
fn data_sources<'a>(list: &'a Value, pick: &str) -> Vec<(&'a str, &'a str)> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["attributes"][pick].as_str().unwrap_or_default(),
                e["attributes"]["data_source"].as_str().unwrap_or_default(),
            )
        })
        .collect()
}

async fn what_a_terminal_check_gives_says_it_comes_from_the_terminal(app: TestApp) {
    let request = app.track("bill_of_lading", "TEST-TERMINAL-1", "TEST").await;
    let container = sail_until_discharged(&app, &request).await;
    let id = container["id"].as_str().unwrap();
    app.clock.advance(Duration::hours(9));

    tidemark_server::use_cases::terminals::check::check(&app.app.terminals_context(), "sandbox")
        .await
        .expect("terminal check");

    let events = app
        .get_ok(&format!("/v2/containers/{id}/transport_events"))
        .await;
    let raw = app.get_ok(&format!("/v2/containers/{id}/raw_events")).await;
    for (event, source) in data_sources(&events, "event") {
        let expected = match event {
            // The day shown is the terminal's: the line named none.
            "container.pickup_lfd.changed"
            | "container.transport.available"
            | "container.transport.not_available"
            | "container.pickup_lfd_terminal.changed"
            | "container.pickup_appointment.changed" => "terminal",
            _ => "shipping_line",
        };
        assert_eq!(source, expected, "{event}: {events}");
    }
    assert!(
        data_sources(&events, "event")
            .iter()
            .any(|(_, source)| *source == "terminal"),
        "the terminal's availability is an event: {events}"
    );
    assert!(
        data_sources(&events, "event").contains(&("container.pickup_lfd.changed", "terminal")),
        "the last free day shown is the terminal's: {events}"
    );
    for (said, source) in data_sources(&raw, "original_event") {
        let expected = if said.starts_with("terminal sandbox: ") {
            "terminal"
        } else {
            "shipping_line"
        };
        assert_eq!(source, expected, "{said}: {raw}");
    }
    assert!(
        data_sources(&raw, "original_event")
            .iter()
            .any(|(_, source)| *source == "terminal"),
        "the terminal's answer is kept: {raw}"
    );
}

async fn a_terminals_answer_kept_raw_names_the_terminal_as_its_provider(app: TestApp) {
    let request = app.track("bill_of_lading", "TEST-TERMINAL-1", "TEST").await;
    let container = sail_until_discharged(&app, &request).await;
    let id = container["id"].as_str().unwrap();
    app.clock.advance(Duration::hours(9));

    tidemark_server::use_cases::terminals::check::check(&app.app.terminals_context(), "sandbox")
        .await
        .expect("terminal check");

    let raw = app.get_ok(&format!("/v2/containers/{id}/raw_events")).await;
    let providers: Vec<(&str, &str, &str)> = raw["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let attributes = &e["attributes"];
            (
                attributes["original_event"].as_str().unwrap_or_default(),
                attributes["data_provider_code"]
                    .as_str()
                    .unwrap_or_default(),
                attributes["data_provider_name"]
                    .as_str()
                    .unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        providers
            .iter()
            .any(|(said, _, _)| said.starts_with("terminal sandbox: ")),
        "the terminal's answer is kept: {raw}"
    );
    for (said, code, name) in providers {
        if said.starts_with("terminal sandbox: ") {
            assert_eq!(
                (code, name),
                ("sandbox", "Tidemark sandbox terminal"),
                "{said}"
            );
        } else {
            assert_eq!(code, "TEST", "the line's own events name the line: {said}");
        }
    }
}

async fn a_webhook_for_a_terminals_availability_says_it_comes_from_the_terminal(app: TestApp) {
    let webhook = app
        .post_json(
            "/v2/webhooks",
            &serde_json::json!({"data": {"type": "webhook", "attributes": {
                "url": "https://hooks.example.com/tidemark",
                "events": ["container.transport.available", "container.transport.not_available"],
            }}}),
        )
        .await;
    assert_eq!(webhook.status.as_u16(), 201, "{:?}", webhook.json());
    let request = app.track("bill_of_lading", "TEST-TERMINAL-1", "TEST").await;
    sail_until_discharged(&app, &request).await;
    app.clock.advance(Duration::hours(9));

    tidemark_server::use_cases::terminals::check::check(&app.app.terminals_context(), "sandbox")
        .await
        .expect("terminal check");

    let notified = app
        .get_ok("/v2/webhook_notifications?include=reference_object")
        .await;
    let events: Vec<&Value> = notified["included"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "transport_event")
        .collect();
    assert!(!events.is_empty(), "{notified}");
    for event in events {
        assert_eq!(event["attributes"]["data_source"], "terminal", "{event}");
    }
}

async fn a_new_last_free_day_is_a_transport_event_carrying_it_and_a_webhook_notification(
    app: TestApp,
) {
    let webhook = app
        .post_json(
            "/v2/webhooks",
            &serde_json::json!({"data": {"type": "webhook", "attributes": {
                "url": "https://hooks.example.com/tidemark",
                "events": ["container.pickup_lfd.changed", "container.pickup_lfd_terminal.changed"],
            }}}),
        )
        .await;
    assert_eq!(webhook.status.as_u16(), 201, "{:?}", webhook.json());
    let request = app.track("bill_of_lading", "TEST-TERMINAL-2", "TEST").await;
    sail_until_discharged(&app, &request).await;
    for hours in [9, 48] {
        app.clock.advance(Duration::hours(hours));
        tidemark_server::use_cases::terminals::check::check(
            &app.app.terminals_context(),
            "sandbox",
        )
        .await
        .expect("terminal check");
    }

    let container = first_container(&app, &request).await;
    let lfd = container["attributes"]["pickup_lfd"].clone();
    assert!(lfd.is_string(), "{container}");
    let id = container["id"].as_str().unwrap();
    let events = app
        .get_ok(&format!("/v2/containers/{id}/transport_events"))
        .await;
    let notices: Vec<(&str, &Value)> = events["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let name = e["attributes"]["event"].as_str()?;
            name.starts_with("container.pickup_lfd")
                .then_some((name, &e["attributes"]["value"]))
        })
        .collect();
    assert_eq!(
        notices,
        vec![
            ("container.pickup_lfd.changed", &lfd),
            ("container.pickup_lfd_terminal.changed", &lfd),
        ],
        "once each, carrying the day: {events}"
    );
    let status = container["attributes"]["current_status"].as_str().unwrap();
    assert!(
        ["available", "not_available"].contains(&status),
        "a notice is not a move: {status}"
    );
    let notified = app
        .get_ok("/v2/webhook_notifications?filter[event]=container.pickup_lfd.changed&include=reference_object")
        .await;
    assert_eq!(notified["meta"]["total"], 1, "{notified}");
    let reference = notified["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "transport_event")
        .expect("the notice itself is included");
    assert_eq!(reference["attributes"]["value"], lfd, "{reference}");
}

async fn the_console_shows_and_filters_what_the_terminal_said(app: TestApp) {
    let request = app.track("bill_of_lading", "TEST-TERMINAL-2", "TEST").await;
    app.run_pending_jobs().await;
    let mut container = Value::Null;
    for _ in 0..(90 * 4) {
        app.clock.advance(Duration::hours(6));
        app.tick().await;
        container = first_container(&app, &request).await;
        if container["attributes"]["pod_discharged_at"].is_string() {
            break;
        }
    }
    app.clock.advance(Duration::hours(9));
    tidemark_server::use_cases::terminals::check::check(&app.app.terminals_context(), "sandbox")
        .await
        .expect("terminal check");
    let number = container["attributes"]["number"]
        .as_str()
        .unwrap()
        .to_owned();
    let cookie = crate::console::sign_in(&app, &app.key).await;

    let board = crate::console::text(&crate::console::page(&app, "/", &cookie).await);
    let held = crate::console::text(&crate::console::page(&app, "/?pickup=held", &cookie).await);
    let shipment = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await["data"]["relationships"]["tracked_object"]["data"]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let page = crate::console::text(
        &crate::console::page(&app, &format!("/shipments/{shipment}"), &cookie).await,
    );

    assert!(board.contains("LFD (days left)"), "{board}");
    let attributes = first_container(&app, &request).await["attributes"].clone();
    if attributes["available_for_pickup"] == false {
        assert!(held.contains(&number), "{held}");
        assert!(page.contains("customs"), "{page}");
    } else {
        assert!(!held.contains(&number), "{held}");
    }
    assert!(page.contains("Pick-up"), "{page}");
    assert!(page.contains("Yard place"), "{page}");
}

/// A test app with Port of Virginia's terminal configured (its host never called here).
async fn with_virginia(backend: crate::helpers::Backend) -> Option<TestApp> {
    TestApp::with_config(
        backend,
        &[
            ("terminals.port_of_virginia.api_key", "k-0123"),
            ("terminals.port_of_virginia.requests_per_minute", "2"),
        ],
    )
    .await
}

async fn a_terminal_that_refuses_our_credentials_is_paused_and_shown_so(app: TestApp) {
    use tidemark_domain::carriers::{Acquire, WaitReason};
    use tidemark_server::use_cases::terminals::health;
    let terminal = "port_of_virginia";
    assert_eq!(
        health::acquire(&app.app.terminals_context(), terminal)
            .await
            .unwrap(),
        Acquire::Go
    );

    let refused = Err(tidemark_terminals::TerminalError::CredentialsRefused(
        "401 from the gateway".to_owned(),
    ));
    health::record(&app.app.terminals_context(), terminal, &refused).await;

    assert!(
        matches!(
            health::acquire(&app.app.terminals_context(), terminal)
                .await
                .unwrap(),
            Acquire::Wait {
                reason: WaitReason::CredentialsRefused,
                ..
            }
        ),
        "paused until a probe finds the credentials fixed"
    );
    let cookie = crate::console::sign_in(&app, &app.key).await;
    let page = crate::console::text(&crate::console::page(&app, "/carriers", &cookie).await);
    assert!(page.contains("paused: credentials refused since"), "{page}");
    assert!(page.contains("401 from the gateway"), "{page}");
    assert!(
        !page.contains("<td>terminal:"),
        "a terminal is not listed as a line: {page}"
    );
}

async fn a_terminals_budget_holds_in_every_minute(app: TestApp) {
    use tidemark_domain::carriers::Acquire;
    use tidemark_server::use_cases::terminals::health;
    let terminal = "port_of_virginia";
    for _ in 0..2 {
        assert_eq!(
            health::acquire(&app.app.terminals_context(), terminal)
                .await
                .unwrap(),
            Acquire::Go
        );
    }

    let third = health::acquire(&app.app.terminals_context(), terminal)
        .await
        .unwrap();
    app.clock.advance(Duration::seconds(65));
    let a_minute_on = health::acquire(&app.app.terminals_context(), terminal)
        .await
        .unwrap();

    assert!(matches!(third, Acquire::Wait { .. }), "{third:?}");
    assert_eq!(a_minute_on, Acquire::Go);
}

/// A test app with two Port of Virginia accounts: the profile's own table and a second,
/// named `pov_north`, each at two calls a minute (their hosts never called here).
async fn with_two_virginia_accounts(backend: crate::helpers::Backend) -> Option<TestApp> {
    TestApp::with_config(
        backend,
        &[
            ("terminals.port_of_virginia.api_key", "k-0123"),
            ("terminals.port_of_virginia.requests_per_minute", "2"),
            ("terminals.pov_north.profile", "port_of_virginia"),
            ("terminals.pov_north.api_key", "k-4567"),
            ("terminals.pov_north.requests_per_minute", "2"),
        ],
    )
    .await
}

async fn two_accounts_of_one_terminal_each_keep_their_own_budget_pause_and_row(app: TestApp) {
    use tidemark_domain::carriers::Acquire;
    use tidemark_server::use_cases::terminals::health;
    let context = app.app.terminals_context();
    for _ in 0..2 {
        assert_eq!(
            health::acquire(&context, "pov_north").await.unwrap(),
            Acquire::Go
        );
    }
    let refused = Err(tidemark_terminals::TerminalError::CredentialsRefused(
        "401 for the north account".to_owned(),
    ));
    health::record(&context, "pov_north", &refused).await;

    let north = health::acquire(&context, "pov_north").await.unwrap();
    let own = health::acquire(&context, "port_of_virginia").await.unwrap();

    assert!(matches!(north, Acquire::Wait { .. }), "{north:?}");
    assert_eq!(own, Acquire::Go, "the other account's calls are its own");
    let states = health::health(&context).await.unwrap();
    let calls = |id: &str| {
        states
            .iter()
            .find(|state| state.id == id)
            .map(|state| state.calls_last_minute)
    };
    assert_eq!(calls("pov_north"), Some(2));
    assert_eq!(calls("port_of_virginia"), Some(1));
    let cookie = crate::console::sign_in(&app, &app.key).await;
    let page = crate::console::text(&crate::console::page(&app, "/carriers", &cookie).await);
    assert!(page.contains("<td>pov_north</td>"), "{page}");
    assert!(page.contains("<td>port_of_virginia</td>"), "{page}");
    assert_eq!(
        page.matches("paused: credentials refused since").count(),
        1,
        "{page}"
    );
}

/// A test app with Port Houston and eModal configured (both reach Houston), each on its own
/// strict mock that records what it was asked: Port Houston issues a token and answers any
/// lookup with no container; eModal answers nothing.
async fn with_houston(
    backend: crate::helpers::Backend,
) -> Option<(TestApp, wiremock::MockServer, wiremock::MockServer)> {
    use wiremock::matchers::{any, method, path};
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let houston = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/token"))
        .respond_with(ResponseTemplate::new(200).set_body_json(
            serde_json::json!({"access_token": "nav-1", "token_type": "Bearer", "expires_in": 300}),
        ))
        .mount(&houston)
        .await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_raw("[]", "application/json"))
        .mount(&houston)
        .await;
    let emodal = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(404))
        .mount(&emodal)
        .await;
    let houston_api = format!("{}/api", houston.uri());
    let houston_token = format!("{}/token", houston.uri());
    let emodal_api = format!("{}/emodal", emodal.uri());
    let app = TestApp::with_config(
        backend,
        &[
            ("terminals.port_houston.client_id", "me"),
            ("terminals.port_houston.client_secret", "s3cret"),
            ("terminals.port_houston.base_url", &houston_api),
            ("terminals.port_houston.token_url", &houston_token),
            ("terminals.emodal.api_key", "k-0123"),
            ("terminals.emodal.base_url", &emodal_api),
        ],
    )
    .await?;
    Some((app, houston, emodal))
}

/// Everything a mock was asked, paths and bodies, as one text.
async fn asked_of(server: &wiremock::MockServer) -> String {
    server
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|request| format!("{} {}", request.url, String::from_utf8_lossy(&request.body)))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Rewrites what a shipment and its containers say (as a carrier's answer would), for the
/// terminal selection to read: bound for Houston, naming `pod_terminal`, each container
/// discharged at `discharged` (else due in a day).
async fn bound_for_houston(
    app: &TestApp,
    request: &str,
    pod_terminal: Option<uuid::Uuid>,
    discharged: Option<chrono::DateTime<chrono::Utc>>,
) -> Vec<String> {
    bound_for(app, request, "USHOU", pod_terminal, discharged).await
}

/// As [`bound_for_houston`], for the port `pod`.
async fn bound_for(
    app: &TestApp,
    request: &str,
    pod: &str,
    pod_terminal: Option<uuid::Uuid>,
    discharged: Option<chrono::DateTime<chrono::Utc>>,
) -> Vec<String> {
    use tidemark_domain::tracking_update::TrackingUpdate;
    let store = &app.app.store;
    let shipment = shipment_of(app, request).await;
    let id: uuid::Uuid = shipment["id"].as_str().unwrap().parse().unwrap();
    let id = tidemark_domain::ShipmentId(id);
    let mut containers = store.containers_of_shipment(id).await.unwrap();
    let account = containers[0].account_id;
    let mut shipment = store.shipment(account, id).await.unwrap();
    shipment.port_of_discharge_locode = Some(pod.to_owned());
    shipment.pod_terminal_id = pod_terminal;
    shipment.pod_eta_at = Some(app.clock.now() + Duration::days(1));
    shipment.pod_ata_at = None;
    for container in &mut containers {
        container.pod_arrived_at = None;
        container.pod_discharged_at = discharged;
        container.pod_full_out_at = None;
        container.empty_terminated_at = None;
    }
    let numbers = containers.iter().map(|c| c.number.clone()).collect();
    let tracking = store
        .tracking_request(account, shipment.tracking_request_id)
        .await
        .unwrap();
    let update = TrackingUpdate {
        changed_containers: containers,
        ..TrackingUpdate::shipment_only(shipment)
    };
    store
        .record_tracking_result(&tracking, tracking.updated_at, Some(&update), &[])
        .await
        .unwrap();
    numbers
}

async fn a_container_whose_pod_terminal_is_named_is_asked_only_of_the_terminal_reaching_it(
    app: TestApp,
    houston: wiremock::MockServer,
    emodal: wiremock::MockServer,
) {
    use tidemark_server::use_cases::terminals::check::check;
    let barbours_cut = app
        .app
        .reference
        .terminal_named("USHOU", Some("BCMT"), None)
        .map(|terminal| terminal.id);
    assert!(barbours_cut.is_some());
    let named = app.track("bill_of_lading", "TEST-HOUSTON-1", "TEST").await;
    let unnamed = app.track("bill_of_lading", "TEST-HOUSTON-2", "TEST").await;
    app.run_pending_jobs().await;
    let discharged = Some(app.clock.now() - Duration::hours(2));
    let at_barbours_cut = bound_for_houston(&app, &named, barbours_cut, discharged).await;
    let arriving = bound_for_houston(&app, &unnamed, None, None).await;

    // eModal asks one container a call: the discharged one would come first. Each terminal
    // keeps its own last ask, so Port Houston asking first holds nothing off for eModal.
    check(&app.app.terminals_context(), "port_houston")
        .await
        .unwrap();
    let by_emodal = check(&app.app.terminals_context(), "emodal").await.unwrap();

    let houston = asked_of(&houston).await;
    let emodal = asked_of(&emodal).await;
    for number in &at_barbours_cut {
        assert!(houston.contains(number.as_str()), "{number} in {houston}");
    }
    for number in &at_barbours_cut {
        assert!(
            !emodal.contains(number.as_str()),
            "{number} not in {emodal}"
        );
    }
    assert!(
        arriving
            .iter()
            .any(|number| emodal.contains(number.as_str())),
        "no terminal named: every terminal at the port asks: {by_emodal:?} {emodal}"
    );
}

/// Records a discharge at `pod` at `at` for each of the request's containers, so that a
/// terminal's answer, planned from the stored events, keeps them discharged.
async fn discharge_events(
    app: &TestApp,
    request: &str,
    pod: &str,
    at: Option<chrono::DateTime<chrono::Utc>>,
) {
    use tidemark_domain::tracking_update::TrackingUpdate;
    use tidemark_domain::{TransportEvent, TransportEventId, TransportEventName};
    let store = &app.app.store;
    let shipment = shipment_of(app, request).await;
    let id: uuid::Uuid = shipment["id"].as_str().unwrap().parse().unwrap();
    let containers = store
        .containers_of_shipment(tidemark_domain::ShipmentId(id))
        .await
        .unwrap();
    let account = containers[0].account_id;
    let shipment = store
        .shipment(account, tidemark_domain::ShipmentId(id))
        .await
        .unwrap();
    let events = containers
        .iter()
        .map(|container| TransportEvent {
            id: TransportEventId(app.app.ids.next_id()),
            account_id: account,
            shipment_id: shipment.id,
            container_id: container.id,
            event: TransportEventName::VesselDischarged,
            timestamp: at.unwrap(),
            voyage_number: None,
            location_locode: Some(pod.to_owned()),
            vessel_name: None,
            vessel_imo: None,
            terminal_id: None,
            source_id: format!("test|discharged|{}", container.number),
            value: None,
            created_at: app.clock.now(),
        })
        .collect();
    let tracking = store
        .tracking_request(account, shipment.tracking_request_id)
        .await
        .unwrap();
    let update = TrackingUpdate {
        new_events: events,
        ..TrackingUpdate::shipment_only(shipment)
    };
    store
        .record_tracking_result(&tracking, tracking.updated_at, Some(&update), &[])
        .await
        .unwrap();
}

async fn two_terminals_at_one_port_each_ask_about_a_container_within_the_interval(
    app: TestApp,
    houston: wiremock::MockServer,
    emodal: wiremock::MockServer,
) {
    use tidemark_server::use_cases::terminals::check::check;
    let request = app.track("bill_of_lading", "TEST-HOUSTON-3", "TEST").await;
    app.run_pending_jobs().await;
    let discharged = Some(app.clock.now() - Duration::hours(2));
    let numbers = bound_for_houston(&app, &request, None, discharged).await;
    discharge_events(&app, &request, "USHOU", discharged).await;

    // The same instant: well within the 15 minutes after Port Houston's ask.
    let by_houston = check(&app.app.terminals_context(), "port_houston")
        .await
        .unwrap();
    let by_emodal = check(&app.app.terminals_context(), "emodal").await.unwrap();

    let houston = asked_of(&houston).await;
    let emodal = asked_of(&emodal).await;
    assert!(
        by_houston.asked > 0 && by_emodal.asked > 0,
        "{by_houston:?} {by_emodal:?}"
    );
    assert!(
        numbers
            .iter()
            .any(|number| houston.contains(number.as_str()) && emodal.contains(number.as_str())),
        "one of {numbers:?} asked of both: {houston} / {emodal}"
    );
}

/// Port of Virginia configured against a mock that answers every lookup with nothing.
async fn with_virginia_mock(
    backend: crate::helpers::Backend,
) -> Option<(TestApp, wiremock::MockServer)> {
    use wiremock::matchers::any;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let virginia = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_raw("[]", "application/json"))
        .mount(&virginia)
        .await;
    let base_url = virginia.uri();
    let app = TestApp::with_config(
        backend,
        &[
            ("terminals.port_of_virginia.api_key", "k-0123"),
            ("terminals.port_of_virginia.base_url", &base_url),
        ],
    )
    .await?;
    Some((app, virginia))
}

async fn a_terminal_that_looks_up_by_bill_of_lading_is_asked_with_the_shipments_bill(
    app: TestApp,
    virginia: wiremock::MockServer,
) {
    let request = app.track("bill_of_lading", "TEST-NORFOLK-1", "TEST").await;
    app.run_pending_jobs().await;
    let discharged = Some(app.clock.now() - Duration::hours(2));
    let numbers = bound_for(&app, &request, "USORF", None, discharged).await;

    let outcome = tidemark_server::use_cases::terminals::check::check(
        &app.app.terminals_context(),
        "port_of_virginia",
    )
    .await
    .unwrap();

    assert_eq!(outcome.asked, numbers.len(), "{outcome:?}");
    let asked = asked_of(&virginia).await;
    for number in &numbers {
        let pair = format!(r#"{{"equipmentId":"{number}","referenceId":"TEST-NORFOLK-1"}}"#);
        assert!(asked.contains(&pair), "{pair} in {asked}");
    }
    let page = crate::console::sign_in(&app, &app.key).await;
    let carriers = crate::console::text(&crate::console::page(&app, "/carriers", &page).await);
    assert!(
        !carriers.contains("bill of lading of"),
        "a lookup without bills would have failed: {carriers}"
    );
}

/// Port of Virginia, one box a batch, against a mock that answers every lookup with nothing.
async fn with_virginia_one_box_a_batch(
    backend: crate::helpers::Backend,
) -> Option<(TestApp, wiremock::MockServer)> {
    with_virginia_one_box_a_batch_and(backend, &[]).await
}

/// As [`with_virginia_one_box_a_batch`], with these settings too.
async fn with_virginia_one_box_a_batch_and(
    backend: crate::helpers::Backend,
    settings: &[(&str, &str)],
) -> Option<(TestApp, wiremock::MockServer)> {
    use wiremock::matchers::any;
    use wiremock::{Mock, MockServer, ResponseTemplate};
    let virginia = MockServer::start().await;
    Mock::given(any())
        .respond_with(ResponseTemplate::new(200).set_body_raw("[]", "application/json"))
        .mount(&virginia)
        .await;
    let base_url = virginia.uri();
    let mut all = vec![
        ("terminals.port_of_virginia.api_key", "k-0123"),
        ("terminals.port_of_virginia.base_url", base_url.as_str()),
        ("terminals.port_of_virginia.batch_size", "1"),
    ];
    all.extend_from_slice(settings);
    let app = TestApp::with_config(backend, &all).await?;
    Some((app, virginia))
}

/// Port of Virginia, one box a batch and at most two calls a minute, against a mock that
/// answers every lookup with nothing.
async fn with_virginia_one_box_a_batch_two_a_minute(
    backend: crate::helpers::Backend,
) -> Option<(TestApp, wiremock::MockServer)> {
    with_virginia_one_box_a_batch_and(
        backend,
        &[("terminals.port_of_virginia.requests_per_minute", "2")],
    )
    .await
}

/// Port of Virginia, one box a batch and at most 48 calls a day (two an hour, paced),
/// against a mock that answers every lookup with nothing.
async fn with_virginia_one_box_a_batch_two_an_hour(
    backend: crate::helpers::Backend,
) -> Option<(TestApp, wiremock::MockServer)> {
    with_virginia_one_box_a_batch_and(
        backend,
        &[("terminals.port_of_virginia.requests_per_day", "48")],
    )
    .await
}

/// Three boxes (number, bill of lading) tracked by container number.
const YARD_OF_THREE: [(&str, &str); 3] = [
    ("MRSU4371639", "MAEU240512345"),
    ("CSQU3054383", "MAEU240512346"),
    ("APZU4812090", "MAEU240512347"),
];

/// Each box tracked by its container number and discharged at Norfolk two hours ago.
async fn discharged_at_norfolk(app: &TestApp, boxes: &[(&str, &str)]) {
    let discharged = Some(app.clock.now() - Duration::hours(2));
    for &(number, bill) in boxes {
        let request = tracked_by_container(app, number, Some(bill)).await;
        bound_for(app, &request, "USORF", None, discharged).await;
    }
}

async fn a_yard_of_several_batches_is_asked_in_one_run_within_the_minute_budget(
    app: TestApp,
    virginia: wiremock::MockServer,
) {
    use tidemark_server::use_cases::terminals::check::check;
    discharged_at_norfolk(&app, &YARD_OF_THREE).await;

    let run = check(&app.app.terminals_context(), "port_of_virginia")
        .await
        .unwrap();
    let calls = virginia.received_requests().await.unwrap_or_default().len();
    // Past the minute and its guard.
    app.clock.advance(Duration::minutes(2));
    let next_minute = check(&app.app.terminals_context(), "port_of_virginia")
        .await
        .unwrap();

    assert_eq!(
        run.asked, 2,
        "two batches of one, the minute's budget: {run:?}"
    );
    assert_eq!(calls, 2);
    assert_eq!(
        next_minute.asked, 1,
        "the third box, once the minute is past: {next_minute:?}"
    );
}

async fn a_day_budget_is_spread_over_the_day_not_spent_at_once(
    app: TestApp,
    virginia: wiremock::MockServer,
) {
    use tidemark_server::use_cases::terminals::check::check;
    discharged_at_norfolk(&app, &YARD_OF_THREE).await;
    discharged_at_norfolk(&app, &[("MSKU6011672", "MAEU240512348")]).await;

    // 48 calls a day: 2 an hour. Every box is due; the budget, not the boxes, sets the pace.
    let mut asked = Vec::new();
    for _ in 0..4 {
        asked.push(
            check(&app.app.terminals_context(), "port_of_virginia")
                .await
                .unwrap()
                .asked,
        );
        app.clock.advance(Duration::minutes(2));
    }
    // The hour's calls are counted in ten-minute buckets: well past it.
    app.clock.advance(Duration::hours(2));
    let later = check(&app.app.terminals_context(), "port_of_virginia")
        .await
        .unwrap()
        .asked;

    assert_eq!(asked, [1, 1, 0, 0], "two calls in the hour, then none");
    assert_eq!(later, 1);
    assert_eq!(
        virginia.received_requests().await.unwrap_or_default().len(),
        3
    );
}

async fn a_yard_that_fills_every_batch_still_asks_about_a_box_before_its_vessel_arrives(
    app: TestApp,
    virginia: wiremock::MockServer,
) {
    use tidemark_server::use_cases::terminals::check::check;
    // Two calls an hour of one box each, against three discharged boxes due every 15 minutes:
    // the discharged alone would take every call.
    discharged_at_norfolk(&app, &YARD_OF_THREE).await;
    let arriving = tracked_by_container(&app, "MSKU6011672", Some("MAEU240512348")).await;
    bound_for(&app, &arriving, "USORF", None, None).await;

    for _ in 0..36 {
        check(&app.app.terminals_context(), "port_of_virginia")
            .await
            .unwrap();
        app.clock.advance(Duration::minutes(30));
    }

    let asked: Vec<String> = virginia
        .received_requests()
        .await
        .unwrap_or_default()
        .iter()
        .map(|request| String::from_utf8_lossy(&request.body).into_owned())
        .collect();
    let about_arriving = asked
        .iter()
        .filter(|body| body.contains("MSKU6011672"))
        .count();
    assert!(
        about_arriving >= 1,
        "the arriving box was never asked in {} calls",
        asked.len()
    );
    assert!(
        about_arriving * 2 < asked.len(),
        "the discharged keep most calls: {about_arriving} of {}",
        asked.len()
    );
}

/// A shipment tracked by container number (MAEU), as its carrier's first answer makes it:
/// the container bound for Norfolk, the bill of lading named (`bill`) or not (the shipment
/// is then known by the container's number: its bill is not known). Returns the request.
async fn tracked_by_container(app: &TestApp, number: &str, bill: Option<&str>) -> String {
    use tidemark_domain::tracking_update::{self, CarrierReport, Known, ReportedContainer};
    use tidemark_domain::{TrackingRequestId, TrackingRequestStatus};
    let id = app.track("container", number, "MAEU").await;
    let store = &app.app.store;
    let account = store.account_by_name("acme").await.unwrap().unwrap().id;
    let request_id = TrackingRequestId(id.parse().unwrap());
    let request = store.tracking_request(account, request_id).await.unwrap();
    let report = CarrierReport {
        containers: vec![ReportedContainer {
            number: number.to_owned(),
            iso_equipment_code: None,
        }],
        port_of_discharge: Some("USORF".to_owned()),
        transport_document: bill.map(str::to_owned),
        ..CarrierReport::default()
    };
    let now = app.clock.now();
    let update = tracking_update::plan(
        &request,
        Known::default(),
        &report,
        app.app.ids.as_ref(),
        now,
    );
    let mut answered = request.clone();
    answered.status = TrackingRequestStatus::Created;
    answered.shipment_id = Some(update.shipment.id);
    answered.updated_at = now;
    store
        .record_tracking_result(&answered, request.updated_at, Some(&update), &[])
        .await
        .unwrap();
    id
}

async fn a_box_whose_bill_is_not_known_is_passed_over_and_waits_its_interval(
    app: TestApp,
    virginia: wiremock::MockServer,
) {
    use tidemark_server::use_cases::terminals::check::check;
    let without_bill = tracked_by_container(&app, "CSQU3054383", None).await;
    let with_bill = tracked_by_container(&app, "MRSU4371639", Some("MAEU240512345")).await;
    // The box without a bill is discharged, so it heads every batch it is selected for.
    let discharged = Some(app.clock.now() - Duration::hours(2));
    bound_for(&app, &without_bill, "USORF", None, discharged).await;
    bound_for(&app, &with_bill, "USORF", None, None).await;
    let shipment = shipment_of(&app, &without_bill).await;
    assert_eq!(
        shipment["attributes"]["bill_of_lading_number"], "CSQU3054383",
        "known by its container: {shipment}"
    );

    let waiting = first_container(&app, &without_bill).await["id"]
        .as_str()
        .unwrap()
        .parse()
        .map(tidemark_domain::ContainerId)
        .unwrap();
    let waiting_asked = || async {
        let asks = app
            .app
            .store
            .terminal_asks("port_of_virginia")
            .await
            .unwrap();
        asks.iter()
            .find(|(container, _)| *container == waiting)
            .map(|(_, at)| *at)
    };
    let start = app.clock.now();

    // One box a batch: the run's first batch passes over the box without a bill; it counts
    // as asked, so its next batch is the other box's, asked with the bill its carrier named.
    let first = check(&app.app.terminals_context(), "port_of_virginia")
        .await
        .unwrap();
    let after_first = asked_of(&virginia).await;
    // Within its 15 minutes it is not selected again; after them it is, and is passed over
    // again (the other box, not yet discharged, waits its hour).
    app.clock.advance(Duration::minutes(10));
    let within = check(&app.app.terminals_context(), "port_of_virginia")
        .await
        .unwrap();
    let asked_within = waiting_asked().await;
    app.clock.advance(Duration::minutes(6));
    check(&app.app.terminals_context(), "port_of_virginia")
        .await
        .unwrap();
    let asked_after = waiting_asked().await;

    assert_eq!(first.asked, 1, "{first:?}");
    assert!(
        !after_first.contains("CSQU3054383"),
        "no lookup without a bill: {after_first}"
    );
    let pair = r#"{"equipmentId":"MRSU4371639","referenceId":"MAEU240512345"}"#;
    assert!(after_first.contains(pair), "{pair} in {after_first}");
    assert_eq!(within.asked, 0, "{within:?}");
    assert_eq!(
        asked_within,
        Some(start),
        "recorded as asked when passed over"
    );
    assert_eq!(
        asked_after,
        Some(start + Duration::minutes(16)),
        "passed over again once its interval ran out"
    );
    assert!(
        !asked_of(&virginia).await.contains("CSQU3054383"),
        "never asked without its bill"
    );
}

mod configured_terminal {
    use crate::helpers::Backend;

    #[tokio::test]
    async fn a_terminal_that_looks_up_by_bill_of_lading_is_asked_with_the_shipments_bill_on_sqlite()
    {
        let (app, virginia) = super::with_virginia_mock(Backend::Sqlite).await.unwrap();
        super::a_terminal_that_looks_up_by_bill_of_lading_is_asked_with_the_shipments_bill(
            app, virginia,
        )
        .await;
    }

    #[tokio::test]
    async fn a_terminal_that_looks_up_by_bill_of_lading_is_asked_with_the_shipments_bill_on_postgres()
     {
        if let Some((app, virginia)) = super::with_virginia_mock(Backend::Postgres).await {
            super::a_terminal_that_looks_up_by_bill_of_lading_is_asked_with_the_shipments_bill(
                app, virginia,
            )
            .await;
        }
    }

    #[tokio::test]
    async fn a_yard_of_several_batches_is_asked_in_one_run_within_the_minute_budget_on_sqlite() {
        let (app, virginia) = super::with_virginia_one_box_a_batch_two_a_minute(Backend::Sqlite)
            .await
            .unwrap();
        super::a_yard_of_several_batches_is_asked_in_one_run_within_the_minute_budget(
            app, virginia,
        )
        .await;
    }

    #[tokio::test]
    async fn a_yard_of_several_batches_is_asked_in_one_run_within_the_minute_budget_on_postgres() {
        if let Some((app, virginia)) =
            super::with_virginia_one_box_a_batch_two_a_minute(Backend::Postgres).await
        {
            super::a_yard_of_several_batches_is_asked_in_one_run_within_the_minute_budget(
                app, virginia,
            )
            .await;
        }
    }

    #[tokio::test]
    async fn a_day_budget_is_spread_over_the_day_not_spent_at_once_on_sqlite() {
        let (app, virginia) = super::with_virginia_one_box_a_batch_two_an_hour(Backend::Sqlite)
            .await
            .unwrap();
        super::a_day_budget_is_spread_over_the_day_not_spent_at_once(app, virginia).await;
    }

    #[tokio::test]
    async fn a_day_budget_is_spread_over_the_day_not_spent_at_once_on_postgres() {
        if let Some((app, virginia)) =
            super::with_virginia_one_box_a_batch_two_an_hour(Backend::Postgres).await
        {
            super::a_day_budget_is_spread_over_the_day_not_spent_at_once(app, virginia).await;
        }
    }

    #[tokio::test]
    async fn a_yard_that_fills_every_batch_still_asks_about_a_box_before_its_vessel_arrives_on_sqlite()
     {
        let (app, virginia) = super::with_virginia_one_box_a_batch_two_an_hour(Backend::Sqlite)
            .await
            .unwrap();
        super::a_yard_that_fills_every_batch_still_asks_about_a_box_before_its_vessel_arrives(
            app, virginia,
        )
        .await;
    }

    #[tokio::test]
    async fn a_yard_that_fills_every_batch_still_asks_about_a_box_before_its_vessel_arrives_on_postgres()
     {
        if let Some((app, virginia)) =
            super::with_virginia_one_box_a_batch_two_an_hour(Backend::Postgres).await
        {
            super::a_yard_that_fills_every_batch_still_asks_about_a_box_before_its_vessel_arrives(
                app, virginia,
            )
            .await;
        }
    }

    #[tokio::test]
    async fn a_box_whose_bill_is_not_known_is_passed_over_and_waits_its_interval_on_sqlite() {
        let (app, virginia) = super::with_virginia_one_box_a_batch(Backend::Sqlite)
            .await
            .unwrap();
        super::a_box_whose_bill_is_not_known_is_passed_over_and_waits_its_interval(app, virginia)
            .await;
    }

    #[tokio::test]
    async fn a_box_whose_bill_is_not_known_is_passed_over_and_waits_its_interval_on_postgres() {
        if let Some((app, virginia)) = super::with_virginia_one_box_a_batch(Backend::Postgres).await
        {
            super::a_box_whose_bill_is_not_known_is_passed_over_and_waits_its_interval(
                app, virginia,
            )
            .await;
        }
    }

    #[tokio::test]
    async fn a_container_whose_pod_terminal_is_named_is_asked_only_of_the_terminal_reaching_it_on_sqlite()
     {
        let (app, houston, emodal) = super::with_houston(Backend::Sqlite).await.unwrap();
        super::a_container_whose_pod_terminal_is_named_is_asked_only_of_the_terminal_reaching_it(
            app, houston, emodal,
        )
        .await;
    }

    #[tokio::test]
    async fn a_container_whose_pod_terminal_is_named_is_asked_only_of_the_terminal_reaching_it_on_postgres()
     {
        if let Some((app, houston, emodal)) = super::with_houston(Backend::Postgres).await {
            super::a_container_whose_pod_terminal_is_named_is_asked_only_of_the_terminal_reaching_it(
                app, houston, emodal,
            )
            .await;
        }
    }

    #[tokio::test]
    async fn two_terminals_at_one_port_each_ask_about_a_container_within_the_interval_on_sqlite() {
        let (app, houston, emodal) = super::with_houston(Backend::Sqlite).await.unwrap();
        super::two_terminals_at_one_port_each_ask_about_a_container_within_the_interval(
            app, houston, emodal,
        )
        .await;
    }

    #[tokio::test]
    async fn two_terminals_at_one_port_each_ask_about_a_container_within_the_interval_on_postgres()
    {
        if let Some((app, houston, emodal)) = super::with_houston(Backend::Postgres).await {
            super::two_terminals_at_one_port_each_ask_about_a_container_within_the_interval(
                app, houston, emodal,
            )
            .await;
        }
    }

    #[tokio::test]
    async fn a_terminal_that_refuses_our_credentials_is_paused_and_shown_so_on_sqlite() {
        let app = super::with_virginia(Backend::Sqlite).await.unwrap();
        super::a_terminal_that_refuses_our_credentials_is_paused_and_shown_so(app).await;
    }

    #[tokio::test]
    async fn a_terminal_that_refuses_our_credentials_is_paused_and_shown_so_on_postgres() {
        if let Some(app) = super::with_virginia(Backend::Postgres).await {
            super::a_terminal_that_refuses_our_credentials_is_paused_and_shown_so(app).await;
        }
    }

    #[tokio::test]
    async fn two_accounts_of_one_terminal_each_keep_their_own_budget_pause_and_row_on_sqlite() {
        let app = super::with_two_virginia_accounts(Backend::Sqlite)
            .await
            .unwrap();
        super::two_accounts_of_one_terminal_each_keep_their_own_budget_pause_and_row(app).await;
    }

    #[tokio::test]
    async fn two_accounts_of_one_terminal_each_keep_their_own_budget_pause_and_row_on_postgres() {
        if let Some(app) = super::with_two_virginia_accounts(Backend::Postgres).await {
            super::two_accounts_of_one_terminal_each_keep_their_own_budget_pause_and_row(app).await;
        }
    }

    #[tokio::test]
    async fn a_terminals_budget_holds_in_every_minute_on_sqlite() {
        let app = super::with_virginia(Backend::Sqlite).await.unwrap();
        super::a_terminals_budget_holds_in_every_minute(app).await;
    }

    #[tokio::test]
    async fn a_terminals_budget_holds_in_every_minute_on_postgres() {
        if let Some(app) = super::with_virginia(Backend::Postgres).await {
            super::a_terminals_budget_holds_in_every_minute(app).await;
        }
    }
}
