//! EDI by SFTP mailbox (issue 32): a real SFTP server on loopback (`sftp_server`) serving a
//! temporary directory, polled as the workers poll it. Each complete remote file becomes an
//! EDI message with channel `sftp`; the file is moved to `processed/` or `rejected/`
//! (beside a reason) only once its interchange is stored; a wrong password or host key
//! takes nothing and stops nothing.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tidemark_server::config::{AfterTaken, HostKey, SftpMailbox};
use tidemark_server::use_cases::edi::sftp::{self, PollError, PollReport, Sightings};

use crate::helpers::TestApp;
use crate::on_both_backends;
use crate::sftp_server::{PASSWORD, SftpServer, USER, random_host_key};

on_both_backends!(
    a_315_on_the_server_becomes_an_edi_message_updates_its_container_and_goes_to_processed,
    a_broken_file_and_a_file_that_is_not_edi_go_to_rejected_beside_their_reasons,
    a_wrong_password_or_host_key_takes_nothing_and_the_poller_keeps_running,
    a_file_taken_again_after_a_crash_before_its_move_is_a_duplicate_and_changes_nothing,
    with_after_delete_stored_files_are_removed_and_unread_ones_still_rejected,
    a_file_growing_between_polls_is_left_until_two_polls_see_it_unchanged,
    a_private_key_logs_in_without_a_password,
);

const HAMSUD_DISCHARGED: &[u8] =
    include_bytes!("../../../edi/tests/fixtures/x12_4010_315_hamsud_discharged.edi");

fn mailbox(server: &SftpServer, host_key: HostKey, password: &str) -> SftpMailbox {
    SftpMailbox {
        host: "127.0.0.1".to_owned(),
        port: server.port,
        user: USER.to_owned(),
        password: Some(password.to_owned()),
        private_key: None,
        private_key_file: None,
        host_key,
        remote_dir: "/inbound".to_owned(),
        account: "acme".to_owned(),
        interval: Duration::from_secs(1),
        create_shipments: false,
        after: AfterTaken::Move,
    }
}

fn good_mailbox(server: &SftpServer) -> SftpMailbox {
    mailbox(
        server,
        HostKey::parse(&server.public_key_line()).unwrap(),
        PASSWORD,
    )
}

/// Two polls: the first sees the files, the second takes those unchanged since.
async fn poll_twice(app: &TestApp, mailbox: &SftpMailbox, seen: &mut Sightings) -> PollReport {
    let first = sftp::poll(&app.app.edi(), mailbox, seen).await.unwrap();
    assert!(
        first.taken.is_empty(),
        "nothing is taken when first seen: {first:?}"
    );
    sftp::poll(&app.app.edi(), mailbox, seen).await.unwrap()
}

async fn edi_messages(app: &TestApp) -> Value {
    app.get_ok("/v2/edi_messages").await
}

/// The events of the one container of `request`'s shipment.
async fn container_events(app: &TestApp, request: &str) -> Vec<String> {
    let request = app
        .get_ok(&format!("/v2/tracking_requests/{request}"))
        .await;
    let Some(shipment) = request["data"]["relationships"]["tracked_object"]["data"]["id"].as_str()
    else {
        return Vec::new();
    };
    let shipment = app
        .get_ok(&format!("/v2/shipments/{shipment}?include=containers"))
        .await;
    let id = shipment["included"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "container")
        .expect("the container the status names")["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let events = app
        .get_ok(&format!("/v2/containers/{id}/transport_events"))
        .await;
    events["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["attributes"]["event"].as_str().unwrap().to_owned())
        .collect()
}

async fn a_315_on_the_server_becomes_an_edi_message_updates_its_container_and_goes_to_processed(
    app: TestApp,
) {
    let server = SftpServer::start().await;
    let request = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    app.run_pending_jobs().await;
    std::fs::write(server.path("inbound/hamsud-315.edi"), HAMSUD_DISCHARGED).unwrap();
    // Never taken: hidden, still uploading, a folder.
    std::fs::write(server.path("inbound/.hidden.edi"), HAMSUD_DISCHARGED).unwrap();
    std::fs::write(server.path("inbound/upload.edi.part"), HAMSUD_DISCHARGED).unwrap();
    std::fs::create_dir(server.path("inbound/folder.edi")).unwrap();
    let mailbox = good_mailbox(&server);
    let mut seen = Sightings::default();

    let first = sftp::poll(&app.app.edi(), &mailbox, &mut seen)
        .await
        .unwrap();
    let second = sftp::poll(&app.app.edi(), &mailbox, &mut seen)
        .await
        .unwrap();
    app.run_pending_jobs().await;

    assert_eq!((first.taken.len(), first.waiting), (0, 1), "{first:?}");
    assert_eq!(second.taken.len(), 1, "{second:?}");
    assert_eq!(second.taken[0].status.as_deref(), Some("processed"));
    assert_eq!(
        second.taken[0].moved_to.as_deref(),
        Some("/inbound/processed/hamsud-315.edi")
    );
    assert_eq!(
        server.names_in("inbound"),
        [
            ".hidden.edi",
            "folder.edi",
            "processed",
            "rejected",
            "upload.edi.part"
        ]
    );
    assert_eq!(server.names_in("inbound/processed"), ["hamsud-315.edi"]);
    assert_eq!(
        std::fs::read(server.path("inbound/processed/hamsud-315.edi")).unwrap(),
        HAMSUD_DISCHARGED
    );
    let list = edi_messages(&app).await;
    assert_eq!(list["meta"]["total"], 1, "{list}");
    let attributes = &list["data"][0]["attributes"];
    assert_eq!(attributes["channel"], "sftp");
    assert_eq!(attributes["source_name"], "hamsud-315.edi");
    assert_eq!(attributes["status"], "processed");
    assert_eq!(attributes["sender"], "HAMSUD");
    assert_eq!(
        list["data"][0]["id"],
        second.taken[0].edi_message.unwrap().to_string()
    );
    let events = container_events(&app, &request).await;
    assert!(
        events.contains(&"container.transport.vessel_discharged".to_owned()),
        "{events:?}"
    );
    let again = sftp::poll(&app.app.edi(), &mailbox, &mut seen)
        .await
        .unwrap();
    assert!(again.taken.is_empty() && again.waiting == 0, "{again:?}");
}

async fn a_broken_file_and_a_file_that_is_not_edi_go_to_rejected_beside_their_reasons(
    app: TestApp,
) {
    let server = SftpServer::start().await;
    std::fs::write(server.path("inbound/broken.edi"), b"ISA*00*truncated").unwrap();
    std::fs::write(
        server.path("inbound/invoice.pdf"),
        b"%PDF-1.7 not an interchange",
    )
    .unwrap();
    let mailbox = good_mailbox(&server);

    let report = poll_twice(&app, &mailbox, &mut Sightings::default()).await;

    assert_eq!(report.taken.len(), 2, "{report:?}");
    assert_eq!(
        server.names_in("inbound/rejected"),
        [
            "broken.edi",
            "broken.edi.reason.txt",
            "invoice.pdf",
            "invoice.pdf.reason.txt"
        ]
    );
    assert!(server.names_in("inbound/processed").is_empty());
    assert_eq!(server.names_in("inbound"), ["processed", "rejected"]);
    let list = edi_messages(&app).await;
    assert_eq!(list["meta"]["total"], 1, "{list}");
    assert_eq!(list["data"][0]["attributes"]["status"], "rejected");
    assert_eq!(list["data"][0]["attributes"]["channel"], "sftp");
    let id = list["data"][0]["id"].as_str().unwrap();
    let reason =
        std::fs::read_to_string(server.path("inbound/rejected/broken.edi.reason.txt")).unwrap();
    assert!(reason.starts_with("file: broken.edi\n"), "{reason}");
    assert!(
        reason.contains(&format!("rejected as EDI message {id}")),
        "{reason}"
    );
    let reason =
        std::fs::read_to_string(server.path("inbound/rejected/invoice.pdf.reason.txt")).unwrap();
    assert!(reason.contains("not an EDI interchange"), "{reason}");
}

async fn a_wrong_password_or_host_key_takes_nothing_and_the_poller_keeps_running(app: TestApp) {
    let server = SftpServer::start().await;
    std::fs::write(server.path("inbound/hamsud.edi"), HAMSUD_DISCHARGED).unwrap();
    let right_key = HostKey::parse(&server.fingerprint()).unwrap();
    let other_key = HostKey::parse(&random_host_key().public_key().to_openssh().unwrap()).unwrap();
    let wrong_password = mailbox(&server, right_key.clone(), "guess");
    let wrong_key = mailbox(&server, other_key, PASSWORD);
    let mut seen = Sightings::default();

    let refused = sftp::poll(&app.app.edi(), &wrong_password, &mut seen).await;
    let logins_after_refusal = server.logins();
    let unknown = sftp::poll(&app.app.edi(), &wrong_key, &mut seen).await;
    let logins_after_wrong_key = server.logins();
    // The watcher under a refused login: it keeps running, and stops when told.
    let shutdown = tokio_util::sync::CancellationToken::new();
    let watcher = tokio::spawn(sftp::watch(
        app.app.core.clone(),
        app.app.config.edi.reader(),
        0,
        wrong_password.clone(),
        shutdown.clone(),
    ));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let still_running = !watcher.is_finished();
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(10), watcher)
        .await
        .expect("the watcher stops when told")
        .unwrap();

    assert!(
        matches!(refused, Err(PollError::LoginRefused { ref user }) if user == USER),
        "{refused:?}"
    );
    assert_eq!(logins_after_refusal, [("guess".to_owned(), false)]);
    let Err(PollError::HostKey { presented }) = &unknown else {
        panic!("{unknown:?}");
    };
    assert!(presented.contains(&server.fingerprint()), "{presented}");
    assert_eq!(
        logins_after_wrong_key, logins_after_refusal,
        "no password is sent to a server whose key is not the one configured"
    );
    assert!(still_running);
    // Nothing listens: refused, and said so.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let closed_port = closed.local_addr().unwrap().port();
    drop(closed);
    let nobody = SftpMailbox {
        port: closed_port,
        ..mailbox(
            &server,
            HostKey::parse(&server.fingerprint()).unwrap(),
            PASSWORD,
        )
    };
    let refused_connection = sftp::poll(&app.app.edi(), &nobody, &mut Sightings::default()).await;
    assert!(
        matches!(refused_connection, Err(PollError::Connect(_))),
        "{refused_connection:?}"
    );
    assert_eq!(server.names_in("inbound"), ["hamsud.edi"]);
    assert_eq!(edi_messages(&app).await["meta"]["total"], 0);
    // The right settings take the file (the fingerprint form of host_key).
    let good = mailbox(&server, right_key, PASSWORD);
    let report = poll_twice(&app, &good, &mut Sightings::default()).await;
    assert_eq!(report.taken[0].status.as_deref(), Some("processed"));
}

async fn a_file_taken_again_after_a_crash_before_its_move_is_a_duplicate_and_changes_nothing(
    app: TestApp,
) {
    let server = SftpServer::start().await;
    let request = app
        .track("bill_of_lading", "SUDUN2SL008733AF", "SUDU")
        .await;
    app.run_pending_jobs().await;
    std::fs::write(server.path("inbound/hamsud.edi"), HAMSUD_DISCHARGED).unwrap();
    let mailbox = good_mailbox(&server);
    let first = poll_twice(&app, &mailbox, &mut Sightings::default()).await;
    app.run_pending_jobs().await;
    let events_before = container_events(&app, &request).await;
    // As if the server had stopped after storing it and before moving it: the file is
    // still there on the next start.
    std::fs::copy(
        server.path("inbound/processed/hamsud.edi"),
        server.path("inbound/hamsud.edi"),
    )
    .unwrap();

    let again = poll_twice(&app, &mailbox, &mut Sightings::default()).await;
    app.run_pending_jobs().await;

    assert_eq!(first.taken[0].status.as_deref(), Some("processed"));
    assert_eq!(
        again.taken[0].status.as_deref(),
        Some("duplicate"),
        "{again:?}"
    );
    assert_eq!(
        server.names_in("inbound/processed"),
        ["hamsud-1.edi", "hamsud.edi"]
    );
    assert_eq!(container_events(&app, &request).await, events_before);
    let duplicate = app
        .get_ok("/v2/edi_messages?filter[status]=duplicate")
        .await;
    assert_eq!(duplicate["meta"]["total"], 1, "{duplicate}");
    assert_eq!(
        duplicate["data"][0]["relationships"]["duplicate_of"]["data"]["id"],
        first.taken[0].edi_message.unwrap().to_string()
    );
}

async fn with_after_delete_stored_files_are_removed_and_unread_ones_still_rejected(app: TestApp) {
    let server = SftpServer::start().await;
    std::fs::write(server.path("inbound/hamsud.edi"), HAMSUD_DISCHARGED).unwrap();
    std::fs::write(server.path("inbound/broken.edi"), b"ISA*00*truncated").unwrap();
    std::fs::write(server.path("inbound/notes.txt"), b"hello").unwrap();
    let mailbox = SftpMailbox {
        after: AfterTaken::Delete,
        ..good_mailbox(&server)
    };

    let report = poll_twice(&app, &mailbox, &mut Sightings::default()).await;

    assert_eq!(report.taken.len(), 3, "{report:?}");
    assert_eq!(server.names_in("inbound"), ["rejected"]);
    assert_eq!(
        server.names_in("inbound/rejected"),
        ["notes.txt", "notes.txt.reason.txt"]
    );
    let list = edi_messages(&app).await;
    assert_eq!(
        list["meta"]["total"], 2,
        "both interchanges are stored: {list}"
    );
}

async fn a_file_growing_between_polls_is_left_until_two_polls_see_it_unchanged(app: TestApp) {
    let server = SftpServer::start().await;
    let (head, tail) = HAMSUD_DISCHARGED.split_at(HAMSUD_DISCHARGED.len() / 2);
    std::fs::write(server.path("inbound/growing.edi"), head).unwrap();
    let mailbox = good_mailbox(&server);
    let mut seen = Sightings::default();

    let first = sftp::poll(&app.app.edi(), &mailbox, &mut seen)
        .await
        .unwrap();
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(server.path("inbound/growing.edi"))
        .unwrap();
    std::io::Write::write_all(&mut file, tail).unwrap();
    drop(file);
    let second = sftp::poll(&app.app.edi(), &mailbox, &mut seen)
        .await
        .unwrap();
    let third = sftp::poll(&app.app.edi(), &mailbox, &mut seen)
        .await
        .unwrap();

    assert_eq!((first.taken.len(), first.waiting), (0, 1), "{first:?}");
    assert_eq!((second.taken.len(), second.waiting), (0, 1), "{second:?}");
    assert_eq!(third.taken.len(), 1, "{third:?}");
    assert_eq!(third.taken[0].status.as_deref(), Some("processed"));
    let list = edi_messages(&app).await;
    assert_eq!(
        list["meta"]["total"], 1,
        "only the whole file was read: {list}"
    );
}

async fn a_private_key_logs_in_without_a_password(app: TestApp) {
    let server = SftpServer::start().await;
    std::fs::write(server.path("inbound/hamsud.edi"), HAMSUD_DISCHARGED).unwrap();
    let with_key = SftpMailbox {
        password: None,
        private_key: Some(Arc::new(server.client_key.clone())),
        ..good_mailbox(&server)
    };
    let with_another_key = SftpMailbox {
        private_key: Some(Arc::new(random_host_key())),
        ..with_key.clone()
    };

    let refused = sftp::poll(&app.app.edi(), &with_another_key, &mut Sightings::default()).await;
    let report = poll_twice(&app, &with_key, &mut Sightings::default()).await;

    assert!(
        matches!(refused, Err(PollError::LoginRefused { .. })),
        "{refused:?}"
    );
    assert_eq!(report.taken[0].status.as_deref(), Some("processed"));
    assert!(server.logins().is_empty(), "no password was tried");
    assert_eq!(server.names_in("inbound/processed"), ["hamsud.edi"]);
}
