//! The shipments board (`/`) and its self-refreshing rows.

use axum::extract::Query;
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use serde::Deserialize;
use tidemark_domain::custom_fields::EntityType;
use tidemark_domain::{Container, ContainerStatus, Shipment, ShipmentId};
use tidemark_store::{DefinitionFilter, PageRequest, ShipmentFilter};

use super::pages::{PageError, layout};
use super::session::Session;
use crate::app::{App, AppState};
use crate::use_cases::custom_fields;
use crate::use_cases::tracking::shipments;

/// Rows per page of the board.
pub const PAGE_SIZE: u32 = 25;

/// How often the board asks for fresh rows.
const REFRESH_SECONDS: u32 = 15;

/// The board's search, filters and order, mapped one to one onto the API's shipment list
/// (`q`, `filter[scac]`, `filter[port_of_lading]`, `filter[port_of_discharge]`,
/// `filter[container_status]`, `filter[tracking_stopped]`, `filter[tag]`,
/// `filter[arriving_within_days]`, `filter[custom_fields][<api_slug>]`, `sort`).
#[derive(Clone, Debug, Default, Deserialize)]
pub struct BoardQuery {
    #[serde(default)]
    q: String,
    #[serde(default)]
    carrier: String,
    #[serde(default)]
    pol: String,
    #[serde(default)]
    pod: String,
    #[serde(default)]
    status: String,
    /// `tracking`, `stopped` or empty for both.
    #[serde(default)]
    tracking: String,
    #[serde(default)]
    tag: String,
    /// Days: shipments not arrived yet with an ETA within this many days.
    #[serde(default)]
    arriving: String,
    /// `available`, `held` or empty: shipments with a container available, or on hold.
    #[serde(default)]
    pickup: String,
    /// Days: shipments with a container not yet out whose last free day is this close.
    #[serde(default)]
    lfd: String,
    /// A shipment custom field's api_slug, and the value it must have.
    #[serde(default)]
    field: String,
    #[serde(default)]
    value: String,
    /// `pod_eta_at`, `-pod_eta_at` or empty (newest first).
    #[serde(default)]
    sort: String,
    #[serde(default)]
    page: Option<u32>,
}

fn non_empty(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

impl BoardQuery {
    /// The store filter at `now`, or what is wrong with the query.
    fn filter(&self, now: DateTime<Utc>) -> Result<ShipmentFilter, String> {
        let arriving_between = match non_empty(&self.arriving) {
            None => None,
            Some(days) => Some(shipments::arriving_within(
                now,
                days.parse().map_err(|_| {
                    format!("Arriving within must be a whole number of days; got {days:?}.")
                })?,
            )),
        };
        let sort = shipments::sort_named(&self.sort)
            .ok_or_else(|| format!("Unknown order {:?}.", self.sort))?;
        let pickup_lfd_by = match non_empty(&self.lfd) {
            None => None,
            Some(days) => {
                let days: u16 = days.parse().map_err(|_| {
                    format!("Last free day within must be a whole number of days; got {days:?}.")
                })?;
                Some(now.date_naive() + chrono::Duration::days(i64::from(days)))
            }
        };
        let pickup = tidemark_store::PickupFilter {
            available_for_pickup: (self.pickup == "available").then_some(true),
            on_hold: (self.pickup == "held").then_some(true),
            pickup_lfd_by,
        };
        Ok(ShipmentFilter {
            q: non_empty(&self.q),
            scac: non_empty(&self.carrier).map(|s| s.to_uppercase()),
            port_of_lading: non_empty(&self.pol).map(|s| s.to_uppercase()),
            port_of_discharge: non_empty(&self.pod).map(|s| s.to_uppercase()),
            container_status: ContainerStatus::parse(self.status.trim()),
            tracking_stopped: match self.tracking.as_str() {
                "tracking" => Some(false),
                "stopped" => Some(true),
                _ => None,
            },
            tag: non_empty(&self.tag),
            arriving_between,
            sort,
            pickup,
            ..ShipmentFilter::default()
        })
    }

    /// This query ordered by ETA: soonest first, or latest first when it already was.
    fn sorted_by_eta(&self) -> String {
        let sort = if self.sort == "pod_eta_at" {
            "-pod_eta_at"
        } else {
            "pod_eta_at"
        };
        Self {
            sort: sort.to_owned(),
            page: None,
            ..self.clone()
        }
        .on_page(1)
    }

    fn page(&self) -> u32 {
        self.page.unwrap_or(1).max(1)
    }

    /// The query string of these filters on another page.
    fn on_page(&self, page: u32) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (name, value) in [
            ("q", &self.q),
            ("carrier", &self.carrier),
            ("pol", &self.pol),
            ("pod", &self.pod),
            ("status", &self.status),
            ("tracking", &self.tracking),
            ("tag", &self.tag),
            ("arriving", &self.arriving),
            ("pickup", &self.pickup),
            ("lfd", &self.lfd),
            ("field", &self.field),
            ("value", &self.value),
            ("sort", &self.sort),
        ] {
            if !value.trim().is_empty() {
                query.append_pair(name, value.trim());
            }
        }
        query.append_pair("page", &page.to_string());
        query.finish()
    }
}

/// One page of the board: shipments with their containers.
pub struct BoardPage {
    pub rows: Vec<(Shipment, Vec<Container>)>,
    pub total: u64,
    /// What was wrong with the filters, if anything (then no rows).
    pub problem: Option<String>,
    /// The account's shipment custom fields, for the custom field filter.
    pub fields: Vec<(String, String)>,
}

/// Reads one page of the board (two queries whatever the page size).
pub async fn read(
    app: &App,
    session: &Session,
    query: &BoardQuery,
) -> Result<BoardPage, PageError> {
    let fields = app
        .store
        .list_custom_field_definitions(
            session.account_id,
            &DefinitionFilter {
                entity_type: Some(EntityType::Shipment),
                ..DefinitionFilter::default()
            },
            PageRequest {
                offset: 0,
                limit: custom_fields::MAX_ENTITY_FIELDS,
            },
        )
        .await?
        .items
        .into_iter()
        .map(|record| (record.definition.api_slug, record.definition.display_name))
        .collect();
    let refused = |problem: String, fields| BoardPage {
        rows: Vec::new(),
        total: 0,
        problem: Some(problem),
        fields,
    };
    let mut filter = match query.filter(app.clock.now()) {
        Ok(filter) => filter,
        Err(problem) => return Ok(refused(problem, fields)),
    };
    if let (Some(slug), Some(value)) = (non_empty(&query.field), non_empty(&query.value)) {
        let parameter = [(format!("filter[custom_fields][{slug}]"), value)];
        match custom_fields::filters_from(app, session.account_id, EntityType::Shipment, &parameter)
            .await?
        {
            Ok(found) => filter.custom_fields = found,
            Err(problem) => return Ok(refused(problem.detail, fields)),
        }
    }
    let found = app
        .store
        .list_shipments(
            session.account_id,
            &filter,
            PageRequest {
                offset: u64::from(query.page() - 1) * u64::from(PAGE_SIZE),
                limit: PAGE_SIZE,
            },
        )
        .await?;
    let ids: Vec<ShipmentId> = found.items.iter().map(|s| s.id).collect();
    let containers = app.store.containers_of_shipments(&ids).await?;
    let rows = found
        .items
        .into_iter()
        .map(|shipment| {
            let own = containers
                .iter()
                .filter(|c| c.shipment_id == shipment.id)
                .cloned()
                .collect();
            (shipment, own)
        })
        .collect();
    Ok(BoardPage {
        rows,
        total: found.total,
        problem: None,
        fields,
    })
}

/// A time in the port's own time zone (UTC when the port or its zone is unknown).
pub(super) fn port_time(app: &App, locode: Option<&str>, at: DateTime<Utc>) -> String {
    let zone = locode
        .and_then(|locode| app.reference.port_by_locode(locode))
        .and_then(|port| port.time_zone.parse::<chrono_tz::Tz>().ok());
    match zone {
        Some(zone) => at
            .with_timezone(&zone)
            .format("%Y-%m-%d %H:%M %Z")
            .to_string(),
        None => at.format("%Y-%m-%d %H:%M UTC").to_string(),
    }
}

/// How the ETA moved since the shipment was first seen: "+2 d 4 h later", "6 h earlier".
fn eta_moved(shipment: &Shipment) -> Option<String> {
    let (now, first) = (shipment.pod_eta_at?, shipment.pod_original_eta_at?);
    let hours = (now - first).num_hours();
    if hours == 0 {
        return None;
    }
    let (days, rest) = (hours.abs() / 24, hours.abs() % 24);
    let amount = match (days, rest) {
        (0, h) => format!("{h} h"),
        (d, 0) => format!("{d} d"),
        (d, h) => format!("{d} d {h} h"),
    };
    Some(format!(
        "{amount} {} than first seen",
        if hours > 0 { "later" } else { "earlier" }
    ))
}

/// The latest milestone the shipment's containers have passed, with when.
fn last_event(
    shipment: &Shipment,
    containers: &[Container],
) -> Option<(&'static str, DateTime<Utc>)> {
    let mut seen: Vec<(&'static str, DateTime<Utc>)> = Vec::new();
    if let Some(at) = shipment.pol_atd_at {
        seen.push(("Departed", at));
    }
    if let Some(at) = shipment.pod_ata_at {
        seen.push(("Arrived", at));
    }
    for container in containers {
        for (name, at) in [
            ("Discharged", container.pod_discharged_at),
            ("Picked up", container.pod_full_out_at),
            ("Delivered", container.final_destination_full_out_at),
            ("Empty returned", container.empty_terminated_at),
        ] {
            if let Some(at) = at {
                seen.push((name, at));
            }
        }
    }
    seen.into_iter().max_by_key(|(_, at)| *at)
}

pub(super) fn status_of(shipment: &Shipment, containers: &[Container]) -> String {
    if !shipment.is_tracking() {
        return "tracking stopped".to_owned();
    }
    let mut statuses: Vec<&str> = containers
        .iter()
        .map(|c| c.current_status.as_str())
        .collect();
    statuses.sort_unstable();
    statuses.dedup();
    if statuses.is_empty() {
        "awaiting first update".to_owned()
    } else {
        statuses.join(", ").replace('_', " ")
    }
}

fn rows_markup(app: &App, query: &BoardQuery, page: &BoardPage) -> Markup {
    let refresh = format!("/board/rows?{}", query.on_page(query.page()));
    html! {
        tbody #board-rows hx-get=(refresh) hx-trigger={"every " (REFRESH_SECONDS) "s"} hx-swap="outerHTML" {
            @if page.rows.is_empty() {
                tr { td colspan="11" { "No shipments match." } }
            }
            @for (shipment, containers) in &page.rows {
                tr {
                    td { a href={"/shipments/" (shipment.id.0)} { (shipment.bill_of_lading_number) } }
                    td { (shipment.shipping_line_scac) }
                    td { @for container in containers { (container.number) br; } }
                    td {
                        (shipment.port_of_lading_locode.as_deref().unwrap_or("?"))
                        " → "
                        (shipment.port_of_discharge_locode.as_deref().unwrap_or("?"))
                    }
                    td { (shipment.pod_vessel_name.as_deref().unwrap_or("")) }
                    td {
                        @if let Some(eta) = shipment.pod_ata_at {
                            "arrived " (port_time(app, shipment.port_of_discharge_locode.as_deref(), eta))
                        } @else if let Some(eta) = shipment.pod_eta_at {
                            (port_time(app, shipment.port_of_discharge_locode.as_deref(), eta))
                            @if let Some(moved) = eta_moved(shipment) { br; span.muted { (moved) } }
                        }
                    }
                    td {
                        @if let Some((name, at)) = last_event(shipment, containers) {
                            (name) br;
                            span.muted {
                                (port_time(app, if name == "Departed" { shipment.port_of_lading_locode.as_deref() } else { shipment.port_of_discharge_locode.as_deref() }, at))
                            }
                        }
                    }
                    td { (status_of(shipment, containers)) }
                    td { @for container in containers { (availability(container)) br; } }
                    td { @for container in containers { (holds(container)) br; } }
                    td { @for container in containers { (lfd_left(app, container)) br; } }
                }
            }
        }
    }
}

/// "yes", "no" or "unknown" (no terminal or feed has said yet).
pub(super) fn availability(container: &Container) -> &'static str {
    match (container.availability_known, container.available_for_pickup) {
        (_, true) => "yes",
        (true, false) => "no",
        (false, false) => "unknown",
    }
}

/// The holds in force, by name ("customs, freight"), or "none".
pub(super) fn holds(container: &Container) -> String {
    if container.pickup.holds.is_empty() {
        return "none".to_owned();
    }
    container
        .pickup
        .holds
        .iter()
        .map(|hold| match hold.status.as_str() {
            "pending" => format!("{} (pending)", hold.name),
            _ => hold.name.clone(),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The last free day with the days left ("2026-03-06 (3 days left)", "… (2 days ago)"), or,
/// once the box has left the terminal, whether it left in time ("… (out 2 days late)"): a
/// countdown for a box already picked up would only alarm.
pub(super) fn lfd_left(app: &App, container: &Container) -> String {
    let Some(day) = container.pickup.last_free_day else {
        return String::new();
    };
    // A rail ramp's last free day runs until the box leaves the ramp (the full out at the
    // inland destination); a terminal's or the line's, until it leaves the port.
    let out = match container.pickup.lfd_source {
        tidemark_domain::pickup::LfdSource::Rail => container
            .final_destination_full_out_at
            .or(container.pod_full_out_at),
        tidemark_domain::pickup::LfdSource::Terminal | tidemark_domain::pickup::LfdSource::Line => {
            container
                .pod_full_out_at
                .or(container.final_destination_full_out_at)
        }
    };
    lfd_label(
        day,
        app.clock.now().date_naive(),
        out.map(|at| at.date_naive()),
    )
}

fn lfd_label(
    day: chrono::NaiveDate,
    today: chrono::NaiveDate,
    out_on: Option<chrono::NaiveDate>,
) -> String {
    let when = match out_on.map(|out| (out - day).num_days()) {
        Some(late) if late <= 0 => "out in time".to_owned(),
        Some(1) => "out 1 day late".to_owned(),
        Some(late) => format!("out {late} days late"),
        None => match (day - today).num_days() {
            0 => "today".to_owned(),
            1 => "1 day left".to_owned(),
            n if n > 1 => format!("{n} days left"),
            -1 => "1 day ago".to_owned(),
            n => format!("{} days ago", -n),
        },
    };
    format!("{day} ({when})")
}

fn pager(query: &BoardQuery, total: u64) -> Markup {
    let page = query.page();
    let pages = total.div_ceil(u64::from(PAGE_SIZE)).max(1);
    html! {
        nav.pager aria-label="Pages" {
            @if page > 1 { a href={"/?" (query.on_page(page - 1))} { "Previous page" } }
            span { "Page " (page) " of " (pages) " · " (total) " shipments" }
            @if u64::from(page) < pages { a href={"/?" (query.on_page(page + 1))} { "Next page" } }
        }
    }
}

/// A `select` whose option `current` is selected.
fn choices(id: &str, current: &str, options: &[(&str, &str)]) -> Markup {
    html! {
        select #(id) name=(id) {
            @for (value, name) in options {
                @if current == *value { option value=(value) selected { (name) } }
                @else { option value=(value) { (name) } }
            }
        }
    }
}

fn filters(query: &BoardQuery, fields: &[(String, String)]) -> Markup {
    let statuses: Vec<(&str, String)> = [
        "new",
        "on_ship",
        "available",
        "not_available",
        "picked_up",
        "empty_returned",
    ]
    .into_iter()
    .map(|status| (status, status.replace('_', " ")))
    .collect();
    let mut status_options: Vec<(&str, &str)> = vec![("", "any")];
    status_options.extend(statuses.iter().map(|(value, name)| (*value, name.as_str())));
    let mut field_options: Vec<(&str, &str)> = vec![("", "any")];
    field_options.extend(
        fields
            .iter()
            .map(|(slug, name)| (slug.as_str(), name.as_str())),
    );
    html! {
        form.filters method="get" action="/" role="search" {
            div { label for="q" { "Search" } input #q type="search" name="q" value=(query.q) placeholder="BL, container or reference"; }
            div { label for="carrier" { "Carrier (SCAC)" } input #carrier name="carrier" value=(query.carrier) size="6"; }
            div { label for="pol" { "Port of lading" } input #pol name="pol" value=(query.pol) size="7" placeholder="UN/LOCODE"; }
            div { label for="pod" { "Port of discharge" } input #pod name="pod" value=(query.pod) size="7" placeholder="UN/LOCODE"; }
            div { label for="status" { "Container status" } (choices("status", &query.status, &status_options)) }
            div {
                label for="tracking" { "Tracking" }
                (choices("tracking", &query.tracking, &[("", "all"), ("tracking", "being tracked"), ("stopped", "stopped")]))
            }
            div { label for="arriving" { "Arriving within (days)" } input #arriving name="arriving" inputmode="numeric" value=(query.arriving) size="4"; }
            div {
                label for="pickup" { "Pick-up" }
                (choices("pickup", &query.pickup, &[("", "any"), ("available", "available"), ("held", "on hold")]))
            }
            div { label for="lfd" { "LFD within (days)" } input #lfd name="lfd" inputmode="numeric" value=(query.lfd) size="4"; }
            div { label for="tag" { "Tag" } input #tag name="tag" value=(query.tag) size="10"; }
            @if !fields.is_empty() {
                div { label for="field" { "Custom field" } (choices("field", &query.field, &field_options)) }
                div { label for="value" { "Field value" } input #value name="value" value=(query.value) size="12"; }
            }
            div {
                label for="sort" { "Order" }
                (choices("sort", &query.sort, &[("", "newest first"), ("pod_eta_at", "ETA, soonest first"), ("-pod_eta_at", "ETA, latest first")]))
            }
            button type="submit" { "Apply" }
        }
    }
}

/// Renders the whole board (the page the benchmark times).
pub fn render(app: &App, session: &Session, query: &BoardQuery, page: &BoardPage) -> Markup {
    layout(
        session,
        "Shipments",
        "/",
        html! {
            (filters(query, &page.fields))
            @if let Some(problem) = &page.problem { p.error role="alert" { (problem) } }
            table {
                thead {
                    tr {
                        th scope="col" { "Bill of lading" } th scope="col" { "Carrier" }
                        th scope="col" { "Containers" } th scope="col" { "POL → POD" }
                        th scope="col" { "Vessel" }
                        th scope="col" aria-sort=(match query.sort.as_str() { "pod_eta_at" => "ascending", "-pod_eta_at" => "descending", _ => "none" }) {
                            a href={"/?" (query.sorted_by_eta())} { "ETA (port time)" }
                        }
                        th scope="col" { "Last event" } th scope="col" { "Status" }
                        th scope="col" { "Available" } th scope="col" { "Holds" }
                        th scope="col" { "LFD (days left)" }
                    }
                }
                (rows_markup(app, query, page))
            }
            (pager(query, page.total))
        },
    )
}

pub async fn page(
    state: AppState,
    session: Session,
    Query(query): Query<BoardQuery>,
) -> Result<Markup, PageError> {
    let page = read(&state, &session, &query).await?;
    Ok(render(&state, &session, &query, &page))
}

/// The board's rows alone, which the page fetches every few seconds.
pub async fn rows(
    state: AppState,
    session: Session,
    Query(query): Query<BoardQuery>,
) -> Result<Markup, PageError> {
    let page = read(&state, &session, &query).await?;
    Ok(rows_markup(&state, &query, &page))
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;

    use super::lfd_label;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, d).expect("a March day")
    }

    #[test]
    fn a_box_still_at_the_terminal_counts_the_days_to_its_last_free_day() {
        assert_eq!(lfd_label(day(6), day(3), None), "2026-03-06 (3 days left)");
        assert_eq!(lfd_label(day(6), day(6), None), "2026-03-06 (today)");
        assert_eq!(lfd_label(day(6), day(8), None), "2026-03-06 (2 days ago)");
    }

    #[test]
    fn a_box_that_left_says_whether_it_left_in_time() {
        assert_eq!(
            lfd_label(day(6), day(20), Some(day(6))),
            "2026-03-06 (out in time)"
        );
        assert_eq!(
            lfd_label(day(6), day(20), Some(day(7))),
            "2026-03-06 (out 1 day late)"
        );
        assert_eq!(
            lfd_label(day(6), day(20), Some(day(9))),
            "2026-03-06 (out 3 days late)"
        );
    }
}
