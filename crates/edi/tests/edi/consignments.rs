//! What an IFTSTA consignment (its `CNI` group, before its first `STS`) and the message
//! before its first `CNI` give the statuses under them: equipment and places, each only to
//! the statuses it can be about.

use tidemark_edi::{LocationRole, read};

/// An IFTSTA D.99B interchange around `body` (the segments between UNH and UNT).
fn iftsta(body: &str) -> Vec<u8> {
    let count = body.matches('\'').count() + 2;
    format!(
        "UNB+UNOA:2+SENDER:ZZZ+RECEIVER:ZZZ+240101:1200+1'UNH+1+IFTSTA:D:99B:UN'{body}UNT+{count}+1'UNZ+1+1'"
    )
    .into_bytes()
}

fn containers(body: &str) -> Vec<(String, Option<String>)> {
    read(&iftsta(body))
        .expect("readable")
        .statuses()
        .map(|status| (status.code.clone(), status.references.container.clone()))
        .collect()
}

#[test]
fn a_status_naming_its_container_by_rff_is_not_copied_onto_the_consignments_other_containers() {
    let statuses = containers(
        "BGM+23+REF1+9'CNI+1+BL1'EQD+CN+MSKU9070323'EQD+CN+TRHU4561222'STS+1+VD::22'\
         RFF+EQ:MSKU9070323'DTM+334:202401011000:203'LOC+175+KRPUS'",
    );
    assert_eq!(
        statuses,
        [("VD".to_owned(), Some("MSKU9070323".to_owned()))],
        "TRHU4561222 did not depart"
    );
}

#[test]
fn a_status_naming_a_container_the_consignment_does_not_list_keeps_its_own() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'EQD+CN+MSKU9070323'STS+1+VD::22'RFF+EQ:TRHU4561222'\
         DTM+334:202401011000:203'LOC+175+KRPUS'",
    ))
    .expect("readable");
    let statuses: Vec<_> = interchange.statuses().collect();
    assert_eq!(statuses.len(), 1);
    assert_eq!(
        statuses[0].references.container.as_deref(),
        Some("TRHU4561222")
    );
    let notes = &interchange.transactions[0].as_ref().expect("read").notes;
    assert!(
        !notes
            .iter()
            .any(|note| matches!(note, tidemark_edi::Note::ConflictingContainer { .. })),
        "{notes:?}"
    );
}

#[test]
fn a_status_with_its_own_eqd_is_about_that_container_not_the_consignments() {
    let statuses = containers(
        "BGM+23+REF1+9'CNI+1+BL1'EQD+CN+MSKU9070323'EQD+CN+TRHU4561222'STS+1+VD::22'\
         DTM+334:202401011000:203'LOC+175+KRPUS'EQD+CN+MRSU4371639'",
    );
    assert_eq!(
        statuses,
        [("VD".to_owned(), Some("MRSU4371639".to_owned()))]
    );
}

#[test]
fn an_eqd_before_the_first_cni_is_not_the_container_of_a_message_of_several_consignments() {
    let statuses = containers(
        "BGM+23+REF1+9'EQD+CN+MSKU9070323'\
         CNI+1+BL1'STS+1+VD::22'DTM+334:202401011000:203'LOC+175+KRPUS'\
         CNI+2+BL2'STS+1+VD::22'DTM+334:202401011000:203'LOC+175+KRPUS'",
    );
    assert_eq!(
        statuses,
        [("VD".to_owned(), None), ("VD".to_owned(), None)],
        "nothing says whose container MSKU9070323 is"
    );
}

#[test]
fn an_eqd_before_the_only_cni_is_the_container_of_its_statuses_naming_none() {
    let statuses = containers(
        "BGM+23+REF1+9'EQD+CN+MSKU9070323'\
         CNI+1+BL1'STS+1+VD::22'DTM+334:202401011000:203'LOC+175+KRPUS'",
    );
    assert_eq!(
        statuses,
        [("VD".to_owned(), Some("MSKU9070323".to_owned()))]
    );
}

#[test]
fn a_consignments_port_of_discharge_is_not_the_place_of_a_status_naming_none() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'LOC+11+NLRTM'STS+1+AE::22'DTM+334:202401011000:203'\
         EQD+CN+MSKU9070323'",
    ))
    .expect("readable");
    let statuses: Vec<_> = interchange.statuses().collect();
    assert_eq!(statuses.len(), 1);
    let status = statuses[0];
    assert_eq!(status.location.locode, None, "not loaded at Rotterdam");
    assert_eq!(status.location_role, None);
    // Rotterdam stays the route's port of discharge.
    let calls: Vec<_> = status
        .port_calls
        .iter()
        .map(|call| (call.role.clone(), call.location.locode.as_deref()))
        .collect();
    assert_eq!(calls, [(LocationRole::Discharge, Some("NLRTM"))]);
}

#[test]
fn a_consignments_activity_location_is_the_place_of_a_status_naming_none_beside_its_route() {
    let interchange = read(&iftsta(
        "BGM+23+REF1+9'CNI+1+BL1'LOC+9+CNSHA'LOC+175+KRPUS'LOC+11+NLRTM'STS+1+AE::22'\
         DTM+334:202401011000:203'EQD+CN+MSKU9070323'",
    ))
    .expect("readable");
    let status = interchange.statuses().next().expect("a status");
    assert_eq!(status.location.locode.as_deref(), Some("KRPUS"));
    let roles: Vec<_> = status
        .port_calls
        .iter()
        .map(|call| call.role.clone())
        .collect();
    assert_eq!(
        roles,
        [
            LocationRole::Activity,
            LocationRole::Loading,
            LocationRole::Discharge
        ]
    );
}

#[test]
fn many_consignment_containers_times_many_long_routed_statuses_stay_within_one_bound_per_message() {
    // 50 consignment EQDs, then 200 statuses of 50 LOCs each naming no container: every
    // status would become 50, each repeating its route — half a million port calls, while
    // each status alone stays under the bound.
    let mut body = String::from("BGM+23+REF1+9'CNI+1+BL1'");
    for index in 0..50 {
        body.push_str(&format!("EQD+CN+MSKU{index:07}'"));
    }
    for _ in 0..200 {
        body.push_str("STS+1+AE::22'DTM+334:202401011000:203'LOC+175+CNSHA'TDT+20+1W+1'");
        for _ in 0..49 {
            body.push_str("LOC+9+CNSHA'");
        }
    }
    let interchange = read(&iftsta(&body)).expect("readable");
    let statuses: Vec<_> = interchange.statuses().collect();
    // Each status is read once at least; past the bound no further copies are made.
    assert!(statuses.len() >= 200, "{}", statuses.len());
    assert!(statuses.len() < 200 * 50, "{}", statuses.len());
    let port_calls: usize = statuses.iter().map(|status| status.port_calls.len()).sum();
    assert!(port_calls <= 200 * 50 + 200_000, "{port_calls}");
    let notes = &interchange.transactions[0].as_ref().expect("read").notes;
    let not_made = notes.iter().find_map(|note| match note {
        tidemark_edi::Note::CopyBoundReached {
            limit,
            statuses_not_made,
        } => Some((*limit, *statuses_not_made)),
        _ => None,
    });
    let (limit, not_made) = not_made.expect("the bound is noted");
    assert_eq!(limit, 200_000);
    assert_eq!(
        statuses.len() + not_made,
        200 * 50,
        "every status is counted"
    );
}
