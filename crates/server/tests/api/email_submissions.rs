//! Documents by email: real MIME messages sent over SMTP on loopback to the built-in
//! receiver become email submissions with their documents (`GET /v2/email_submissions`);
//! bad mail is refused or recorded with a reason, and the receiver keeps serving.

use axum::http::StatusCode;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio_util::sync::CancellationToken;

use crate::documents::{pdf, tracked};
use crate::helpers::TestApp;
use crate::on_both_backends;

/// Mail is filed under `acme`, from two senders, up to 200,000 bytes (the IMAP poller's
/// tests share these).
pub(crate) const EMAIL_SETTINGS: &[(&str, &str)] = &[
    ("storage_url", "memory://"),
    ("email.account", "acme"),
    (
        "email.allowed_senders",
        "ops@forwarder.example, @carrier.example",
    ),
    ("email.max_message_bytes", "200000"),
];

on_both_backends!(
    settings = crate::email_submissions::EMAIL_SETTINGS;
    a_message_sent_over_smtp_becomes_a_submission_with_its_documents,
    bad_mail_is_refused_or_recorded_with_a_reason_and_the_receiver_keeps_serving,
    email_submissions_are_listed_newest_first_and_found_by_id_only_in_their_account,
    garbage_and_dropped_connections_do_not_stop_the_receiver,
);

/// The receiver on a free loopback port, until the returned token is cancelled.
pub(crate) async fn receiver(app: &TestApp) -> (std::net::SocketAddr, CancellationToken) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    let shutdown = CancellationToken::new();
    tokio::spawn(tidemark_server::use_cases::email::smtp::serve(
        app.app.mailroom(),
        listener,
        shutdown.clone(),
    ));
    (address, shutdown)
}

/// A plain SMTP client: each call sends one line and returns the whole reply.
pub(crate) struct Client {
    reader: BufReader<tokio::net::tcp::OwnedReadHalf>,
    writer: tokio::net::tcp::OwnedWriteHalf,
}

impl Client {
    pub(crate) async fn connect(address: std::net::SocketAddr) -> Self {
        let (read, writer) = TcpStream::connect(address).await.unwrap().into_split();
        let mut client = Self {
            reader: BufReader::new(read),
            writer,
        };
        assert!(client.reply().await.starts_with("220"));
        client
    }

    async fn reply(&mut self) -> String {
        let mut reply = String::new();
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).await.unwrap();
            reply.push_str(&line);
            if line.len() < 4 || line.as_bytes()[3] != b'-' {
                return reply;
            }
        }
    }

    pub(crate) async fn send(&mut self, line: &str) -> String {
        self.writer
            .write_all(format!("{line}\r\n").as_bytes())
            .await
            .unwrap();
        self.reply().await
    }

    /// A whole transaction; the reply to the end of `DATA`, or the first refusal.
    pub(crate) async fn mail(&mut self, from: &str, message: &str) -> String {
        let reply = self.send(&format!("MAIL FROM:<{from}>")).await;
        if !reply.starts_with("250") {
            return reply;
        }
        assert!(
            self.send("RCPT TO:<docs@tidemark.test>")
                .await
                .starts_with("250")
        );
        assert!(self.send("DATA").await.starts_with("354"));
        let mut data = String::new();
        for line in message.split('\n') {
            let line = line.trim_end_matches('\r');
            // Dot-stuffing, as RFC 5321 §4.5.2 asks of clients.
            if line.starts_with('.') {
                data.push('.');
            }
            data.push_str(line);
            data.push_str("\r\n");
        }
        self.writer.write_all(data.as_bytes()).await.unwrap();
        self.send(".").await
    }
}

/// A MIME message from `from` with a text body and these attachments.
pub(crate) fn message(
    from: &str,
    subject: &str,
    body: &str,
    attachments: &[(&str, &str, &[u8])],
) -> String {
    let boundary = "=_tidemark_test_boundary";
    let mut text = format!(
        "From: Forwarder Ops <{from}>\r\nTo: docs@tidemark.test\r\nCc: team@forwarder.example\r\n\
         Subject: {subject}\r\nDate: Sun, 1 Mar 2026 11:30:00 +0000\r\n\
         Message-ID: <m-{subject_id}@forwarder.example>\r\nIn-Reply-To: <earlier@forwarder.example>\r\n\
         References: <first@forwarder.example> <earlier@forwarder.example>\r\nMIME-Version: 1.0\r\n",
        subject_id = subject.len()
    );
    if attachments.is_empty() {
        text.push_str(&format!(
            "Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
        ));
        return text;
    }
    text.push_str(&format!(
        "Content-Type: multipart/mixed; boundary=\"{boundary}\"\r\n\r\n--{boundary}\r\n\
         Content-Type: text/plain; charset=utf-8\r\n\r\n{body}\r\n"
    ));
    for (name, content_type, bytes) in attachments {
        let encoded = STANDARD.encode(bytes);
        let wrapped: Vec<&str> = encoded
            .as_bytes()
            .chunks(76)
            .map(|c| std::str::from_utf8(c).unwrap())
            .collect();
        text.push_str(&format!(
            "--{boundary}\r\nContent-Type: {content_type}; name=\"{name}\"\r\n\
             Content-Disposition: attachment; filename=\"{name}\"\r\n\
             Content-Transfer-Encoding: base64\r\n\r\n{}\r\n",
            wrapped.join("\r\n")
        ));
    }
    text.push_str(&format!("--{boundary}--\r\n"));
    text
}

pub(crate) async fn submissions(app: &TestApp) -> Value {
    let response = app.get("/v2/email_submissions").await;
    assert_eq!(response.status, StatusCode::OK);
    response.json()
}

async fn a_message_sent_over_smtp_becomes_a_submission_with_its_documents(app: TestApp) {
    let (shipment_id, containers) = tracked(&app, "TESTMAIL0001").await;
    let (address, shutdown) = receiver(&app).await;
    let notice = pdf(&[
        "ARRIVAL NOTICE",
        &format!("Container: {}", containers[0].1),
        "ETA: 2026-03-20",
    ]);
    let mut client = Client::connect(address).await;
    assert!(
        client
            .send("EHLO forwarder.example")
            .await
            .contains("SIZE 200000")
    );

    let reply = client
        .mail(
            "ops@forwarder.example",
            &message(
                "ops@forwarder.example",
                "Arrival notice for B/L TESTMAIL0001",
                "Hello,\nplease find the arrival notice attached.\n.\nRegards",
                &[("notice.pdf", "application/pdf", &notice)],
            ),
        )
        .await;
    assert!(reply.starts_with("250"), "{reply}");
    assert!(client.send("QUIT").await.starts_with("221"));
    shutdown.cancel();

    let list = submissions(&app).await;
    assert_eq!(list["meta"]["total"], 1);
    let submission = &list["data"][0];
    assert_eq!(submission["type"], "email_submission");
    let attributes = &submission["attributes"];
    assert_eq!(attributes["subject"], "Arrival notice for B/L TESTMAIL0001");
    assert!(attributes["body"].as_str().unwrap().contains("please find"));
    assert!(attributes["body"].as_str().unwrap().contains("\n.\n"));
    assert_eq!(
        attributes["from"],
        serde_json::json!(["ops@forwarder.example"])
    );
    assert_eq!(attributes["to"], serde_json::json!(["docs@tidemark.test"]));
    assert_eq!(
        attributes["cc"],
        serde_json::json!(["team@forwarder.example"])
    );
    assert_eq!(attributes["sent_at"], "2026-03-01T11:30:00Z");
    let subject = "Arrival notice for B/L TESTMAIL0001";
    assert_eq!(
        attributes["message_id"],
        format!("m-{}@forwarder.example", subject.len())
    );
    assert_eq!(attributes["in_reply_to"], "earlier@forwarder.example");
    assert_eq!(
        attributes["references"],
        serde_json::json!(["first@forwarder.example", "earlier@forwarder.example"])
    );
    assert_eq!(attributes["content_type"], "multipart/mixed");
    assert_eq!(attributes["documents_count"], 1);
    assert_eq!(attributes["status"], "processed");
    let document_id = submission["relationships"]["documents"]["data"][0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let submission_id = submission["id"].as_str().unwrap().to_owned();

    // Linked at once by the number in the subject; read like any upload.
    let document = app
        .get(&format!("/v2/documents/{document_id}"))
        .await
        .json()["data"]
        .clone();
    assert_eq!(document["attributes"]["source"], "email");
    assert_eq!(document["attributes"]["file_name"], "notice.pdf");
    assert_eq!(
        document["relationships"]["email_submission"]["data"]["id"],
        submission_id.as_str()
    );
    assert_eq!(
        document["relationships"]["shipments"]["data"][0]["id"],
        shipment_id.as_str()
    );
    app.run_pending_jobs().await;
    let shown = app
        .get(&format!("/v2/email_submissions/{submission_id}"))
        .await
        .json();
    let included = shown["included"].as_array().unwrap();
    let document = included.iter().find(|r| r["type"] == "document").unwrap();
    assert_eq!(document["attributes"]["document_type"], "arrival_notice");
    assert_eq!(
        document["relationships"]["cargos"]["data"][0]["id"],
        containers[0].0.as_str()
    );
    assert!(
        included
            .iter()
            .any(|r| r["type"] == "document_representation")
    );
    let downloaded = app
        .get(&format!("/v2/documents/{document_id}/download"))
        .await;
    assert_eq!(downloaded.body, notice);
    let with_email = app
        .get(&format!(
            "/v2/documents/{document_id}?include=email_submission"
        ))
        .await
        .json();
    assert_eq!(with_email["included"][0]["type"], "email_submission");
    assert_eq!(with_email["included"][0]["id"], submission_id.as_str());
}

async fn bad_mail_is_refused_or_recorded_with_a_reason_and_the_receiver_keeps_serving(
    app: TestApp,
) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    assert!(
        client
            .send("MAIL FROM:<ops@forwarder.example>")
            .await
            .starts_with("503")
    );
    assert!(
        client
            .send("EHLO forwarder.example")
            .await
            .starts_with("250")
    );
    assert!(client.send("DATA").await.starts_with("503"));
    assert!(client.send("STARTTLS").await.starts_with("502"));

    let stranger = client
        .mail(
            "someone@elsewhere.example",
            &message("someone@elsewhere.example", "hi", "x", &[]),
        )
        .await;
    assert!(stranger.starts_with("550"), "{stranger}");
    let disguised = client
        .mail(
            "notices@carrier.example",
            &message(
                "someone@elsewhere.example",
                "hi",
                "x",
                &[("a.pdf", "application/pdf", &pdf(&["A"]))],
            ),
        )
        .await;
    assert!(disguised.starts_with("550"), "{disguised}");
    let no_attachment = client
        .mail(
            "ops@forwarder.example",
            &message("ops@forwarder.example", "No file", "nothing attached", &[]),
        )
        .await;
    assert!(no_attachment.starts_with("554"), "{no_attachment}");
    let huge = client
        .mail(
            "ops@forwarder.example",
            &message(
                "ops@forwarder.example",
                "Huge",
                "x",
                &[("big.pdf", "application/pdf", &vec![b'a'; 300_000])],
            ),
        )
        .await;
    assert!(huge.starts_with("552"), "{huge}");
    let declared_huge = client
        .send("MAIL FROM:<ops@forwarder.example> SIZE=900000")
        .await;
    assert!(declared_huge.starts_with("552"), "{declared_huge}");
    let malformed = client
        .mail("ops@forwarder.example", "\u{1}\u{2} not a message at all")
        .await;
    assert!(malformed.starts_with("554"), "{malformed}");
    let markup = client
        .mail(
            "ops@forwarder.example",
            &message(
                "ops@forwarder.example",
                "Web page",
                "see attached",
                &[(
                    "page.html",
                    "text/html",
                    b"<html><script>alert(1)</script></html>",
                )],
            ),
        )
        .await;
    assert!(markup.starts_with("554"), "{markup}");
    let good = client
        .mail(
            "notices@carrier.example",
            &message(
                "notices@carrier.example",
                "Invoice",
                "attached",
                &[(
                    "invoice.pdf",
                    "application/pdf",
                    &pdf(&["COMMERCIAL INVOICE", "Invoice No: 1"]),
                )],
            ),
        )
        .await;
    assert!(good.starts_with("250"), "{good}");
    shutdown.cancel();

    let list = submissions(&app).await;
    let statuses: Vec<(String, String)> = list["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["attributes"]["status"].as_str().unwrap().to_owned(),
                s["attributes"]["status_reason"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    assert_eq!(statuses.len(), 4, "{statuses:?}");
    assert_eq!(statuses[0].0, "processed");
    assert!(statuses[1].1.contains("page.html"), "{statuses:?}");
    assert!(statuses[2].1.contains("malformed MIME"), "{statuses:?}");
    assert!(statuses[3].1.contains("no attachments"), "{statuses:?}");
    assert!(statuses[1..].iter().all(|(status, _)| status == "rejected"));
}

async fn email_submissions_are_listed_newest_first_and_found_by_id_only_in_their_account(
    app: TestApp,
) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("HELO forwarder.example").await;
    for (index, subject) in ["first", "second", "third"].iter().enumerate() {
        app.clock.advance(chrono::Duration::minutes(1));
        let bytes = pdf(&["PACKING LIST", subject]);
        let reply = client
            .mail(
                "ops@forwarder.example",
                &message(
                    "ops@forwarder.example",
                    subject,
                    "x",
                    &[(&format!("pl-{index}.pdf"), "application/pdf", &bytes)],
                ),
            )
            .await;
        assert!(reply.starts_with("250"), "{reply}");
    }
    shutdown.cancel();

    let page = app.get("/v2/email_submissions?page[size]=2").await.json();
    let subjects: Vec<&str> = page["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["attributes"]["subject"].as_str().unwrap())
        .collect();
    assert_eq!(subjects, ["third", "second"]);
    assert_eq!(page["meta"]["total"], 3);
    assert!(page["links"]["next"].as_str().is_some());
    let id = page["data"][0]["id"].as_str().unwrap().to_owned();
    let with_account = app
        .get(&format!("/v2/email_submissions/{id}?include=account"))
        .await
        .json();
    assert_eq!(with_account["included"][0]["type"], "account");
    let bad_include = app.get("/v2/email_submissions?include=shipments").await;
    assert_eq!(bad_include.status, StatusCode::BAD_REQUEST);
    let bad_page = app.get("/v2/email_submissions?page[size]=0").await;
    assert_eq!(bad_page.status, StatusCode::BAD_REQUEST);
    let missing = app
        .get("/v2/email_submissions/01890000-0000-7000-8000-000000000009")
        .await;
    assert_eq!(missing.status, StatusCode::NOT_FOUND);
    let other = app.other_account_key().await;
    let foreign = app
        .request(
            axum::http::Method::GET,
            &format!("/v2/email_submissions/{id}"),
            Some(&other),
            None,
        )
        .await;
    assert_eq!(foreign.status, StatusCode::NOT_FOUND);
}

async fn garbage_and_dropped_connections_do_not_stop_the_receiver(app: TestApp) {
    let (address, shutdown) = receiver(&app).await;

    // Binary noise, an endless line, then a hang-up in the middle of a message.
    let mut noise = TcpStream::connect(address).await.unwrap();
    noise
        .write_all(&[0xff, 0x00, 0x1b, b'\r', b'\n'])
        .await
        .unwrap();
    noise.write_all(&vec![b'A'; 20_000]).await.unwrap();
    noise.write_all(b"\r\n").await.unwrap();
    drop(noise);
    let mut dropped = Client::connect(address).await;
    dropped.send("EHLO x").await;
    dropped.send("MAIL FROM:<ops@forwarder.example>").await;
    dropped.send("RCPT TO:<docs@tidemark.test>").await;
    dropped.send("DATA").await;
    dropped
        .writer
        .write_all(b"Subject: half\r\n\r\nhalf a mess")
        .await
        .unwrap();
    drop(dropped);
    let mut rude = Client::connect(address).await;
    for _ in 0..10 {
        assert!(rude.send("HELLO?").await.starts_with("502"));
    }
    assert!(rude.reply().await.starts_with("421"));

    let mut client = Client::connect(address).await;
    client.send("EHLO forwarder.example").await;
    let reply = client
        .mail(
            "ops@forwarder.example",
            &message(
                "ops@forwarder.example",
                "Still here",
                "x",
                &[("bl.pdf", "application/pdf", &pdf(&["BILL OF LADING"]))],
            ),
        )
        .await;
    shutdown.cancel();

    assert!(reply.starts_with("250"), "{reply}");
    assert_eq!(submissions(&app).await["meta"]["total"], 1);
}
