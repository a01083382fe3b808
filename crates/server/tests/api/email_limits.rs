//! The bounds on emailed mail, through the real SMTP receiver on loopback: a message of too
//! many MIME parts, or nested too deep, is recorded `rejected` with a short reason without
//! being parsed; reasons stay a few KB however many attachments failed; a message within
//! the bounds still becomes documents; a sender outside `allowed_senders` gets a `5xx`.

use crate::documents::pdf;
use crate::email_submissions::{Client, message, receiver, submissions};
use crate::helpers::TestApp;
use crate::on_both_backends;

on_both_backends!(
    settings = crate::email_submissions::EMAIL_SETTINGS;
    a_message_of_thousands_of_tiny_parts_is_refused_with_a_short_reason_and_the_list_stays_small,
    parts_nested_deeper_than_the_limit_are_refused_with_a_short_reason,
    many_refused_attachments_are_summed_up_in_a_short_reason,
    a_message_with_a_pdf_within_the_bounds_still_becomes_a_document,
    a_sender_outside_allowed_senders_is_refused_with_a_5xx_and_not_recorded,
);

/// A header from an allowed sender, then a multipart of `parts` tiny attachments.
pub(crate) fn tiny_parts(parts: usize) -> String {
    let mut text = String::from(
        "From: ops@forwarder.example\r\nTo: docs@tidemark.test\r\nSubject: Many parts\r\n\
         MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=x\r\n\r\n",
    );
    for _ in 0..parts {
        text.push_str("--x\r\nContent-Disposition: attachment; filename=p.pdf\r\n\r\nJVBERi0=\r\n");
    }
    text.push_str("--x--\r\n");
    text
}

/// A header from an allowed sender, then multiparts `depth` deep around one text part.
fn nested(depth: usize) -> String {
    let mut text = String::from(
        "From: ops@forwarder.example\r\nTo: docs@tidemark.test\r\nSubject: Deep\r\n\
         MIME-Version: 1.0\r\n",
    );
    for level in 0..depth {
        text.push_str(&format!(
            "Content-Type: multipart/mixed; boundary=b{level}\r\n\r\n--b{level}\r\n"
        ));
    }
    text.push_str("Content-Type: text/plain\r\n\r\nhello\r\n");
    for level in (0..depth).rev() {
        text.push_str(&format!("--b{level}--\r\n"));
    }
    text
}

/// The status and reason of the newest submission.
async fn newest(app: &TestApp) -> (String, String) {
    let list = submissions(app).await;
    let attributes = &list["data"][0]["attributes"];
    (
        attributes["status"].as_str().unwrap().to_owned(),
        attributes["status_reason"]
            .as_str()
            .unwrap_or_default()
            .to_owned(),
    )
}

async fn a_message_of_thousands_of_tiny_parts_is_refused_with_a_short_reason_and_the_list_stays_small(
    app: TestApp,
) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO forwarder.example").await;

    let reply = client
        .mail("ops@forwarder.example", &tiny_parts(2_500))
        .await;
    shutdown.cancel();

    assert!(reply.starts_with("554"), "{reply}");
    assert!(reply.contains("more than 200 MIME parts"), "{reply}");
    let list = app.get("/v2/email_submissions").await;
    assert!(list.body.len() < 4_096, "{} bytes", list.body.len());
    let list = list.json();
    assert_eq!(list["meta"]["total"], 1);
    let attributes = &list["data"][0]["attributes"];
    assert_eq!(attributes["status"], "rejected");
    assert_eq!(attributes["subject"], "Many parts");
    assert_eq!(attributes["documents_count"], 0);
    assert_eq!(
        attributes["status_reason"],
        "the message has more than 200 MIME parts (email.max_message_parts)"
    );
}

async fn parts_nested_deeper_than_the_limit_are_refused_with_a_short_reason(app: TestApp) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO forwarder.example").await;

    let reply = client.mail("ops@forwarder.example", &nested(11)).await;
    shutdown.cancel();

    assert!(reply.starts_with("554"), "{reply}");
    assert_eq!(
        newest(&app).await,
        (
            "rejected".to_owned(),
            "the message nests MIME parts more than 10 deep (email.max_message_depth)".to_owned()
        )
    );
}

async fn many_refused_attachments_are_summed_up_in_a_short_reason(app: TestApp) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO forwarder.example").await;
    let long_name = format!("{}.html", "n".repeat(500));
    let markup: &[u8] = b"<html><script>alert(1)</script></html>";
    let attachments: Vec<(&str, &str, &[u8])> = (0..150)
        .map(|_| (long_name.as_str(), "text/html", markup))
        .collect();

    let reply = client
        .mail(
            "ops@forwarder.example",
            &message("ops@forwarder.example", "Pages", "x", &attachments),
        )
        .await;
    shutdown.cancel();

    assert!(reply.starts_with("554"), "{reply}");
    let (status, reason) = newest(&app).await;
    assert_eq!(status, "rejected");
    assert!(reason.len() <= 4_096, "{} bytes", reason.len());
    assert!(
        reason.starts_with("no attachment became a document: nnn"),
        "{reason}"
    );
    // Twenty read and refused, 130 not read: ten listed, the rest counted.
    assert!(reason.ends_with("… and 11 more"), "{reason}");
}

async fn a_message_with_a_pdf_within_the_bounds_still_becomes_a_document(app: TestApp) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO forwarder.example").await;

    let reply = client
        .mail(
            "ops@forwarder.example",
            &message(
                "ops@forwarder.example",
                "Bill of lading",
                "attached",
                &[(
                    "bl.pdf",
                    "application/pdf",
                    &pdf(&["BILL OF LADING", "B/L No: TESTBOUND0001"]),
                )],
            ),
        )
        .await;
    shutdown.cancel();

    assert!(reply.starts_with("250"), "{reply}");
    let list = submissions(&app).await;
    let attributes = &list["data"][0]["attributes"];
    assert_eq!(attributes["status"], "processed");
    assert_eq!(attributes["documents_count"], 1);
    assert_eq!(attributes["status_reason"], serde_json::Value::Null);
}

async fn a_sender_outside_allowed_senders_is_refused_with_a_5xx_and_not_recorded(app: TestApp) {
    let (address, shutdown) = receiver(&app).await;
    let mut client = Client::connect(address).await;
    client.send("EHLO elsewhere.example").await;

    let reply = client
        .mail(
            "someone@elsewhere.example",
            &message(
                "someone@elsewhere.example",
                "Invoice",
                "attached",
                &[("a.pdf", "application/pdf", &pdf(&["INVOICE"]))],
            ),
        )
        .await;
    let recipient = client.send("RCPT TO:<docs@tidemark.test>").await;
    shutdown.cancel();

    assert!(reply.starts_with("550 5.7.1"), "{reply}");
    // Without an accepted sender there is no transaction to add a recipient to.
    assert!(recipient.starts_with("503"), "{recipient}");
    assert_eq!(submissions(&app).await["meta"]["total"], 0);
}
