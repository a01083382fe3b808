//! EDI by watched folder and by email (issue 32): real files in a temporary folder, scanned
//! as the workers scan them, and real mail over SMTP on loopback. Each interchange becomes
//! an EDI message listed at `GET /v2/edi_messages` with its channel; the folder's files end
//! in `processed/` or `rejected/` (beside a reason), never overwritten. Completeness is
//! judged by the files' times against the test's clock, which the files are dated by.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use chrono::{DateTime, Utc};
use serde_json::Value;
use tidemark_server::config::InboundFolder;
use tidemark_server::use_cases::edi::folder::{self, ScanReport, Sightings};

use crate::email_submissions::{Client, message, receiver, submissions};
use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    a_complete_file_is_taken_moved_to_processed_and_listed_with_channel_folder,
    a_file_still_growing_between_scans_is_left_until_it_is_complete,
    a_file_that_is_not_edi_goes_to_rejected_beside_a_reason_file,
    the_same_interchange_dropped_twice_is_a_duplicate_and_both_files_end_in_processed,
    a_name_already_in_processed_gets_a_suffix_and_nothing_is_overwritten,
    a_folder_that_creates_shipments_starts_tracking_for_a_transaction_naming_nothing_tracked,
    a_sender_named_by_no_scac_is_tracked_with_the_line_its_container_belongs_to,
    an_unreadable_folder_is_reported_and_the_other_folders_are_still_watched,
    a_group_transaction_set_or_message_without_its_envelope_is_read_not_rejected,
    a_text_that_only_begins_like_a_segment_tag_is_still_not_edi,
);

/// Mail is filed under `acme`, as the email submissions' tests file it.
mod by_email {
    use super::*;

    on_both_backends!(
        settings = crate::email_submissions::EMAIL_SETTINGS;
        an_email_with_an_edi_attachment_becomes_an_edi_message_and_no_document,
        an_email_attachment_of_a_transaction_set_without_its_envelope_becomes_an_edi_message,
    );
}

const HAMSUD_DISCHARGED: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/x12_4010_315_hamsud_discharged.edi");
const EANCOM_BARE_MESSAGE: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/iftsta_d01b_eancom_bare_message_crlf.edi");
const CMACGM_DEPARTED: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/x12_4010_315_cmacgm_departed_loaded.edi");

/// A watched folder of `acme` in a fresh temporary directory.
struct Dropbox {
    _dir: tempfile::TempDir,
    folder: InboundFolder,
    seen: Sightings,
}

impl Dropbox {
    fn new(create_shipments: bool) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let folder = InboundFolder {
            dir: dir.path().join("inbound"),
            account: "acme".to_owned(),
            create_shipments,
        };
        std::fs::create_dir(&folder.dir).unwrap();
        Self {
            _dir: dir,
            folder,
            seen: Sightings::default(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.folder.dir.join(name)
    }

    /// Writes a file last written at `at`.
    fn drop_file(&self, name: &str, bytes: &[u8], at: DateTime<Utc>) {
        std::fs::write(self.path(name), bytes).unwrap();
        touch(&self.path(name), at);
    }

    /// Writes a file last written well before the app's clock says it is: complete.
    fn drop_complete(&self, app: &TestApp, name: &str, bytes: &[u8]) {
        self.drop_file(
            name,
            bytes,
            app.app.clock.now() - chrono::Duration::seconds(10),
        );
    }

    async fn scan(&mut self, app: &TestApp) -> ScanReport {
        folder::scan(&app.app.edi(), &self.folder, &mut self.seen)
            .await
            .unwrap()
    }

    /// The names in a subfolder, sorted.
    fn names_in(&self, subfolder: &str) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.path(subfolder))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

fn touch(path: &Path, at: DateTime<Utc>) {
    std::fs::File::options()
        .append(true)
        .open(path)
        .unwrap()
        .set_modified(SystemTime::from(at))
        .unwrap();
}

async fn edi_messages(app: &TestApp) -> Value {
    app.get_ok("/v2/edi_messages").await
}

async fn a_complete_file_is_taken_moved_to_processed_and_listed_with_channel_folder(app: TestApp) {
    let mut dropbox = Dropbox::new(false);
    dropbox.drop_complete(&app, "hamsud-315.edi", HAMSUD_DISCHARGED);

    let report = dropbox.scan(&app).await;

    assert_eq!(report.taken.len(), 1, "{report:?}");
    assert_eq!(report.taken[0].status.as_deref(), Some("processed"));
    assert!(!dropbox.path("hamsud-315.edi").exists());
    assert_eq!(dropbox.names_in("processed"), ["hamsud-315.edi"]);
    assert_eq!(
        std::fs::read(dropbox.path("processed/hamsud-315.edi")).unwrap(),
        HAMSUD_DISCHARGED
    );
    assert!(dropbox.names_in("rejected").is_empty());
    let list = edi_messages(&app).await;
    assert_eq!(list["meta"]["total"], 1, "{list}");
    let attributes = &list["data"][0]["attributes"];
    assert_eq!(attributes["channel"], "folder");
    assert_eq!(attributes["source_name"], "hamsud-315.edi");
    assert_eq!(attributes["status"], "processed");
    assert_eq!(attributes["sender"], "HAMSUD");
    assert_eq!(
        list["data"][0]["id"],
        report.taken[0].edi_message.unwrap().to_string()
    );
    let again = dropbox.scan(&app).await;
    assert!(again.taken.is_empty() && again.waiting == 0, "{again:?}");
}

async fn a_file_still_growing_between_scans_is_left_until_it_is_complete(app: TestApp) {
    let mut dropbox = Dropbox::new(false);
    let now = app.app.clock.now();
    let (head, tail) = HAMSUD_DISCHARGED.split_at(HAMSUD_DISCHARGED.len() / 2);
    // Hidden and partial names are never taken, however old.
    dropbox.drop_complete(&app, ".hidden.edi", HAMSUD_DISCHARGED);
    dropbox.drop_complete(&app, "upload.edi.part", HAMSUD_DISCHARGED);
    std::fs::create_dir(dropbox.path("subfolder.edi")).unwrap();
    dropbox.drop_file("growing.edi", head, now);

    let first = dropbox.scan(&app).await;
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(dropbox.path("growing.edi"))
        .unwrap();
    std::io::Write::write_all(&mut file, tail).unwrap();
    drop(file);
    app.clock.advance(chrono::Duration::seconds(1));
    touch(&dropbox.path("growing.edi"), app.app.clock.now());
    let second = dropbox.scan(&app).await;
    app.clock.advance(chrono::Duration::seconds(1));
    let third = dropbox.scan(&app).await;

    assert_eq!((first.taken.len(), first.waiting), (0, 1), "{first:?}");
    assert_eq!((second.taken.len(), second.waiting), (0, 1), "{second:?}");
    assert_eq!(third.taken.len(), 1, "{third:?}");
    assert_eq!(third.taken[0].status.as_deref(), Some("processed"));
    assert_eq!(dropbox.names_in("processed"), ["growing.edi"]);
    let list = edi_messages(&app).await;
    assert_eq!(
        list["meta"]["total"], 1,
        "only the whole file was read: {list}"
    );
    assert!(dropbox.path(".hidden.edi").exists());
    assert!(dropbox.path("upload.edi.part").exists());
    assert!(dropbox.path("subfolder.edi").is_dir());
}

async fn a_file_that_is_not_edi_goes_to_rejected_beside_a_reason_file(app: TestApp) {
    let mut dropbox = Dropbox::new(false);
    dropbox.drop_complete(&app, "invoice.pdf", b"%PDF-1.7\n\x1b[2J not an interchange");
    dropbox.drop_complete(&app, "broken.edi", b"ISA*00*truncated");

    let report = dropbox.scan(&app).await;

    assert_eq!(report.taken.len(), 2, "{report:?}");
    assert_eq!(
        dropbox.names_in("rejected"),
        [
            "broken.edi",
            "broken.edi.reason.txt",
            "invoice.pdf",
            "invoice.pdf.reason.txt"
        ]
    );
    assert!(dropbox.names_in("processed").is_empty());
    let reason = std::fs::read_to_string(dropbox.path("rejected/invoice.pdf.reason.txt")).unwrap();
    assert!(reason.starts_with("file: invoice.pdf\n"), "{reason}");
    assert!(reason.contains("not an EDI interchange"), "{reason}");
    // Read as an interchange, kept as an EDI message, and said why.
    let list = edi_messages(&app).await;
    assert_eq!(list["meta"]["total"], 1, "{list}");
    assert_eq!(list["data"][0]["attributes"]["status"], "rejected");
    assert_eq!(list["data"][0]["attributes"]["source_name"], "broken.edi");
    let reason = std::fs::read_to_string(dropbox.path("rejected/broken.edi.reason.txt")).unwrap();
    let id = list["data"][0]["id"].as_str().unwrap();
    assert!(
        reason.contains(&format!("rejected as EDI message {id}")),
        "{reason}"
    );
}

async fn the_same_interchange_dropped_twice_is_a_duplicate_and_both_files_end_in_processed(
    app: TestApp,
) {
    let mut dropbox = Dropbox::new(false);
    dropbox.drop_complete(&app, "first.edi", HAMSUD_DISCHARGED);
    let first = dropbox.scan(&app).await;
    dropbox.drop_complete(&app, "second.edi", HAMSUD_DISCHARGED);

    let second = dropbox.scan(&app).await;

    assert_eq!(first.taken[0].status.as_deref(), Some("processed"));
    assert_eq!(second.taken[0].status.as_deref(), Some("duplicate"));
    assert_eq!(dropbox.names_in("processed"), ["first.edi", "second.edi"]);
    assert!(dropbox.names_in("rejected").is_empty());
    let duplicate = app
        .get_ok("/v2/edi_messages?filter[status]=duplicate")
        .await;
    assert_eq!(
        duplicate["data"][0]["attributes"]["source_name"],
        "second.edi"
    );
    assert_eq!(
        duplicate["data"][0]["relationships"]["duplicate_of"]["data"]["id"],
        first.taken[0].edi_message.unwrap().to_string()
    );
}

async fn a_name_already_in_processed_gets_a_suffix_and_nothing_is_overwritten(app: TestApp) {
    let mut dropbox = Dropbox::new(false);
    dropbox.drop_complete(&app, "status.edi", HAMSUD_DISCHARGED);
    dropbox.scan(&app).await;
    dropbox.drop_complete(&app, "status.edi", CMACGM_DEPARTED);
    dropbox.scan(&app).await;
    dropbox.drop_complete(&app, "status.edi", b"not edi");
    dropbox.scan(&app).await;
    dropbox.drop_complete(&app, "status.edi", b"still not edi");

    let report = dropbox.scan(&app).await;

    assert_eq!(
        dropbox.names_in("processed"),
        ["status-1.edi", "status.edi"]
    );
    assert_eq!(
        std::fs::read(dropbox.path("processed/status.edi")).unwrap(),
        HAMSUD_DISCHARGED
    );
    assert_eq!(
        std::fs::read(dropbox.path("processed/status-1.edi")).unwrap(),
        CMACGM_DEPARTED
    );
    assert_eq!(
        dropbox.names_in("rejected"),
        [
            "status-1.edi",
            "status-1.edi.reason.txt",
            "status.edi",
            "status.edi.reason.txt"
        ]
    );
    assert_eq!(
        report.taken[0].moved_to,
        dropbox.path("rejected/status-1.edi")
    );
    assert_eq!(
        std::fs::read(dropbox.path("rejected/status.edi")).unwrap(),
        b"not edi"
    );
}

async fn a_folder_that_creates_shipments_starts_tracking_for_a_transaction_naming_nothing_tracked(
    app: TestApp,
) {
    let mut dropbox = Dropbox::new(true);
    // Names bill of lading SUDUN2SL008733AF and the line SUDU (N9*SCA); nothing is tracked.
    dropbox.drop_complete(&app, "hamsud.edi", HAMSUD_DISCHARGED);
    let before = app.get_ok("/v2/tracking_requests").await;

    let report = dropbox.scan(&app).await;
    app.run_pending_jobs().await;

    assert_eq!(before["data"], serde_json::json!([]), "{before}");
    assert_eq!(report.taken[0].status.as_deref(), Some("processed"));
    let requests = app.get_ok("/v2/tracking_requests").await;
    let data = requests["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{requests}");
    assert_eq!(data[0]["attributes"]["request_number"], "SUDUN2SL008733AF");
    assert_eq!(data[0]["attributes"]["scac"], "SUDU");
    assert_eq!(data[0]["attributes"]["request_type"], "bill_of_lading");
    let message = edi_messages(&app).await;
    assert_eq!(message["data"][0]["attributes"]["create_shipments"], true);
}

async fn a_sender_named_by_no_scac_is_tracked_with_the_line_its_container_belongs_to(app: TestApp) {
    let mut dropbox = Dropbox::new(true);
    // CMA CGM sends as `CMACGM` (ISA06, GS02) with no N9*SCA; its container's owner code
    // (CMAU, B4-07) is CMA CGM's.
    dropbox.drop_complete(&app, "cmacgm.edi", CMACGM_DEPARTED);

    dropbox.scan(&app).await;
    app.run_pending_jobs().await;

    let requests = app.get_ok("/v2/tracking_requests").await;
    let data = requests["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{requests}");
    assert_eq!(data[0]["attributes"]["request_number"], "CMDUTHD0479278");
    assert_eq!(data[0]["attributes"]["scac"], "CMDU");
    assert_eq!(data[0]["attributes"]["request_type"], "bill_of_lading");
}

async fn an_unreadable_folder_is_reported_and_the_other_folders_are_still_watched(app: TestApp) {
    let dropbox = Dropbox::new(false);
    let missing = InboundFolder {
        dir: dropbox.path("does-not-exist-yet"),
        account: "acme".to_owned(),
        create_shipments: false,
    };
    dropbox.drop_complete(&app, "hamsud.edi", HAMSUD_DISCHARGED);
    let error = folder::scan(&app.app.edi(), &missing, &mut Sightings::default())
        .await
        .unwrap_err();
    let shutdown = tokio_util::sync::CancellationToken::new();

    let watcher = tokio::spawn(folder::watch(
        app.app.core.clone(),
        app.app.config.edi.reader(),
        vec![missing.clone(), dropbox.folder.clone()],
        shutdown.clone(),
    ));
    wait_for(&dropbox.path("processed/hamsud.edi")).await;
    // The missing folder appears: the next scan takes its file.
    std::fs::create_dir(&missing.dir).unwrap();
    let late = missing.dir.join("cmacgm.edi");
    std::fs::write(&late, CMACGM_DEPARTED).unwrap();
    touch(&late, app.app.clock.now() - chrono::Duration::seconds(10));
    wait_for(&missing.dir.join("processed/cmacgm.edi")).await;
    shutdown.cancel();
    watcher.await.unwrap();

    assert!(error.to_string().contains("does-not-exist-yet"), "{error}");
    assert_eq!(edi_messages(&app).await["meta"]["total"], 2);
}

/// Waits (at most 20 seconds) for the watcher to have put a file at `path`.
async fn wait_for(path: &Path) {
    let path = path.to_owned();
    tokio::time::timeout(std::time::Duration::from_secs(20), async {
        while !tokio::fs::try_exists(&path).await.unwrap() {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("{} did not appear", path.display()));
}

async fn an_email_with_an_edi_attachment_becomes_an_edi_message_and_no_document(app: TestApp) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO carrier.example").await;

    let edi_only = client
        .mail(
            "notices@carrier.example",
            &message(
                "notices@carrier.example",
                "315 status",
                "Status attached.",
                &[("HAMSUD-315.EDI", "application/edi-x12", HAMSUD_DISCHARGED)],
            ),
        )
        .await;
    let mixed = client
        .mail(
            "notices@carrier.example",
            &message(
                "notices@carrier.example",
                "Arrival notice and status",
                "Both attached.",
                &[
                    (
                        "notice.pdf",
                        "application/pdf",
                        &crate::documents::pdf(&["ARRIVAL NOTICE"]),
                    ),
                    ("cmacgm.x12", "text/plain", CMACGM_DEPARTED),
                ],
            ),
        )
        .await;
    client.send("QUIT").await;
    shutdown.cancel();

    assert!(edi_only.starts_with("250"), "{edi_only}");
    assert!(mixed.starts_with("250"), "{mixed}");
    let list = submissions(&app).await;
    assert_eq!(list["meta"]["total"], 2, "{list}");
    let by_subject = |subject: &str| {
        list["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["attributes"]["subject"] == subject)
            .unwrap()["attributes"]
            .clone()
    };
    let edi_only = by_subject("315 status");
    assert_eq!(edi_only["status"], "processed", "{edi_only}");
    assert_eq!(edi_only["documents_count"], 0);
    assert!(
        edi_only["status_reason"]
            .as_str()
            .is_some_and(|r| r.contains("1 EDI interchange")),
        "{edi_only}"
    );
    let mixed = by_subject("Arrival notice and status");
    assert_eq!(mixed["status"], "processed", "{mixed}");
    assert_eq!(mixed["documents_count"], 1);
    let messages = edi_messages(&app).await;
    assert_eq!(messages["meta"]["total"], 2, "{messages}");
    let mut sources: Vec<(String, String)> = messages["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["attributes"]["channel"].as_str().unwrap().to_owned(),
                m["attributes"]["source_name"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    sources.sort();
    assert_eq!(
        sources,
        [
            ("email".to_owned(), "HAMSUD-315.EDI".to_owned()),
            ("email".to_owned(), "cmacgm.x12".to_owned()),
        ]
    );
    let documents = app.get_ok("/v2/documents").await;
    let names: Vec<&str> = documents["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["attributes"]["file_name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["notice.pdf"], "{documents}");
}

#[test]
fn edi_settings_errors_name_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let load = |toml: &str| {
        let file = dir.path().join("tidemark.toml");
        std::fs::write(&file, toml).unwrap();
        tidemark_server::Config::load(Some(&file))
    };

    let good = load(
        "[[edi.inbound]]\ndir = \"/srv/edi/acme\"\naccount = \"acme\"\ncreate_shipments = true",
    )
    .unwrap();
    let no_dir = load("[[edi.inbound]]\naccount = \"acme\"").unwrap_err();
    let unknown_in_entry =
        load("[[edi.inbound]]\ndir = \"/a\"\naccount = \"acme\"\nscan_seconds = 5").unwrap_err();
    let unknown_in_edi = load("[edi]\noutbound = \"/b\"").unwrap_err();

    assert_eq!(
        good.edi.inbound,
        [InboundFolder {
            dir: PathBuf::from("/srv/edi/acme"),
            account: "acme".to_owned(),
            create_shipments: true,
        }]
    );
    assert_eq!(no_dir.setting, "TIDEMARK_EDI__INBOUND__0__DIR");
    assert_eq!(
        unknown_in_entry.setting,
        "TIDEMARK_EDI__INBOUND__0__SCAN_SECONDS"
    );
    assert_eq!(unknown_in_edi.setting, "TIDEMARK_EDI__OUTBOUND");
}

/// The part of an interchange from the first segment tagged `from` to the end of the first
/// tagged `to` (`~`-terminated X12): a functional group (`GS` to `GE`) or a transaction set
/// (`ST` to `SE`) printed without the interchange around it.
fn without_envelope(interchange: &[u8], from: &str, to: &str) -> Vec<u8> {
    let text = std::str::from_utf8(interchange).unwrap();
    let segments: Vec<&str> = text.split_inclusive('~').collect();
    let tagged = |segment: &str, tag: &str| segment.trim_start().starts_with(&format!("{tag}*"));
    let first = segments.iter().position(|s| tagged(s, from)).unwrap();
    let last = first
        + segments[first..]
            .iter()
            .position(|s| tagged(s, to))
            .unwrap();
    segments[first..=last]
        .concat()
        .trim_start()
        .as_bytes()
        .to_vec()
}

async fn a_group_transaction_set_or_message_without_its_envelope_is_read_not_rejected(
    app: TestApp,
) {
    let mut dropbox = Dropbox::new(false);
    let group = without_envelope(HAMSUD_DISCHARGED, "GS", "GE");
    let transaction_set = without_envelope(CMACGM_DEPARTED, "ST", "SE");
    dropbox.drop_complete(&app, "group.edi", &group);
    dropbox.drop_complete(&app, "transaction-set.edi", &transaction_set);
    dropbox.drop_complete(&app, "message.edi", EANCOM_BARE_MESSAGE);

    let report = dropbox.scan(&app).await;

    assert_eq!(report.taken.len(), 3, "{report:?}");
    let list = edi_messages(&app).await;
    assert_eq!(list["meta"]["total"], 3, "{list}");
    let mut read: Vec<(String, String)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["attributes"]["source_name"].as_str().unwrap().to_owned(),
                m["attributes"]["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    read.sort();
    assert_eq!(
        read,
        [
            ("group.edi".to_owned(), "processed".to_owned()),
            ("message.edi".to_owned(), "processed".to_owned()),
            ("transaction-set.edi".to_owned(), "processed".to_owned()),
        ]
    );
    assert_eq!(
        dropbox.names_in("processed"),
        ["group.edi", "message.edi", "transaction-set.edi"]
    );
}

async fn a_text_that_only_begins_like_a_segment_tag_is_still_not_edi(app: TestApp) {
    let mut dropbox = Dropbox::new(false);
    dropbox.drop_complete(&app, "status.txt", b"STATUS: all boxes delivered\n");
    dropbox.drop_complete(&app, "gs.txt", b"GS*notes for the yard~\n");
    dropbox.drop_complete(&app, "unh.txt", b"UNH+ what is this'\n");

    let report = dropbox.scan(&app).await;

    assert_eq!(report.taken.len(), 3, "{report:?}");
    assert_eq!(edi_messages(&app).await["meta"]["total"], 0);
    for name in ["status.txt", "gs.txt", "unh.txt"] {
        let reason =
            std::fs::read_to_string(dropbox.path(&format!("rejected/{name}.reason.txt"))).unwrap();
        assert!(reason.contains("not an EDI interchange"), "{reason}");
    }
}

async fn an_email_attachment_of_a_transaction_set_without_its_envelope_becomes_an_edi_message(
    app: TestApp,
) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO carrier.example").await;
    let transaction_set = without_envelope(HAMSUD_DISCHARGED, "ST", "SE");

    let reply = client
        .mail(
            "notices@carrier.example",
            &message(
                "notices@carrier.example",
                "315 status",
                "Status attached.",
                &[("status.edi", "application/edi-x12", &transaction_set)],
            ),
        )
        .await;
    client.send("QUIT").await;
    shutdown.cancel();

    assert!(reply.starts_with("250"), "{reply}");
    let list = submissions(&app).await;
    assert_eq!(
        list["data"][0]["attributes"]["documents_count"], 0,
        "{list}"
    );
    let messages = edi_messages(&app).await;
    assert_eq!(messages["meta"]["total"], 1, "{messages}");
    assert_eq!(messages["data"][0]["attributes"]["channel"], "email");
    assert_eq!(
        messages["data"][0]["attributes"]["source_name"],
        "status.edi"
    );
}
