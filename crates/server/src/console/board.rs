//! The shipments board (`/`) and its self-refreshing rows.

use axum::extract::Query;
use chrono::{DateTime, Utc};
use maud::{Markup, html};
use serde::Deserialize;
use tidemark_domain::{Container, ContainerStatus, Shipment, ShipmentId};
use tidemark_store::{PageRequest, ShipmentFilter};

use super::pages::{PageError, layout};
use super::session::Session;
use crate::app::{App, AppState};

/// Rows per page of the board.
pub const PAGE_SIZE: u32 = 25;

/// How often the board asks for fresh rows.
const REFRESH_SECONDS: u32 = 15;

/// The board's search and filters, mapped one to one onto the API's shipment filters
/// (`q`, `filter[scac]`, `filter[port_of_lading]`, `filter[port_of_discharge]`,
/// `filter[container_status]`, `filter[tracking_stopped]`).
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
    page: Option<u32>,
}

fn non_empty(value: &str) -> Option<String> {
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_owned())
}

impl BoardQuery {
    fn filter(&self) -> ShipmentFilter {
        ShipmentFilter {
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
            ..ShipmentFilter::default()
        }
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
}

/// Reads one page of the board (two queries whatever the page size).
pub async fn read(
    app: &App,
    session: &Session,
    query: &BoardQuery,
) -> Result<BoardPage, PageError> {
    let found = app
        .store
        .list_shipments(
            session.account_id,
            &query.filter(),
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
                tr { td colspan="8" { "No shipments match." } }
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
                }
            }
        }
    }
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

fn filters(query: &BoardQuery) -> Markup {
    html! {
        form.filters method="get" action="/" role="search" {
            div { label for="q" { "Search" } input #q type="search" name="q" value=(query.q) placeholder="BL, container or reference"; }
            div { label for="carrier" { "Carrier (SCAC)" } input #carrier name="carrier" value=(query.carrier) size="6"; }
            div { label for="pol" { "Port of lading" } input #pol name="pol" value=(query.pol) size="7" placeholder="UN/LOCODE"; }
            div { label for="pod" { "Port of discharge" } input #pod name="pod" value=(query.pod) size="7" placeholder="UN/LOCODE"; }
            div {
                label for="status" { "Container status" }
                select #status name="status" {
                    option value="" { "any" }
                    @for status in ["new", "on_ship", "available", "not_available", "picked_up", "empty_returned"] {
                        @if query.status == status { option value=(status) selected { (status.replace('_', " ")) } }
                        @else { option value=(status) { (status.replace('_', " ")) } }
                    }
                }
            }
            div {
                label for="tracking" { "Tracking" }
                select #tracking name="tracking" {
                    @for (value, name) in [("", "all"), ("tracking", "being tracked"), ("stopped", "stopped")] {
                        @if query.tracking == value { option value=(value) selected { (name) } }
                        @else { option value=(value) { (name) } }
                    }
                }
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
            (filters(query))
            table {
                thead {
                    tr {
                        th scope="col" { "Bill of lading" } th scope="col" { "Carrier" }
                        th scope="col" { "Containers" } th scope="col" { "POL → POD" }
                        th scope="col" { "Vessel" } th scope="col" { "ETA (port time)" }
                        th scope="col" { "Last event" } th scope="col" { "Status" }
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
