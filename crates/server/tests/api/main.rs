//! The HTTP API, exercised end to end through the router, on SQLite and (when
//! `TIDEMARK_TEST_POSTGRES_URL` is set) on PostgreSQL.

#![expect(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is a failed test"
)]

mod helpers;

mod api_keys;
mod auth;
mod carrier_answers;
mod carrier_corpus;
mod carrier_profiles;
mod carriers;
mod client_reads;
mod console;
mod console_doors;
mod console_manage;
mod console_security;
mod conventions;
mod custom_fields;
mod dcsa3;
mod document_actions;
mod document_extraction;
mod documents;
mod edi_channels;
mod edi_messages;
mod edi_resend;
mod edi_sftp;
mod email_imap;
mod email_limits;
mod email_submissions;
mod event_terminals;
mod fixture_parity;
mod hostile;
mod jobs;
mod openapi_contract;
mod operations;
mod parity;
mod parity_ops;
mod parties;
mod reference_data;
mod sftp_server;
mod spreadsheets;
mod terminal_checks;
mod tracking;
mod tracking_requests;
mod vessels;
mod webhooks;
