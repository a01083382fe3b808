//! A real SFTP server for the tests, on loopback: russh's server with russh-sftp's
//! handler serving a temporary directory, password login for one user, and a host key
//! generated for each server. Paths are taken as under the directory (`/inbound` is
//! `<root>/inbound`). Enough of SFTP for a poller: list, stat, open, read, write, make a
//! folder, rename (refusing an existing target, as OpenSSH does) and remove.

use std::collections::HashMap;
use std::io::{Read, Seek, SeekFrom, Write};
use std::net::SocketAddr;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};

use russh::keys::ssh_key::private::Ed25519Keypair;
use russh::keys::{HashAlg, PrivateKey};
use russh::server::{Auth, ChannelOpenHandle, Msg, Server as _, Session};
use russh::{Channel, ChannelId};
use russh_sftp::protocol::{
    Data, File, FileAttributes, Handle, Name, OpenFlags, Status, StatusCode,
};

pub const USER: &str = "edi";
pub const PASSWORD: &str = "s3cret pass";

pub struct SftpServer {
    pub root: tempfile::TempDir,
    pub port: u16,
    pub key: PrivateKey,
    /// The key [`USER`] may also log in with.
    pub client_key: PrivateKey,
    logins: Arc<Mutex<Vec<(String, bool)>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for SftpServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A host key made from random bytes.
pub fn random_host_key() -> PrivateKey {
    PrivateKey::from(Ed25519Keypair::from_seed(&rand::random::<[u8; 32]>()))
}

impl SftpServer {
    /// Serves a fresh temporary directory holding an empty `inbound/`.
    pub async fn start() -> Self {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("inbound")).unwrap();
        let key = random_host_key();
        let client_key = random_host_key();
        let config = Arc::new(russh::server::Config {
            auth_rejection_time: std::time::Duration::ZERO,
            auth_rejection_time_initial: Some(std::time::Duration::ZERO),
            keys: vec![key.clone()],
            ..Default::default()
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let logins = Arc::new(Mutex::new(Vec::new()));
        let mut server = Server {
            root: Arc::new(root.path().to_owned()),
            client_key: client_key.public_key().clone(),
            logins: Arc::clone(&logins),
        };
        let task = tokio::spawn(async move {
            let _ = server.run_on_socket(config, &listener).await;
        });
        Self {
            root,
            port,
            key,
            client_key,
            logins,
            task,
        }
    }

    /// The host key as an OpenSSH public key line.
    pub fn public_key_line(&self) -> String {
        self.key.public_key().to_openssh().unwrap()
    }

    /// The host key's SHA-256 fingerprint, as `ssh-keygen -lf` prints it.
    pub fn fingerprint(&self) -> String {
        self.key
            .public_key()
            .fingerprint(HashAlg::Sha256)
            .to_string()
    }

    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.path().join(relative)
    }

    /// The names in a folder under the root, sorted; none if it does not exist.
    pub fn names_in(&self, relative: &str) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.path(relative)) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// Password logins tried so far: (password given, accepted).
    pub fn logins(&self) -> Vec<(String, bool)> {
        self.logins.lock().unwrap().clone()
    }
}

#[derive(Clone)]
struct Server {
    root: Arc<PathBuf>,
    client_key: russh::keys::PublicKey,
    logins: Arc<Mutex<Vec<(String, bool)>>>,
}

impl russh::server::Server for Server {
    type Handler = SshSession;

    fn new_client(&mut self, _: Option<SocketAddr>) -> SshSession {
        SshSession {
            root: Arc::clone(&self.root),
            client_key: self.client_key.clone(),
            logins: Arc::clone(&self.logins),
            channels: HashMap::new(),
        }
    }
}

struct SshSession {
    root: Arc<PathBuf>,
    client_key: russh::keys::PublicKey,
    logins: Arc<Mutex<Vec<(String, bool)>>>,
    channels: HashMap<ChannelId, Channel<Msg>>,
}

impl russh::server::Handler for SshSession {
    type Error = russh::Error;

    async fn auth_password(&mut self, user: &str, password: &str) -> Result<Auth, Self::Error> {
        let accepted = user == USER && password == PASSWORD;
        self.logins
            .lock()
            .unwrap()
            .push((password.to_owned(), accepted));
        Ok(if accepted {
            Auth::Accept
        } else {
            Auth::reject()
        })
    }

    async fn auth_publickey(
        &mut self,
        user: &str,
        key: &russh::keys::PublicKey,
    ) -> Result<Auth, Self::Error> {
        Ok(
            if user == USER && key.key_data() == self.client_key.key_data() {
                Auth::Accept
            } else {
                Auth::reject()
            },
        )
    }

    async fn channel_open_session(
        &mut self,
        channel: Channel<Msg>,
        reply: ChannelOpenHandle,
        _: &mut Session,
    ) -> Result<(), Self::Error> {
        self.channels.insert(channel.id(), channel);
        reply.accept().await;
        Ok(())
    }

    async fn channel_eof(
        &mut self,
        channel: ChannelId,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        session.close(channel)
    }

    async fn subsystem_request(
        &mut self,
        id: ChannelId,
        name: &str,
        session: &mut Session,
    ) -> Result<(), Self::Error> {
        match self.channels.remove(&id) {
            Some(channel) if name == "sftp" => {
                session.channel_success(id)?;
                let sftp = Sftp {
                    root: Arc::clone(&self.root),
                    handles: HashMap::new(),
                    next: 0,
                };
                russh_sftp::server::run(channel.into_stream(), sftp).await;
                Ok(())
            }
            _ => session.channel_failure(id),
        }
    }
}

enum Opened {
    File(std::fs::File),
    /// A folder's listing, sent once.
    Dir(Option<Vec<File>>),
}

struct Sftp {
    root: Arc<PathBuf>,
    handles: HashMap<String, Opened>,
    next: u64,
}

fn ok(id: u32) -> Status {
    Status {
        id,
        status_code: StatusCode::Ok,
        error_message: "Ok".to_owned(),
        language_tag: "en-US".to_owned(),
    }
}

fn code(error: &std::io::Error) -> StatusCode {
    match error.kind() {
        std::io::ErrorKind::NotFound => StatusCode::NoSuchFile,
        std::io::ErrorKind::PermissionDenied => StatusCode::PermissionDenied,
        _ => StatusCode::Failure,
    }
}

impl Sftp {
    /// A client's path under the root; `..` refused.
    fn local(&self, path: &str) -> Result<PathBuf, StatusCode> {
        let relative = Path::new(path.trim_start_matches('/'));
        if relative
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return Err(StatusCode::PermissionDenied);
        }
        Ok(self.root.join(relative))
    }

    fn handle(&mut self, opened: Opened) -> String {
        self.next += 1;
        let handle = self.next.to_string();
        self.handles.insert(handle.clone(), opened);
        handle
    }

    fn attrs(&self, path: &str) -> Result<FileAttributes, StatusCode> {
        let metadata = std::fs::symlink_metadata(self.local(path)?).map_err(|e| code(&e))?;
        Ok(FileAttributes::from(&metadata))
    }
}

impl russh_sftp::server::Handler for Sftp {
    type Error = StatusCode;

    fn unimplemented(&self) -> Self::Error {
        StatusCode::OpUnsupported
    }

    async fn realpath(&mut self, id: u32, path: String) -> Result<Name, Self::Error> {
        Ok(Name {
            id,
            files: vec![File::dummy(path)],
        })
    }

    async fn opendir(&mut self, id: u32, path: String) -> Result<Handle, Self::Error> {
        let dir = self.local(&path)?;
        let mut files = Vec::new();
        for entry in std::fs::read_dir(&dir).map_err(|e| code(&e))? {
            let entry = entry.map_err(|e| code(&e))?;
            let metadata = std::fs::symlink_metadata(entry.path()).map_err(|e| code(&e))?;
            let mut attrs = FileAttributes::from(&metadata);
            if metadata.file_type().is_symlink() {
                attrs.permissions = Some(0o120_777);
            }
            files.push(File::new(
                entry.file_name().to_string_lossy().into_owned(),
                attrs,
            ));
        }
        let handle = self.handle(Opened::Dir(Some(files)));
        Ok(Handle { id, handle })
    }

    async fn readdir(&mut self, id: u32, handle: String) -> Result<Name, Self::Error> {
        match self.handles.get_mut(&handle) {
            Some(Opened::Dir(files)) => match files.take() {
                Some(files) => Ok(Name { id, files }),
                None => Err(StatusCode::Eof),
            },
            _ => Err(StatusCode::Failure),
        }
    }

    async fn close(&mut self, id: u32, handle: String) -> Result<Status, Self::Error> {
        self.handles.remove(&handle);
        Ok(ok(id))
    }

    async fn stat(
        &mut self,
        id: u32,
        path: String,
    ) -> Result<russh_sftp::protocol::Attrs, Self::Error> {
        Ok(russh_sftp::protocol::Attrs {
            id,
            attrs: self.attrs(&path)?,
        })
    }

    async fn lstat(
        &mut self,
        id: u32,
        path: String,
    ) -> Result<russh_sftp::protocol::Attrs, Self::Error> {
        self.stat(id, path).await
    }

    async fn fstat(
        &mut self,
        id: u32,
        handle: String,
    ) -> Result<russh_sftp::protocol::Attrs, Self::Error> {
        match self.handles.get(&handle) {
            Some(Opened::File(file)) => {
                let metadata = file.metadata().map_err(|e| code(&e))?;
                Ok(russh_sftp::protocol::Attrs {
                    id,
                    attrs: FileAttributes::from(&metadata),
                })
            }
            _ => Err(StatusCode::Failure),
        }
    }

    async fn open(
        &mut self,
        id: u32,
        filename: String,
        flags: OpenFlags,
        _: FileAttributes,
    ) -> Result<Handle, Self::Error> {
        let path = self.local(&filename)?;
        let file = std::fs::OpenOptions::new()
            .read(flags.contains(OpenFlags::READ))
            .write(flags.contains(OpenFlags::WRITE))
            .create(flags.contains(OpenFlags::CREATE) && !flags.contains(OpenFlags::EXCLUDE))
            .create_new(flags.contains(OpenFlags::CREATE) && flags.contains(OpenFlags::EXCLUDE))
            .truncate(flags.contains(OpenFlags::TRUNCATE))
            .open(path)
            .map_err(|e| code(&e))?;
        let handle = self.handle(Opened::File(file));
        Ok(Handle { id, handle })
    }

    async fn read(
        &mut self,
        id: u32,
        handle: String,
        offset: u64,
        len: u32,
    ) -> Result<Data, Self::Error> {
        let Some(Opened::File(file)) = self.handles.get_mut(&handle) else {
            return Err(StatusCode::Failure);
        };
        file.seek(SeekFrom::Start(offset)).map_err(|e| code(&e))?;
        let mut data = vec![0; len as usize];
        let read = file.read(&mut data).map_err(|e| code(&e))?;
        if read == 0 && len > 0 {
            return Err(StatusCode::Eof);
        }
        data.truncate(read);
        Ok(Data { id, data })
    }

    async fn write(
        &mut self,
        id: u32,
        handle: String,
        offset: u64,
        data: Vec<u8>,
    ) -> Result<Status, Self::Error> {
        let Some(Opened::File(file)) = self.handles.get_mut(&handle) else {
            return Err(StatusCode::Failure);
        };
        file.seek(SeekFrom::Start(offset)).map_err(|e| code(&e))?;
        file.write_all(&data).map_err(|e| code(&e))?;
        Ok(ok(id))
    }

    async fn mkdir(
        &mut self,
        id: u32,
        path: String,
        _: FileAttributes,
    ) -> Result<Status, Self::Error> {
        std::fs::create_dir(self.local(&path)?).map_err(|e| code(&e))?;
        Ok(ok(id))
    }

    async fn rename(&mut self, id: u32, from: String, to: String) -> Result<Status, Self::Error> {
        let (from, to) = (self.local(&from)?, self.local(&to)?);
        if std::fs::symlink_metadata(&to).is_ok() {
            return Err(StatusCode::Failure);
        }
        std::fs::rename(from, to).map_err(|e| code(&e))?;
        Ok(ok(id))
    }

    async fn remove(&mut self, id: u32, filename: String) -> Result<Status, Self::Error> {
        std::fs::remove_file(self.local(&filename)?).map_err(|e| code(&e))?;
        Ok(ok(id))
    }
}
