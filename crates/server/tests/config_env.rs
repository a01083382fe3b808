//! The real binary reads a carrier's settings from `TIDEMARK_CARRIERS__SCAC__KEY`
//! variables exactly as from `[carriers.SCAC]` in a file, and refuses unknown ones.

use std::process::{Command, Output};

fn check_config(variables: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tidemark"))
        .arg("check-config")
        .env_clear()
        .envs(variables.iter().copied())
        .output()
        .expect("the tidemark binary runs")
}

#[test]
fn a_carrier_given_only_by_environment_variables_is_configured() {
    let output = check_config(&[
        (
            "TIDEMARK_CARRIERS__MAEU__BASE_URL",
            "https://api.maersk.example/track",
        ),
        ("TIDEMARK_CARRIERS__MAEU__AUTH_HEADER", "Consumer-Key"),
        ("TIDEMARK_CARRIERS__MAEU__AUTH_VALUE", "secret-key"),
    ]);

    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.trim(),
        "MAEU\thttps://api.maersk.example/track\theader"
    );
    assert!(!stdout.contains("secret-key"));
}

#[test]
fn an_unknown_carrier_variable_stops_start_up_with_its_name() {
    let output = check_config(&[
        ("TIDEMARK_CARRIERS__MAEU__BASE_URL", "https://a.example"),
        ("TIDEMARK_CARRIERS__MAEU__BASE_ULR", "https://typo.example"),
    ]);

    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("TIDEMARK_CARRIERS__MAEU__BASE_ULR"),
        "{output:?}"
    );
}

#[test]
fn an_unknown_setting_variable_stops_start_up_with_its_name() {
    let output = check_config(&[("TIDEMARK_RATE_LIMIT_PER_HOUR", "5")]);

    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("TIDEMARK_RATE_LIMIT_PER_HOUR"),
        "{output:?}"
    );
}

#[test]
fn a_carriers_dcsa_version_is_read_from_its_variable_and_a_wrong_one_is_named() {
    let base_url = (
        "TIDEMARK_CARRIERS__HLCU__BASE_URL",
        "https://api.hlag.example/tnt",
    );

    let id = ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "id");
    let secret = ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "secret");
    let v3 = check_config(&[
        base_url,
        id,
        secret,
        ("TIDEMARK_CARRIERS__HLCU__DCSA_VERSION", "3.0"),
    ]);
    let wrong = check_config(&[
        base_url,
        id,
        secret,
        ("TIDEMARK_CARRIERS__HLCU__DCSA_VERSION", "2.1"),
    ]);

    assert!(v3.status.success(), "{v3:?}");
    assert!(!wrong.status.success());
    assert!(
        String::from_utf8_lossy(&wrong.stderr).contains("TIDEMARK_CARRIERS__HLCU__DCSA_VERSION"),
        "{wrong:?}"
    );
}

#[test]
fn a_profiled_carrier_needs_only_its_credentials_as_plain_text_variables() {
    let output = check_config(&[
        ("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "0123"),
        ("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET", "[not-an-array]"),
    ]);

    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        stdout.trim(),
        "HLCU\thttps://api.hlag.com/hlag/external\theaders"
    );
    assert!(!stdout.contains("not-an-array"));
}

#[test]
fn a_missing_credential_variable_stops_start_up_with_its_name() {
    let output = check_config(&[("TIDEMARK_CARRIERS__HLCU__CLIENT_ID", "id")]);

    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("TIDEMARK_CARRIERS__HLCU__CLIENT_SECRET"),
        "{output:?}"
    );
}

#[test]
fn an_unknown_imap_setting_stops_start_up_naming_it() {
    let output = check_config(&[
        ("TIDEMARK_EMAIL__IMAP_URL", "imaps://imap.forwarder.example"),
        ("TIDEMARK_EMAIL__IMAP_USERNAME", "docs"),
        ("TIDEMARK_EMAIL__IMAP_PASSWORD", "secret"),
        ("TIDEMARK_EMAIL__IMAP_FOLDER", "Archive"),
    ]);

    assert!(!output.status.success());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("TIDEMARK_EMAIL__IMAP_FOLDER"),
        "{output:?}"
    );
}

#[test]
fn imap_credentials_are_read_as_written_and_plain_imap_is_refused_off_loopback() {
    let credentials = [
        ("TIDEMARK_EMAIL__IMAP_USERNAME", "0123"),
        ("TIDEMARK_EMAIL__IMAP_PASSWORD", "[abc]"),
    ];
    let tls = check_config(&[
        ("TIDEMARK_EMAIL__IMAP_URL", "imaps://imap.forwarder.example"),
        credentials[0],
        credentials[1],
    ]);
    let plain = check_config(&[
        ("TIDEMARK_EMAIL__IMAP_URL", "imap://imap.forwarder.example"),
        credentials[0],
        credentials[1],
    ]);

    assert!(tls.status.success(), "{tls:?}");
    let told = String::from_utf8_lossy(&tls.stderr);
    assert!(
        told.contains("imap://0123@imap.forwarder.example:993/INBOX"),
        "{told}"
    );
    assert!(!told.contains("[abc]"));
    assert!(!plain.status.success());
    assert!(
        String::from_utf8_lossy(&plain.stderr).contains("TIDEMARK_EMAIL__IMAP_URL"),
        "{plain:?}"
    );
}

#[test]
fn a_senders_code_table_is_read_from_numbered_variables_and_an_unreadable_file_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("codes.toml");
    std::fs::write(
        &file,
        "[[code]]\ncode = \"P\"\nmeaning = \"Rail departed\"\nevent = \"DEPA\"\n\
         mode = \"RAIL\"\nsource = \"the sender's guide\"\n",
    )
    .unwrap();
    let missing = dir.path().join("missing.toml");

    // A sender id that looks like a number stays as written.
    let good = check_config(&[
        ("TIDEMARK_EDI__CODE_TABLES__0__SENDER", "0012345"),
        ("TIDEMARK_EDI__CODE_TABLES__0__FILE", file.to_str().unwrap()),
    ]);
    let unreadable = check_config(&[
        ("TIDEMARK_EDI__CODE_TABLES__0__SENDER", "SENDER"),
        (
            "TIDEMARK_EDI__CODE_TABLES__0__FILE",
            missing.to_str().unwrap(),
        ),
    ]);

    assert!(good.status.success(), "{good:?}");
    assert!(!unreadable.status.success());
    assert!(
        String::from_utf8_lossy(&unreadable.stderr).contains("TIDEMARK_EDI__CODE_TABLES__0__FILE"),
        "{unreadable:?}"
    );
}
