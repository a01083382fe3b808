//! A mock IMAP server on a loopback port, speaking a strict subset of IMAP4rev1 (RFC 3501)
//! with `UIDPLUS` (RFC 4315) and `MOVE` (RFC 6851): `CAPABILITY`, `NOOP`, `LOGIN` (refusing
//! a wrong password), `SELECT`/`EXAMINE`, `UID SEARCH` (`ALL`, `UNSEEN`, `SEEN`, `UNDELETED`, `DELETED`, `UID set`),
//! `UID FETCH` (`UID`, `FLAGS`, `RFC822.SIZE`, `BODY[]`, `BODY.PEEK[]`,
//! `BODY.PEEK[HEADER]`, `RFC822`, `RFC822.HEADER`), `UID STORE`, `UID COPY`, `UID MOVE`,
//! `UID EXPUNGE`, `EXPUNGE`, `CLOSE` and `LOGOUT`. Anything else, or a command in the wrong
//! state, is answered `BAD`, and every command is recorded, so a test can tell what the
//! client asked for.

use std::collections::{BTreeMap, BTreeSet};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};

pub const USER: &str = "docs@forwarder.example";
pub const PASSWORD: &str = "correct horse";

/// One message in a mailbox.
#[derive(Clone, Debug)]
struct Stored {
    uid: u32,
    flags: BTreeSet<String>,
    raw: Vec<u8>,
}

#[derive(Debug)]
struct Mailbox {
    uid_validity: u32,
    next_uid: u32,
    messages: Vec<Stored>,
}

impl Mailbox {
    fn new(uid_validity: u32) -> Self {
        Self {
            uid_validity,
            next_uid: 1,
            messages: Vec::new(),
        }
    }

    fn add(&mut self, raw: Vec<u8>, flags: BTreeSet<String>) -> u32 {
        let uid = self.next_uid;
        self.next_uid += 1;
        self.messages.push(Stored { uid, flags, raw });
        uid
    }
}

#[derive(Debug)]
struct State {
    password: String,
    capabilities: Vec<&'static str>,
    mailboxes: BTreeMap<String, Mailbox>,
    /// Close the connection, unanswered, when a command starting with this arrives (once).
    hang_up_on: Option<String>,
    /// Every command received, the password masked.
    commands: Vec<String>,
}

/// The server; cheap to clone, each clone sees the same mailboxes.
#[derive(Clone)]
pub struct MockImap {
    pub address: SocketAddr,
    state: Arc<Mutex<State>>,
}

impl MockImap {
    /// Serves on a free loopback port with an empty `INBOX` and `Archive`.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let mut mailboxes = BTreeMap::new();
        mailboxes.insert("INBOX".to_owned(), Mailbox::new(1_700_000_001));
        mailboxes.insert("Archive".to_owned(), Mailbox::new(1_700_000_002));
        let server = Self {
            address: listener.local_addr().unwrap(),
            state: Arc::new(Mutex::new(State {
                password: PASSWORD.to_owned(),
                capabilities: vec!["IMAP4rev1", "UIDPLUS", "MOVE"],
                mailboxes,
                hang_up_on: None,
                commands: Vec::new(),
            })),
        };
        let state = Arc::clone(&server.state);
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(session(Arc::clone(&state), stream));
            }
        });
        server
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap()
    }

    /// `imap://127.0.0.1:PORT`, for `email.imap_url`.
    pub fn url(&self) -> String {
        format!("imap://{}", self.address)
    }

    /// Delivers `raw` into `mailbox`, unseen; its UID.
    pub fn deliver(&self, mailbox: &str, raw: &[u8]) -> u32 {
        self.deliver_with_flags(mailbox, raw, &[])
    }

    pub fn deliver_with_flags(&self, mailbox: &str, raw: &[u8], flags: &[&str]) -> u32 {
        self.state().mailboxes.get_mut(mailbox).unwrap().add(
            raw.to_vec(),
            flags.iter().map(|f| (*f).to_owned()).collect(),
        )
    }

    /// The UIDs in `mailbox`, with their flags.
    pub fn messages(&self, mailbox: &str) -> Vec<(u32, Vec<String>)> {
        self.state().mailboxes[mailbox]
            .messages
            .iter()
            .map(|m| (m.uid, m.flags.iter().cloned().collect()))
            .collect()
    }

    /// Sets the flags of message `uid`, as a person's mail program would.
    pub fn set_flags(&self, mailbox: &str, uid: u32, flags: &[&str]) {
        let mut state = self.state();
        let message = state
            .mailboxes
            .get_mut(mailbox)
            .unwrap()
            .messages
            .iter_mut()
            .find(|m| m.uid == uid)
            .unwrap();
        message.flags = flags.iter().map(|f| (*f).to_owned()).collect();
    }

    pub fn set_password(&self, password: &str) {
        password.clone_into(&mut self.state().password);
    }

    pub fn set_capabilities(&self, capabilities: &[&'static str]) {
        self.state().capabilities = capabilities.to_vec();
    }

    /// Renumbers `mailbox` as a server does when it cannot keep its UIDs (a restored
    /// backup, a rebuilt index): a new UIDVALIDITY and new UIDs for the same messages.
    pub fn renumber(&self, mailbox: &str) {
        let mut state = self.state();
        let old = state.mailboxes.remove(mailbox).unwrap();
        let mut renumbered = Mailbox::new(old.uid_validity + 1000);
        renumbered.next_uid = 500;
        for message in old.messages {
            renumbered.add(message.raw, message.flags);
        }
        state.mailboxes.insert(mailbox.to_owned(), renumbered);
    }

    /// The next command starting with `prefix` (e.g. `UID STORE`) gets no answer: the
    /// connection is closed instead, as when the server or the network goes away.
    pub fn hang_up_on(&self, prefix: &str) {
        self.state().hang_up_on = Some(prefix.to_owned());
    }

    /// The commands received so far, tags removed, `LOGIN`'s password masked.
    pub fn commands(&self) -> Vec<String> {
        self.state().commands.clone()
    }
}

enum Phase {
    NotAuthenticated,
    Authenticated,
    Selected { mailbox: String, read_only: bool },
}

/// One line from the client, split into words; quoted strings are one word, unquoted.
fn words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut chars = line.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            ' ' => {
                chars.next();
            }
            '"' => {
                chars.next();
                let mut word = String::new();
                loop {
                    match chars.next()? {
                        '"' => break,
                        '\\' => word.push(chars.next()?),
                        c => word.push(c),
                    }
                }
                words.push(word);
            }
            '(' => {
                // A parenthesized list is one word, parentheses kept.
                let mut word = String::new();
                let mut depth = 0;
                for c in chars.by_ref() {
                    word.push(c);
                    match c {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                if depth != 0 {
                    return None;
                }
                words.push(word);
            }
            // Literals are not spoken by this server.
            '{' => return None,
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c == ' ' {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                words.push(word);
            }
        }
    }
    Some(words)
}

/// The UIDs of a sequence set (`1`, `3:5`, `7:*`, `1,4:6`) among `uids`: `*` is the highest
/// UID, and `n:m` covers the UIDs between the two whichever is larger (RFC 3501 §9).
fn uid_set(set: &str, uids: &[u32]) -> Option<BTreeSet<u32>> {
    let highest = uids.iter().copied().max().unwrap_or(0);
    let number = |text: &str| -> Option<u32> {
        if text == "*" {
            Some(highest)
        } else {
            text.parse().ok().filter(|n| *n > 0)
        }
    };
    let mut chosen = BTreeSet::new();
    for part in set.split(',') {
        let (low, high) = match part.split_once(':') {
            Some((a, b)) => {
                let (a, b) = (number(a)?, number(b)?);
                (a.min(b), a.max(b))
            }
            None => {
                let n = number(part)?;
                (n, n)
            }
        };
        chosen.extend(
            uids.iter()
                .copied()
                .filter(|uid| (low..=high).contains(uid)),
        );
    }
    Some(chosen)
}

fn flag_list(flags: &BTreeSet<String>) -> String {
    format!("({})", flags.iter().cloned().collect::<Vec<_>>().join(" "))
}

async fn session(state: Arc<Mutex<State>>, stream: TcpStream) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::new(read);
    let mut phase = Phase::NotAuthenticated;
    if write
        .write_all(b"* OK mock IMAP4rev1 server ready\r\n")
        .await
        .is_err()
    {
        return;
    }
    loop {
        let mut line = String::new();
        match reader.read_line(&mut line).await {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let Some(line) = line.strip_suffix("\r\n") else {
            // RFC 3501 §2.2: lines end with CRLF.
            let _ = write.write_all(b"* BAD lines end with CRLF\r\n").await;
            return;
        };
        let (reply, close) = {
            let mut state = state.lock().unwrap();
            if state
                .hang_up_on
                .as_deref()
                .is_some_and(|prefix| command_of(line).starts_with(prefix))
            {
                state.hang_up_on = None;
                return;
            }
            answer(&mut state, &mut phase, line)
        };
        if write.write_all(&reply).await.is_err() || close {
            return;
        }
    }
}

/// The line without its tag, upper-cased up to its arguments.
fn command_of(line: &str) -> String {
    line.split_once(' ')
        .map(|(_, rest)| rest.to_ascii_uppercase())
        .unwrap_or_default()
}

/// The reply to one command line, and whether to close the connection after it.
fn answer(state: &mut State, phase: &mut Phase, line: &str) -> (Vec<u8>, bool) {
    let Some(words) = words(line) else {
        return (b"* BAD cannot parse that\r\n".to_vec(), false);
    };
    let Some((tag, rest)) = words.split_first() else {
        return (b"* BAD empty line\r\n".to_vec(), false);
    };
    let Some((command, arguments)) = rest.split_first() else {
        return (format!("{tag} BAD no command\r\n").into_bytes(), false);
    };
    let command = command.to_ascii_uppercase();
    let recorded = if command == "LOGIN" {
        format!(
            "LOGIN {} ****",
            arguments.first().cloned().unwrap_or_default()
        )
    } else {
        rest.join(" ")
    };
    state.commands.push(recorded);
    let mut out = Vec::new();
    let mut close = false;
    let done = match (command.as_str(), &*phase) {
        ("CAPABILITY", _) => {
            out.extend(format!("* CAPABILITY {}\r\n", state.capabilities.join(" ")).bytes());
            "OK CAPABILITY completed".to_owned()
        }
        ("NOOP", _) => "OK NOOP completed".to_owned(),
        ("LOGOUT", _) => {
            out.extend(b"* BYE logging out\r\n");
            close = true;
            "OK LOGOUT completed".to_owned()
        }
        ("LOGIN", Phase::NotAuthenticated) => match arguments {
            [user, password] if user == USER && *password == state.password => {
                *phase = Phase::Authenticated;
                "OK LOGIN completed".to_owned()
            }
            [_, _] => "NO [AUTHENTICATIONFAILED] invalid credentials".to_owned(),
            _ => "BAD LOGIN takes a user and a password".to_owned(),
        },
        ("SELECT" | "EXAMINE", Phase::Authenticated | Phase::Selected { .. }) => match arguments {
            [name] => match state.mailboxes.get(name) {
                Some(mailbox) => {
                    let read_only = command == "EXAMINE";
                    let unseen = mailbox
                        .messages
                        .iter()
                        .position(|m| !m.flags.contains("\\Seen"));
                    out.extend(
                        format!(
                            "* FLAGS (\\Answered \\Flagged \\Deleted \\Seen \\Draft)\r\n\
                                 * OK [PERMANENTFLAGS (\\Deleted \\Seen \\*)] flags\r\n\
                                 * {} EXISTS\r\n* 0 RECENT\r\n",
                            mailbox.messages.len()
                        )
                        .bytes(),
                    );
                    if let Some(index) = unseen {
                        out.extend(format!("* OK [UNSEEN {}] first unseen\r\n", index + 1).bytes());
                    }
                    out.extend(
                        format!(
                            "* OK [UIDVALIDITY {}] UIDs valid\r\n\
                                 * OK [UIDNEXT {}] predicted next UID\r\n",
                            mailbox.uid_validity, mailbox.next_uid
                        )
                        .bytes(),
                    );
                    *phase = Phase::Selected {
                        mailbox: name.clone(),
                        read_only,
                    };
                    format!(
                        "OK [{}] {command} completed",
                        if read_only { "READ-ONLY" } else { "READ-WRITE" }
                    )
                }
                None => {
                    *phase = Phase::Authenticated;
                    "NO [NONEXISTENT] no such mailbox".to_owned()
                }
            },
            _ => format!("BAD {command} takes a mailbox"),
        },
        ("UID", Phase::Selected { mailbox, read_only }) => {
            let (mailbox, read_only) = (mailbox.clone(), *read_only);
            uid_command(state, &mailbox, read_only, arguments, &mut out)
        }
        ("EXPUNGE", Phase::Selected { mailbox, read_only }) => {
            if *read_only {
                "NO mailbox is read-only".to_owned()
            } else {
                let mailbox = mailbox.clone();
                expunge(state, &mailbox, None, &mut out);
                "OK EXPUNGE completed".to_owned()
            }
        }
        ("CLOSE", Phase::Selected { mailbox, read_only }) => {
            if !*read_only {
                let mailbox = mailbox.clone();
                // CLOSE expunges silently.
                expunge(state, &mailbox, None, &mut Vec::new());
            }
            *phase = Phase::Authenticated;
            "OK CLOSE completed".to_owned()
        }
        ("LOGIN" | "SELECT" | "EXAMINE" | "UID" | "EXPUNGE" | "CLOSE", _) => {
            format!("BAD {command} not allowed now")
        }
        _ => format!("BAD unknown command {command}"),
    };
    out.extend(format!("{tag} {done}\r\n").bytes());
    (out, close)
}

/// Removes the messages flagged `\Deleted` (only those in `only`, when given), answering
/// an `EXPUNGE` per message with its sequence number at the time.
fn expunge(state: &mut State, mailbox: &str, only: Option<&BTreeSet<u32>>, out: &mut Vec<u8>) {
    let messages = &mut state.mailboxes.get_mut(mailbox).unwrap().messages;
    let mut index = 0;
    while index < messages.len() {
        let message = &messages[index];
        if message.flags.contains("\\Deleted") && only.is_none_or(|set| set.contains(&message.uid))
        {
            messages.remove(index);
            out.extend(format!("* {} EXPUNGE\r\n", index + 1).bytes());
        } else {
            index += 1;
        }
    }
}

fn uid_command(
    state: &mut State,
    mailbox: &str,
    read_only: bool,
    arguments: &[String],
    out: &mut Vec<u8>,
) -> String {
    let Some((verb, arguments)) = arguments.split_first() else {
        return "BAD UID needs a command".to_owned();
    };
    let verb = verb.to_ascii_uppercase();
    let capable = |name: &str| state.capabilities.contains(&name);
    let uids: Vec<u32> = state.mailboxes[mailbox]
        .messages
        .iter()
        .map(|m| m.uid)
        .collect();
    match (verb.as_str(), arguments) {
        ("SEARCH", criteria) if !criteria.is_empty() => {
            let mut found: BTreeSet<u32> = uids.iter().copied().collect();
            let mut words = criteria.iter();
            while let Some(word) = words.next() {
                let keep: BTreeSet<u32> = match word.to_ascii_uppercase().as_str() {
                    "ALL" => uids.iter().copied().collect(),
                    key @ ("UNSEEN" | "SEEN" | "UNDELETED" | "DELETED") => {
                        let (flag, set) = match key {
                            "SEEN" => ("\\Seen", true),
                            "UNSEEN" => ("\\Seen", false),
                            "DELETED" => ("\\Deleted", true),
                            _ => ("\\Deleted", false),
                        };
                        state.mailboxes[mailbox]
                            .messages
                            .iter()
                            .filter(|m| m.flags.contains(flag) == set)
                            .map(|m| m.uid)
                            .collect()
                    }
                    "UID" => match words.next().and_then(|set| uid_set(set, &uids)) {
                        Some(set) => set,
                        None => return "BAD UID takes a sequence set".to_owned(),
                    },
                    other => return format!("BAD unsupported search key {other}"),
                };
                found = found.intersection(&keep).copied().collect();
            }
            let listed: Vec<String> = found.iter().map(ToString::to_string).collect();
            out.extend(
                format!("* SEARCH {}\r\n", listed.join(" "))
                    .trim_end()
                    .bytes(),
            );
            out.extend(b"\r\n");
            "OK UID SEARCH completed".to_owned()
        }
        ("FETCH", [set, items]) => {
            let Some(chosen) = uid_set(set, &uids) else {
                return "BAD not a sequence set".to_owned();
            };
            let items: Vec<String> = items
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(' ')
                .map(str::to_ascii_uppercase)
                .collect();
            let known = [
                "UID",
                "FLAGS",
                "RFC822.SIZE",
                "BODY[]",
                "BODY.PEEK[]",
                "BODY.PEEK[HEADER]",
                "RFC822",
                "RFC822.HEADER",
            ];
            if let Some(unknown) = items.iter().find(|i| !known.contains(&i.as_str())) {
                return format!("BAD unsupported fetch item {unknown}");
            }
            let messages = &mut state.mailboxes.get_mut(mailbox).unwrap().messages;
            for (index, message) in messages.iter_mut().enumerate() {
                if !chosen.contains(&message.uid) {
                    continue;
                }
                // Reading a body without PEEK sets \Seen (RFC 3501 §6.4.5).
                let sets_seen = items.iter().any(|i| i == "BODY[]" || i == "RFC822");
                let newly_seen = sets_seen && !read_only && message.flags.insert("\\Seen".into());
                let mut parts = vec![format!("UID {}", message.uid)];
                let mut literal: Option<(String, Vec<u8>)> = None;
                for item in &items {
                    match item.as_str() {
                        "UID" => {}
                        "FLAGS" => parts.push(format!("FLAGS {}", flag_list(&message.flags))),
                        "RFC822.SIZE" => parts.push(format!("RFC822.SIZE {}", message.raw.len())),
                        "BODY[]" | "BODY.PEEK[]" => {
                            literal = Some(("BODY[]".to_owned(), message.raw.clone()));
                        }
                        "RFC822" => literal = Some(("RFC822".to_owned(), message.raw.clone())),
                        _ => {
                            let name = if item == "RFC822.HEADER" {
                                "RFC822.HEADER"
                            } else {
                                "BODY[HEADER]"
                            };
                            literal = Some((name.to_owned(), header_of(&message.raw)));
                        }
                    }
                }
                if newly_seen && !items.iter().any(|i| i == "FLAGS") {
                    parts.push(format!("FLAGS {}", flag_list(&message.flags)));
                }
                out.extend(format!("* {} FETCH ({}", index + 1, parts.join(" ")).bytes());
                if let Some((name, bytes)) = literal {
                    out.extend(format!(" {name} {{{}}}\r\n", bytes.len()).bytes());
                    out.extend(bytes);
                }
                out.extend(b")\r\n");
            }
            "OK UID FETCH completed".to_owned()
        }
        ("STORE", [set, how, flags]) => {
            if read_only {
                return "NO mailbox is read-only".to_owned();
            }
            let Some(chosen) = uid_set(set, &uids) else {
                return "BAD not a sequence set".to_owned();
            };
            let how = how.to_ascii_uppercase();
            let silent = how.ends_with(".SILENT");
            let named: BTreeSet<String> = flags
                .trim_start_matches('(')
                .trim_end_matches(')')
                .split(' ')
                .filter(|f| !f.is_empty())
                .map(str::to_owned)
                .collect();
            let messages = &mut state.mailboxes.get_mut(mailbox).unwrap().messages;
            for (index, message) in messages.iter_mut().enumerate() {
                if !chosen.contains(&message.uid) {
                    continue;
                }
                match how.trim_end_matches(".SILENT") {
                    "+FLAGS" => message.flags.extend(named.iter().cloned()),
                    "-FLAGS" => message.flags.retain(|f| !named.contains(f)),
                    "FLAGS" => message.flags.clone_from(&named),
                    _ => return format!("BAD unknown STORE action {how}"),
                }
                if !silent {
                    out.extend(
                        format!(
                            "* {} FETCH (UID {} FLAGS {})\r\n",
                            index + 1,
                            message.uid,
                            flag_list(&message.flags)
                        )
                        .bytes(),
                    );
                }
            }
            "OK UID STORE completed".to_owned()
        }
        ("COPY" | "MOVE", [set, target]) => {
            if verb == "MOVE" && (!capable("MOVE") || read_only) {
                return "BAD MOVE is not allowed".to_owned();
            }
            let Some(chosen) = uid_set(set, &uids) else {
                return "BAD not a sequence set".to_owned();
            };
            if target == mailbox || !state.mailboxes.contains_key(target) {
                return "NO [TRYCREATE] no such mailbox".to_owned();
            }
            let moving: Vec<Stored> = state.mailboxes[mailbox]
                .messages
                .iter()
                .filter(|m| chosen.contains(&m.uid))
                .cloned()
                .collect();
            let destination = state.mailboxes.get_mut(target).unwrap();
            let mut new_uids = Vec::new();
            for message in &moving {
                let mut flags = message.flags.clone();
                flags.remove("\\Deleted");
                new_uids.push(destination.add(message.raw.clone(), flags));
            }
            let validity = destination.uid_validity;
            let old: Vec<String> = moving.iter().map(|m| m.uid.to_string()).collect();
            let new: Vec<String> = new_uids.iter().map(ToString::to_string).collect();
            let copyuid = format!("[COPYUID {validity} {} {}]", old.join(","), new.join(","));
            if verb == "MOVE" {
                out.extend(format!("* OK {copyuid} moved\r\n").bytes());
                let source = state.mailboxes.get_mut(mailbox).unwrap();
                for message in &mut source.messages {
                    if chosen.contains(&message.uid) {
                        message.flags.insert("\\Deleted".to_owned());
                    }
                }
                expunge(state, mailbox, Some(&chosen), out);
                "OK UID MOVE completed".to_owned()
            } else {
                format!("OK {copyuid} UID COPY completed")
            }
        }
        ("EXPUNGE", [set]) => {
            if !capable("UIDPLUS") || read_only {
                return "BAD UID EXPUNGE is not allowed".to_owned();
            }
            let Some(chosen) = uid_set(set, &uids) else {
                return "BAD not a sequence set".to_owned();
            };
            expunge(state, mailbox, Some(&chosen), out);
            "OK UID EXPUNGE completed".to_owned()
        }
        _ => format!("BAD unsupported UID {verb}"),
    }
}

/// The header of a message, up to and with the empty line that ends it.
fn header_of(raw: &[u8]) -> Vec<u8> {
    raw.windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or_else(|| raw.to_vec(), |at| raw[..at + 4].to_vec())
}
