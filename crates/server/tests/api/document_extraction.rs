//! Field extraction and document schemas: test documents of each extracted type, made as
//! PDFs here in several layouts, read through the upload and the background job; the
//! fields found are compared with what each document says.

use axum::http::StatusCode;
use serde_json::{Value, json};

use crate::documents::{pdf, uploaded};
use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    settings = &[("storage_url", "memory://")];
    a_document_schema_lists_the_fields_of_its_type,
    unknown_document_schemas_are_not_found,
    fields_are_read_from_bills_of_lading_arrival_notices_and_invoices,
);

async fn a_document_schema_lists_the_fields_of_its_type(app: TestApp) {
    let response = app
        .get("/v2/document_schemas/bill_of_lading@2026-03-01")
        .await;

    assert_eq!(response.status, StatusCode::OK);
    let body = response.json();
    let data = &body["data"];
    assert_eq!(data["id"], "bill_of_lading@2026-03-01");
    assert_eq!(data["type"], "document_schema");
    let attributes = &data["attributes"];
    assert_eq!(attributes["document_type"], "bill_of_lading");
    assert_eq!(attributes["label"], "Bill of Lading");
    assert_eq!(attributes["schema_version"], "2026-03-01");
    assert_eq!(attributes["full_version"], "bill_of_lading@2026-03-01");
    assert_eq!(attributes["current"], true);
    assert_eq!(attributes["draft"], false);
    assert_eq!(attributes["schema_format"], "json_schema");
    let properties = &attributes["schema_payload"]["properties"];
    for field in [
        "bill_of_lading_number",
        "container_numbers",
        "vessel_name",
        "voyage_number",
        "port_of_loading",
        "port_of_discharge",
        "shipper",
        "consignee",
        "issue_date",
    ] {
        assert!(properties.get(field).is_some(), "{field}");
    }
    assert_eq!(properties["issue_date"]["format"], "date");
    assert_eq!(
        body["links"]["self"],
        "http://tidemark.test/v2/document_schemas/bill_of_lading@2026-03-01"
    );
    let current = app.get("/v2/document_schemas/commercial_invoice").await;
    assert_eq!(
        current.json()["data"]["id"],
        "commercial_invoice@2026-03-01"
    );
    let notice = app
        .get("/v2/document_schemas/arrival_notice@2026-03-01")
        .await;
    assert!(
        notice.json()["data"]["attributes"]["schema_payload"]["properties"]
            .get("last_free_day")
            .is_some()
    );
}

async fn unknown_document_schemas_are_not_found(app: TestApp) {
    for id in [
        "unknown@2026-03-23",
        "commercial_invoice@2026-03-23",
        "packing_list",
        "%00",
    ] {
        let response = app.get(&format!("/v2/document_schemas/{id}")).await;
        assert_eq!(response.status, StatusCode::NOT_FOUND, "{id}");
    }
}

/// A test document: its lines, its type, and the fields it states.
struct Sample {
    name: &'static str,
    lines: &'static [&'static str],
    document_type: &'static str,
    fields: Value,
}

#[expect(clippy::too_many_lines, reason = "the test documents")]
fn samples() -> Vec<Sample> {
    vec![
        Sample {
            name: "bl-labels-inline.pdf",
            lines: &[
                "BILL OF LADING",
                "B/L No: MAEU240311001",
                "Booking No: 240311001",
                "Shipper: Ningbo Bright Textiles Co., Ltd",
                "Consignee: Harbor Imports Inc, Los Angeles",
                "Notify Party: Same as consignee",
                "Vessel: MAERSK ESSEX   Voyage: 410E",
                "Place of Receipt: Ningbo   Port of Loading: Ningbo",
                "Port of Discharge: Los Angeles   Place of Delivery: Chicago",
                "Container: MSCU1234566   Seal: 998877",
                "Shipped on Board: 2026-02-14",
                "Place and Date of Issue: Ningbo, 15 Feb 2026",
            ],
            document_type: "bill_of_lading",
            fields: json!({
                "bill_of_lading_number": "MAEU240311001",
                "booking_number": "240311001",
                "shipper": "Ningbo Bright Textiles Co., Ltd",
                "consignee": "Harbor Imports Inc, Los Angeles",
                "notify_party": "Same as consignee",
                "vessel_name": "MAERSK ESSEX",
                "voyage_number": "410E",
                "place_of_receipt": "Ningbo",
                "port_of_loading": "Ningbo",
                "port_of_discharge": "Los Angeles",
                "place_of_delivery": "Chicago",
                "container_numbers": ["MSCU1234566"],
                "shipped_on_board_date": "2026-02-14",
                "issue_date": "2026-02-15",
            }),
        },
        Sample {
            name: "bl-form.pdf",
            lines: &[
                "SEA WAYBILL   NON-NEGOTIABLE",
                "SHIPPER",
                "Shenzhen Lumen Electronics Ltd",
                "CONSIGNEE",
                "Northwind Traders LLC, Newark NJ",
                "WAYBILL NO.",
                "HLCU SZX260201234",
                "OCEAN VESSEL / VOYAGE",
                "HAMBURG EXPRESS / 062W",
                "PORT OF LOADING",
                "Yantian, China",
                "PORT OF DISCHARGE",
                "New York, NY",
                "CONTAINER NO. / SEAL NO.",
                "TGHU 983411-0 / SL44120",
                "DATE OF ISSUE",
                "03/02/2026",
            ],
            document_type: "bill_of_lading",
            fields: json!({
                "shipper": "Shenzhen Lumen Electronics Ltd",
                "consignee": "Northwind Traders LLC, Newark NJ",
                "vessel_name": "HAMBURG EXPRESS",
                "voyage_number": "062W",
                "port_of_loading": "Yantian, China",
                "port_of_discharge": "New York, NY",
                "container_numbers": ["TGHU9834110"],
                "issue_date": "2026-03-02",
            }),
        },
        Sample {
            name: "house-bl.pdf",
            lines: &[
                "HOUSE BILL OF LADING",
                "HBL No.: SHA2602887",
                "Shipper: Suzhou Fine Ceramics",
                "Consignee: Casa Verde Imports SRL",
                "Pre-carriage by: truck   Place of Receipt: Suzhou",
                "Vessel / Voyage: CMA CGM TAGE / 0FL3RW1MA",
                "Port of Loading: Shanghai   Port of Discharge: Genoa",
                "Containers: CMAU 451207-8, TGHU9834110",
                "Date of Issue: March 3, 2026",
            ],
            document_type: "bill_of_lading",
            fields: json!({
                "bill_of_lading_number": "SHA2602887",
                "shipper": "Suzhou Fine Ceramics",
                "consignee": "Casa Verde Imports SRL",
                "place_of_receipt": "Suzhou",
                "vessel_name": "CMA CGM TAGE",
                "voyage_number": "0FL3RW1MA",
                "port_of_loading": "Shanghai",
                "port_of_discharge": "Genoa",
                "container_numbers": ["CMAU4512078", "TGHU9834110"],
                "issue_date": "2026-03-03",
            }),
        },
        Sample {
            name: "arrival-notice.pdf",
            lines: &[
                "ARRIVAL NOTICE",
                "B/L Number: MAEU240311001",
                "Consignee: Harbor Imports Inc",
                "Vessel: MAERSK ESSEX   Voyage: 410E",
                "Port of Loading: Ningbo   Port of Discharge: Los Angeles",
                "ETA: 03/18/2026",
                "Last Free Day: 03/23/2026",
                "Pickup Location: Pier 400, APM Terminals",
                "Container: MSCU1234566",
                "Total Amount Due: USD 1,250.00",
            ],
            document_type: "arrival_notice",
            fields: json!({
                "bill_of_lading_number": "MAEU240311001",
                "consignee": "Harbor Imports Inc",
                "vessel_name": "MAERSK ESSEX",
                "voyage_number": "410E",
                "port_of_loading": "Ningbo",
                "port_of_discharge": "Los Angeles",
                "eta": "2026-03-18",
                "last_free_day": "2026-03-23",
                "terminal": "Pier 400, APM Terminals",
                "container_numbers": ["MSCU1234566"],
                "amount_due": 1250.0,
            }),
        },
        Sample {
            name: "notice-of-arrival.pdf",
            lines: &[
                "NOTICE OF ARRIVAL",
                "OBL: HLCUSZX260201234",
                "Notify: Northwind Traders LLC",
                "Vessel / Voy: HAMBURG EXPRESS / 062W",
                "POL: Yantian   POD: New York",
                "Place of Delivery: Newark, NJ",
                "Estimated Arrival: 21 Mar 2026",
                "LFD: 26 Mar 2026",
                "Container TGHU 983411-0",
            ],
            document_type: "arrival_notice",
            fields: json!({
                "bill_of_lading_number": "HLCUSZX260201234",
                "notify_party": "Northwind Traders LLC",
                "vessel_name": "HAMBURG EXPRESS",
                "voyage_number": "062W",
                "port_of_loading": "Yantian",
                "port_of_discharge": "New York",
                "place_of_delivery": "Newark, NJ",
                "eta": "2026-03-21",
                "last_free_day": "2026-03-26",
                "container_numbers": ["TGHU9834110"],
            }),
        },
        Sample {
            name: "an-columns.pdf",
            lines: &[
                "CARGO ARRIVAL NOTICE",
                "Bill of Lading No.   Vessel",
                "COSU6301234560   COSCO SHIPPING ARIES",
                "Voyage: 045E",
                "Port of Discharge: Long Beach, CA",
                "ETA: 2026-04-02",
                "Terminal: Long Beach Container Terminal",
                "Containers: CMAU4512078",
            ],
            document_type: "arrival_notice",
            fields: json!({
                "bill_of_lading_number": "COSU6301234560",
                "vessel_name": "COSCO SHIPPING ARIES",
                "voyage_number": "045E",
                "port_of_discharge": "Long Beach, CA",
                "eta": "2026-04-02",
                "terminal": "Long Beach Container Terminal",
                "container_numbers": ["CMAU4512078"],
            }),
        },
        Sample {
            name: "invoice.pdf",
            lines: &[
                "COMMERCIAL INVOICE",
                "Invoice No: INV-10027   Invoice Date: 2026-02-10",
                "Seller: Ningbo Bright Textiles Co., Ltd",
                "Buyer: Harbor Imports Inc",
                "Incoterms: FOB Ningbo",
                "Currency: USD",
                "Vessel: MAERSK ESSEX   Voyage: 410E",
                "Port of Loading: Ningbo   Port of Discharge: Los Angeles",
                "B/L No: MAEU240311001",
                "Total Amount: 48,210.50",
            ],
            document_type: "commercial_invoice",
            fields: json!({
                "invoice_number": "INV-10027",
                "invoice_date": "2026-02-10",
                "seller": "Ningbo Bright Textiles Co., Ltd",
                "buyer": "Harbor Imports Inc",
                "incoterms": "FOB Ningbo",
                "currency": "USD",
                "vessel_name": "MAERSK ESSEX",
                "voyage_number": "410E",
                "port_of_loading": "Ningbo",
                "port_of_discharge": "Los Angeles",
                "bill_of_lading_number": "MAEU240311001",
                "total_amount": 48210.5,
            }),
        },
        Sample {
            name: "proforma.pdf",
            lines: &[
                "PROFORMA INVOICE",
                "Invoice #: PI-2026-0042",
                "Date: 14.03.2026",
                "Sold To:",
                "Casa Verde Imports SRL, Milano",
                "Shipper / Exporter:",
                "Suzhou Fine Ceramics",
                "Terms of Delivery: CIF Genoa",
                "Grand Total: EUR 12.345,67",
            ],
            document_type: "commercial_invoice",
            fields: json!({
                "invoice_number": "PI-2026-0042",
                "invoice_date": "2026-03-14",
                "buyer": "Casa Verde Imports SRL, Milano",
                "seller": "Suzhou Fine Ceramics",
                "incoterms": "CIF Genoa",
                "total_amount": 12345.67,
            }),
        },
        Sample {
            name: "ci-us.pdf",
            lines: &[
                "COMMERCIAL INVOICE",
                "Exporter: Shenzhen Lumen Electronics Ltd",
                "Consignee: Northwind Traders LLC",
                "Invoice Number: SLE-88213",
                "Invoice Date: 02/27/2026",
                "Port of Loading: Yantian   Port of Discharge: New York",
                "Container No: TGHU 983411-0",
                "Currency: USD   Total Value: 9,980.00",
            ],
            document_type: "commercial_invoice",
            fields: json!({
                "seller": "Shenzhen Lumen Electronics Ltd",
                "buyer": "Northwind Traders LLC",
                "invoice_number": "SLE-88213",
                "invoice_date": "2026-02-27",
                "port_of_loading": "Yantian",
                "port_of_discharge": "New York",
                "container_numbers": ["TGHU9834110"],
                "currency": "USD",
                "total_amount": 9980.0,
            }),
        },
        // Written after the extractor, in layouts it was not tuned on (kept as they
        // scored: the README reports the figure with these).
        Sample {
            name: "waybill-one-line.pdf",
            lines: &[
                "NON-NEGOTIABLE SEA WAYBILL",
                "Shipper ACME GARDEN TOOLS CO Consignee BLUE RIVER HARDWARE INC",
                "SWB NO. ONEYTAOF12345600",
                "Vessel and voyage: ONE HARMONY 078E",
                "From Qingdao to Seattle",
                "Container and seal: MSCU 123456-6 seal 4471",
                "Laden on board 2026-01-30",
            ],
            document_type: "bill_of_lading",
            fields: json!({
                "bill_of_lading_number": "ONEYTAOF12345600",
                "shipper": "ACME GARDEN TOOLS CO",
                "consignee": "BLUE RIVER HARDWARE INC",
                "vessel_name": "ONE HARMONY",
                "voyage_number": "078E",
                "port_of_loading": "Qingdao",
                "port_of_discharge": "Seattle",
                "container_numbers": ["MSCU1234566"],
                "shipped_on_board_date": "2026-01-30",
            }),
        },
        Sample {
            name: "arrival-email-style.pdf",
            lines: &[
                "Arrival Notice - please arrange customs clearance",
                "Dear customer, the vessel MSC ANNA, voyage FA612A, is expected at",
                "Savannah on Feb 27, 2026. Bill of lading MEDUQ1234567.",
                "Container TGHU9834110 will be available at Garden City Terminal.",
                "Last free day: 2026-03-04",
            ],
            document_type: "arrival_notice",
            fields: json!({
                "bill_of_lading_number": "MEDUQ1234567",
                "vessel_name": "MSC ANNA",
                "voyage_number": "FA612A",
                "port_of_discharge": "Savannah",
                "eta": "2026-02-27",
                "container_numbers": ["TGHU9834110"],
                "terminal": "Garden City Terminal",
                "last_free_day": "2026-03-04",
            }),
        },
        Sample {
            name: "invoice-table.pdf",
            lines: &[
                "INVOICE",
                "Invoice No.   Date   Terms",
                "77-1042   05/03/2026   FOB Shanghai",
                "Bill To: Pacific Rim Foods Ltd",
                "Ship From: Golden Harvest Trading",
                "Description   Qty   Unit Price   Amount",
                "Dried mushrooms   400   12.50   5,000.00",
                "TOTAL USD 5,000.00",
            ],
            document_type: "commercial_invoice",
            fields: json!({
                "invoice_number": "77-1042",
                "invoice_date": "2026-05-03",
                "incoterms": "FOB Shanghai",
                "buyer": "Pacific Rim Foods Ltd",
                "seller": "Golden Harvest Trading",
                "currency": "USD",
                "total_amount": 5000.0,
            }),
        },
    ]
}

async fn fields_are_read_from_bills_of_lading_arrival_notices_and_invoices(app: TestApp) {
    let samples = samples();
    let mut ids = Vec::new();
    for sample in &samples {
        ids.push(uploaded(&app, sample.name, &pdf(sample.lines), &[]).await);
    }
    app.run_pending_jobs().await;

    let (mut stated, mut right, mut types_right) = (0, 0, 0);
    let mut misses = Vec::new();
    for (sample, id) in samples.iter().zip(&ids) {
        let body = app
            .get(&format!(
                "/v2/documents/{id}?include=last_document_representation"
            ))
            .await
            .json();
        if body["data"]["attributes"]["document_type"] == sample.document_type {
            types_right += 1;
        }
        let payload = &body["included"][0]["attributes"]["payload"];
        let found = &payload["fields"];
        for (name, expected) in sample.fields.as_object().unwrap() {
            stated += 1;
            if &found[name] == expected {
                right += 1;
            } else {
                misses.push(format!(
                    "{}: {name} = {} (stated {expected})",
                    sample.name, found[name]
                ));
            }
        }
    }
    let accuracy = f64::from(right) / f64::from(stated);
    eprintln!(
        "field extraction: {right} of {stated} stated fields right ({:.1}%), types {types_right} of {}; misses: {misses:#?}",
        accuracy * 100.0,
        samples.len()
    );
    assert!(
        types_right + 1 >= samples.len(),
        "types {types_right} of {}",
        samples.len()
    );
    assert!(accuracy >= 0.75, "{misses:#?}");
}
