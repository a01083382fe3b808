//! Documents by email from a polled IMAP mailbox: real MIME messages in a mock IMAP server
//! on loopback become email submissions exactly as mail sent to the SMTP receiver does;
//! each is flagged or moved once filed, never filed twice (not after a lost connection, a
//! restart or a renumbered mailbox), and a failing server is an error retried later.

mod server;

use std::time::Duration;

use serde_json::Value;
use tidemark_server::Config;
use tidemark_server::use_cases::email::imap::{PollError, Poller};

use self::server::{MockImap, PASSWORD, USER};
use crate::documents::{pdf, tracked};
use crate::email_submissions::{message, submissions};
use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    settings = crate::email_submissions::EMAIL_SETTINGS;
    a_message_in_the_mailbox_becomes_an_email_submission_with_its_documents,
    a_polled_message_is_marked_seen_and_not_ingested_twice,
    a_restart_between_ingest_and_flagging_creates_no_duplicate,
    a_wrong_imap_password_is_logged_and_retried_not_fatal,
    an_unreachable_or_silent_server_is_an_error_retried_later,
    a_message_without_attachments_is_recorded_with_its_reason,
    a_message_of_too_many_parts_is_recorded_rejected_as_over_smtp,
    mail_the_smtp_receiver_refuses_is_refused_or_recorded_alike,
    processed_messages_are_moved_when_asked_and_no_other_message_is_deleted,
    a_message_someone_read_before_the_poll_is_taken_all_the_same,
    a_renumbered_mailbox_is_not_filed_again,
);

/// A poller of `server`'s `INBOX` for `app`, with these `email.imap_*` settings besides.
fn poller(app: &TestApp, server: &MockImap, settings: &[(&str, &str)]) -> Poller {
    let url = server.url();
    let mut pairs = vec![
        ("email.imap_url", url.as_str()),
        ("email.imap_username", USER),
        ("email.imap_password", PASSWORD),
    ];
    pairs.extend_from_slice(settings);
    let config = Config::from_pairs(&pairs).unwrap();
    Poller::new(app.app.mailroom(), config.email.imap.unwrap())
}

fn with_documents(from: &str, subject: &str, documents: &[(&str, &str, &[u8])]) -> Vec<u8> {
    message(from, subject, "Please find attached.", documents).into_bytes()
}

fn invoice(number: u32) -> Vec<u8> {
    pdf(&["COMMERCIAL INVOICE", &format!("Invoice No: {number}")])
}

/// Delivers into `INBOX`, with these flags, a message from `from` with invoice `number`
/// attached; its UID.
fn deliver_invoice(
    server: &MockImap,
    from: &str,
    subject: &str,
    number: u32,
    flags: &[&str],
) -> u32 {
    let attached = invoice(number);
    let raw = with_documents(
        from,
        subject,
        &[("invoice.pdf", "application/pdf", &attached)],
    );
    server.deliver_with_flags("INBOX", &raw, flags)
}

fn statuses(list: &Value) -> Vec<(String, String, String)> {
    list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let attributes = &s["attributes"];
            (
                attributes["subject"].as_str().unwrap().to_owned(),
                attributes["status"].as_str().unwrap().to_owned(),
                attributes["status_reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect()
}

fn seen() -> Vec<String> {
    vec!["\\Seen".to_owned()]
}

async fn a_message_in_the_mailbox_becomes_an_email_submission_with_its_documents(app: TestApp) {
    let (shipment_id, containers) = tracked(&app, "TESTIMAP0001").await;
    let server = MockImap::start().await;
    let notice = pdf(&[
        "ARRIVAL NOTICE",
        &format!("Container: {}", containers[0].1),
        "ETA: 2026-03-20",
    ]);
    let uid = server.deliver(
        "INBOX",
        &with_documents(
            "ops@forwarder.example",
            "Arrival notice for B/L TESTIMAP0001",
            &[("notice.pdf", "application/pdf", &notice)],
        ),
    );
    let mut poller = poller(&app, &server, &[]);

    let report = poller.poll().await.unwrap();

    assert_eq!(report.processed, 1);
    assert_eq!(report.taken(), 1);
    let list = submissions(&app).await;
    assert_eq!(list["meta"]["total"], 1);
    let attributes = &list["data"][0]["attributes"];
    assert_eq!(attributes["subject"], "Arrival notice for B/L TESTIMAP0001");
    assert_eq!(
        attributes["from"],
        serde_json::json!(["ops@forwarder.example"])
    );
    assert_eq!(attributes["to"], serde_json::json!(["docs@tidemark.test"]));
    assert_eq!(attributes["sent_at"], "2026-03-01T11:30:00Z");
    assert_eq!(attributes["status"], "processed");
    assert_eq!(attributes["documents_count"], 1);
    let document_id = list["data"][0]["relationships"]["documents"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let document = app
        .get(&format!("/v2/documents/{document_id}"))
        .await
        .json();
    assert_eq!(document["data"]["attributes"]["source"], "email");
    assert_eq!(document["data"]["attributes"]["file_name"], "notice.pdf");
    assert_eq!(
        document["data"]["relationships"]["shipments"]["data"][0]["id"],
        shipment_id.as_str()
    );
    let downloaded = app
        .get(&format!("/v2/documents/{document_id}/download"))
        .await;
    assert_eq!(downloaded.body, notice);
    app.run_pending_jobs().await;
    let read = app
        .get(&format!("/v2/documents/{document_id}"))
        .await
        .json();
    assert_eq!(
        read["data"]["attributes"]["document_type"],
        "arrival_notice"
    );
    // Read without setting \Seen, flagged once filed; nothing deleted, the password unsaid.
    assert_eq!(server.messages("INBOX"), [(uid, seen())]);
    let commands = server.commands();
    assert!(
        commands.contains(&format!("LOGIN {USER} ****")),
        "{commands:?}"
    );
    assert!(
        commands.contains(&"UID SEARCH UNSEEN UNDELETED".to_owned()),
        "{commands:?}"
    );
    assert!(
        commands.contains(&format!("UID FETCH {uid} BODY.PEEK[]")),
        "{commands:?}"
    );
    assert!(
        commands.contains(&format!("UID STORE {uid} +FLAGS.SILENT (\\Seen)")),
        "{commands:?}"
    );
    assert!(
        commands.iter().all(|c| !c.contains("EXPUNGE")),
        "{commands:?}"
    );
    assert_eq!(commands.last().map(String::as_str), Some("LOGOUT"));
}

async fn a_polled_message_is_marked_seen_and_not_ingested_twice(app: TestApp) {
    let server = MockImap::start().await;
    let first = deliver_invoice(&server, "ops@forwarder.example", "First invoice", 1, &[]);
    let mut poller = poller(&app, &server, &[]);
    assert_eq!(poller.poll().await.unwrap().processed, 1);

    let again = poller.poll().await.unwrap();
    // Someone marks it unread again in their mail program: still not filed twice.
    server.set_flags("INBOX", first, &[]);
    let after_unread = poller.poll().await.unwrap();
    let second = deliver_invoice(&server, "notices@carrier.example", "Second invoice", 2, &[]);
    let third = poller.poll().await.unwrap();

    assert_eq!(again.taken(), 0);
    assert_eq!(after_unread.taken(), 0);
    assert_eq!(third.processed, 1);
    assert_eq!(third.taken(), 1);
    let subjects: Vec<String> = statuses(&submissions(&app).await)
        .into_iter()
        .map(|(subject, _, _)| subject)
        .collect();
    assert_eq!(subjects, ["Second invoice", "First invoice"]);
    assert_eq!(
        server.messages("INBOX"),
        [(first, vec![]), (second, seen())]
    );
    let fetched_bodies = server
        .commands()
        .iter()
        .filter(|c| c.ends_with("BODY.PEEK[]"))
        .count();
    assert_eq!(fetched_bodies, 2);
}

async fn a_restart_between_ingest_and_flagging_creates_no_duplicate(app: TestApp) {
    let server = MockImap::start().await;
    let uid = server.deliver(
        "INBOX",
        &with_documents(
            "ops@forwarder.example",
            "Bill of lading",
            &[(
                "bl.pdf",
                "application/pdf",
                &pdf(&["BILL OF LADING", "B/L No: TESTIMAP0002"]),
            )],
        ),
    );
    // The server goes away after the message was filed, before it could be flagged.
    server.hang_up_on("UID STORE");
    let mut before = poller(&app, &server, &[]);
    let cut_short = before.poll().await;
    assert!(
        matches!(cut_short, Err(PollError::Imap { .. })),
        "{cut_short:?}"
    );
    assert_eq!(submissions(&app).await["meta"]["total"], 1);
    assert_eq!(server.messages("INBOX"), [(uid, vec![])]);

    // A new process on the same database polls again.
    let restarted = app.restarted();
    let settings = {
        let url = server.url();
        Config::from_pairs(&[
            ("email.imap_url", url.as_str()),
            ("email.imap_username", USER),
            ("email.imap_password", PASSWORD),
        ])
        .unwrap()
        .email
        .imap
        .unwrap()
    };
    let mut after = Poller::new(restarted.mailroom(), settings);
    let report = after.poll().await.unwrap();
    let quiet = after.poll().await.unwrap();

    assert_eq!(report.already_recorded, 1);
    assert_eq!(report.processed, 0);
    assert_eq!(quiet.taken(), 0);
    assert_eq!(submissions(&app).await["meta"]["total"], 1);
    assert_eq!(app.get("/v2/documents").await.json()["meta"]["total"], 1);
    assert_eq!(server.messages("INBOX"), [(uid, seen())]);
}

async fn a_wrong_imap_password_is_logged_and_retried_not_fatal(app: TestApp) {
    let server = MockImap::start().await;
    deliver_invoice(&server, "ops@forwarder.example", "Waiting invoice", 3, &[]);
    let mut poller = poller(
        &app,
        &server,
        &[
            ("email.imap_password", "not-the-password"),
            ("email.imap_poll_seconds", "60"),
        ],
    );

    let first = poller.poll().await;
    let first_wait = poller.next_poll_in(&first);
    let second = poller.poll().await;
    let second_wait = poller.next_poll_in(&second);

    let Err(error) = first else {
        panic!("a wrong password logged in: {first:?}")
    };
    assert!(matches!(error, PollError::LoginRefused { .. }), "{error:?}");
    let said = error.to_string();
    assert!(said.contains(USER), "{said}");
    assert!(!said.contains("not-the-password"), "{said}");
    assert!(second.is_err());
    assert_eq!(poller.consecutive_failures(), 2);
    assert_eq!(first_wait, Duration::from_secs(60));
    assert_eq!(second_wait, Duration::from_secs(120));
    assert_eq!(submissions(&app).await["meta"]["total"], 0);

    // The mailbox's password is set to the configured one: the next poll goes through.
    server.set_password("not-the-password");
    let fixed = poller.poll().await;
    let wait = poller.next_poll_in(&fixed);

    assert_eq!(fixed.unwrap().processed, 1);
    assert_eq!(poller.consecutive_failures(), 0);
    assert_eq!(wait, Duration::from_secs(60));
    assert_eq!(submissions(&app).await["meta"]["total"], 1);
}

async fn an_unreachable_or_silent_server_is_an_error_retried_later(app: TestApp) {
    let closed = {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        listener.local_addr().unwrap()
    };
    let server = MockImap::start().await;
    let closed_url = format!("imap://{closed}");
    let tls_url = format!("imaps://{}", server.address);
    let gone = Config::from_pairs(&[
        ("email.imap_url", closed_url.as_str()),
        ("email.imap_username", USER),
        ("email.imap_password", PASSWORD),
    ])
    .unwrap();
    let mut unreachable = Poller::new(app.app.mailroom(), gone.email.imap.unwrap());
    // A TLS mailbox answered in plain text (a wrong port, a proxy): a TLS error.
    let mut not_tls = poller(&app, &server, &[("email.imap_url", tls_url.as_str())]);

    let refused = unreachable.poll().await;
    let wait = unreachable.next_poll_in(&refused);
    let garbled = not_tls.poll().await;

    assert!(
        matches!(refused, Err(PollError::Connect { .. })),
        "{refused:?}"
    );
    assert_eq!(wait, Duration::from_secs(60));
    assert!(matches!(garbled, Err(PollError::Tls { .. })), "{garbled:?}");
    assert_eq!(not_tls.consecutive_failures(), 1);
}

async fn a_message_without_attachments_is_recorded_with_its_reason(app: TestApp) {
    let server = MockImap::start().await;
    let uid = server.deliver(
        "INBOX",
        message(
            "ops@forwarder.example",
            "No file",
            "I forgot the attachment.",
            &[],
        )
        .as_bytes(),
    );
    let mut poller = poller(&app, &server, &[]);

    let report = poller.poll().await.unwrap();

    assert_eq!(report.rejected, 1);
    assert_eq!(
        statuses(&submissions(&app).await),
        [(
            "No file".to_owned(),
            "rejected".to_owned(),
            "the message has no attachments".to_owned()
        )]
    );
    assert_eq!(server.messages("INBOX"), [(uid, seen())]);
}

async fn a_message_of_too_many_parts_is_recorded_rejected_as_over_smtp(app: TestApp) {
    let server = MockImap::start().await;
    let uid = server.deliver("INBOX", crate::email_limits::tiny_parts(2_500).as_bytes());
    let mut poller = poller(&app, &server, &[]);

    let report = poller.poll().await.unwrap();

    assert_eq!(report.rejected, 1);
    assert_eq!(
        statuses(&submissions(&app).await),
        [(
            "Many parts".to_owned(),
            "rejected".to_owned(),
            "the message has more than 200 MIME parts (email.max_message_parts)".to_owned()
        )]
    );
    assert_eq!(server.messages("INBOX"), [(uid, seen())]);
}

async fn mail_the_smtp_receiver_refuses_is_refused_or_recorded_alike(app: TestApp) {
    let server = MockImap::start().await;
    let packing_list = pdf(&["PACKING LIST"]);
    let document = [("a.pdf", "application/pdf", packing_list.as_slice())];
    server.deliver(
        "INBOX",
        &with_documents("someone@elsewhere.example", "Stranger", &document),
    );
    // Allowed in From, but the envelope sender the mail server recorded is not.
    let disguised = format!(
        "Return-Path: <someone@elsewhere.example>\r\n{}",
        message("ops@forwarder.example", "Disguised", "x", &document)
    );
    server.deliver("INBOX", disguised.as_bytes());
    let huge = server.deliver(
        "INBOX",
        &with_documents(
            "ops@forwarder.example",
            "Huge",
            &[("big.pdf", "application/pdf", &vec![b'a'; 300_000])],
        ),
    );
    server.deliver("INBOX", b"\x01\x02 not a message at all\r\n");
    server.deliver(
        "INBOX",
        &with_documents(
            "ops@forwarder.example",
            "Web page",
            &[(
                "page.html",
                "text/html",
                b"<html><script>alert(1)</script></html>",
            )],
        ),
    );
    let good = format!(
        "Return-Path: <notices@carrier.example>\r\n{}",
        message(
            "notices@carrier.example",
            "Invoice",
            "attached",
            &[("invoice.pdf", "application/pdf", &invoice(4))],
        )
    );
    server.deliver("INBOX", good.as_bytes());
    let mut poller = poller(&app, &server, &[]);

    let report = poller.poll().await.unwrap();

    assert_eq!(
        (report.processed, report.rejected, report.refused),
        (1, 3, 2),
        "{report:?}"
    );
    let recorded = statuses(&submissions(&app).await);
    assert_eq!(recorded.len(), 4, "{recorded:?}");
    assert_eq!(recorded[0].0, "Invoice");
    assert_eq!(recorded[0].1, "processed");
    let reason_of = |subject: &str| {
        recorded
            .iter()
            .find(|(s, _, _)| s == subject)
            .map(|(_, status, reason)| (status.clone(), reason.clone()))
            .unwrap()
    };
    let (status, reason) = reason_of("Huge");
    assert_eq!(status, "rejected");
    assert!(
        reason.contains("more than email.max_message_bytes (200000)"),
        "{reason}"
    );
    let (status, reason) = reason_of("Web page");
    assert_eq!(status, "rejected");
    assert!(reason.contains("page.html"), "{reason}");
    let (status, reason) = reason_of("");
    assert_eq!(status, "rejected");
    assert!(reason.contains("malformed MIME"), "{reason}");
    // The large one was never read past its header; every message was dealt with.
    let commands = server.commands();
    assert!(
        commands.contains(&format!("UID FETCH {huge} BODY.PEEK[HEADER]")),
        "{commands:?}"
    );
    assert!(!commands.contains(&format!("UID FETCH {huge} BODY.PEEK[]")));
    assert!(
        server
            .messages("INBOX")
            .iter()
            .all(|(_, flags)| *flags == seen())
    );
    assert_eq!(poller.poll().await.unwrap().taken(), 0);
}

async fn processed_messages_are_moved_when_asked_and_no_other_message_is_deleted(app: TestApp) {
    let server = MockImap::start().await;
    let mut poller = poller(
        &app,
        &server,
        &[
            ("email.imap_move_to", "Archive"),
            ("email.imap_mark_seen", "false"),
        ],
    );
    deliver_invoice(&server, "ops@forwarder.example", "Moved by MOVE", 5, &[]);

    assert_eq!(poller.poll().await.unwrap().processed, 1);
    assert!(server.messages("INBOX").is_empty());
    assert_eq!(server.messages("Archive").len(), 1);
    assert_eq!(server.messages("Archive")[0].1, Vec::<String>::new());

    // A server without MOVE but with UIDPLUS: copied, then only that UID expunged; a
    // message someone else flagged \Deleted stays.
    server.set_capabilities(&["IMAP4rev1", "UIDPLUS"]);
    let theirs =
        server.deliver_with_flags("INBOX", b"Subject: theirs\r\n\r\nx\r\n", &["\\Deleted"]);
    deliver_invoice(&server, "ops@forwarder.example", "Moved by COPY", 6, &[]);
    let copied = poller.poll().await.unwrap();

    assert_eq!(copied.taken(), 1, "{copied:?}");
    assert_eq!(copied.processed, 1);
    assert_eq!(server.messages("Archive").len(), 2);
    assert_eq!(
        server.messages("INBOX"),
        [(theirs, vec!["\\Deleted".to_owned()])]
    );

    // Neither: nothing is filed that could not be moved afterwards.
    server.set_capabilities(&["IMAP4rev1"]);
    deliver_invoice(&server, "ops@forwarder.example", "Stays", 7, &[]);
    let cannot = poller.poll().await;

    assert!(matches!(cannot, Err(PollError::CannotMove)), "{cannot:?}");
    assert_eq!(server.messages("INBOX").len(), 2);
    let subjects: Vec<String> = statuses(&submissions(&app).await)
        .into_iter()
        .map(|(subject, _, _)| subject)
        .collect();
    assert!(!subjects.contains(&"Stays".to_owned()), "{subjects:?}");
}

async fn a_message_someone_read_before_the_poll_is_taken_all_the_same(app: TestApp) {
    let server = MockImap::start().await;
    let mut poller = poller(&app, &server, &[]);
    // Mail already read before the poller was set up is left alone.
    let old = deliver_invoice(
        &server,
        "ops@forwarder.example",
        "Dealt with by hand",
        8,
        &["\\Seen"],
    );
    assert_eq!(poller.poll().await.unwrap().taken(), 0);
    deliver_invoice(&server, "ops@forwarder.example", "New and unread", 9, &[]);
    assert_eq!(poller.poll().await.unwrap().processed, 1);

    // From then on a new message is taken even if a person opened it first.
    let read_first = deliver_invoice(
        &server,
        "ops@forwarder.example",
        "Opened before the poll",
        10,
        &["\\Seen"],
    );
    let report = poller.poll().await.unwrap();

    assert_eq!(report.processed, 1);
    let subjects: Vec<String> = statuses(&submissions(&app).await)
        .into_iter()
        .map(|(subject, _, _)| subject)
        .collect();
    assert_eq!(subjects.len(), 2);
    assert!(subjects.contains(&"Opened before the poll".to_owned()));
    assert!(!subjects.contains(&"Dealt with by hand".to_owned()));
    let commands = server.commands();
    assert!(
        commands.iter().any(|c| c.starts_with("UID SEARCH UID ")),
        "{commands:?}"
    );
    assert!(old < read_first);
}

async fn a_renumbered_mailbox_is_not_filed_again(app: TestApp) {
    let server = MockImap::start().await;
    let mut poller = poller(&app, &server, &[]);
    for number in [11, 12] {
        deliver_invoice(
            &server,
            "ops@forwarder.example",
            &format!("Invoice {number}"),
            number,
            &[],
        );
    }
    assert_eq!(poller.poll().await.unwrap().processed, 2);

    // The server rebuilt its index: a new UIDVALIDITY, new UIDs, flags kept.
    server.renumber("INBOX");
    deliver_invoice(&server, "ops@forwarder.example", "Invoice 13", 13, &[]);
    let report = poller.poll().await.unwrap();

    assert_eq!(report.processed, 1);
    assert_eq!(report.taken(), 1);
    assert_eq!(submissions(&app).await["meta"]["total"], 3);
    assert!(server.messages("INBOX").iter().all(|(_, f)| *f == seen()));
}
