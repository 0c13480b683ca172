//! Files served on loopback. A Hugging Face mirror: what `solaria model install`
//! and `solaria install --model` download from in the tests (`GET
//! /<repo>/resolve/main/<file>` answers the file of a model directory, 404 when it
//! has none, and a 500 for the files a test names as failing); and a directory as
//! a release server (`GET /<file>`), what `deploy/install-release.sh` downloads
//! from.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};

/// A Hugging Face mirror on loopback serving MiniLM's repository from `dir`.
pub fn mirror(dir: PathBuf, failing: &'static [&'static str]) -> String {
    mirror_of("sentence-transformers/all-MiniLM-L6-v2", dir, failing)
}

/// A Hugging Face mirror on loopback serving the repository `repo` from `dir`,
/// answering 500 for the files `failing`.
pub fn mirror_of(repo: &'static str, dir: PathBuf, failing: &'static [&'static str]) -> String {
    serve(format!("/{repo}/resolve/main/"), dir, failing)
}

/// The files of `dir` on loopback, each at `/<name>`; the base URL.
pub fn files(dir: PathBuf) -> String {
    serve("/".to_string(), dir, &[])
}

fn serve(prefix: String, dir: PathBuf, failing: &'static [&'static str]) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { continue };
            let _ = answer(stream, &prefix, &dir, failing);
        }
    });
    url
}

fn answer(
    mut stream: TcpStream,
    prefix: &str,
    dir: &Path,
    failing: &[&str],
) -> std::io::Result<()> {
    let mut request = BufReader::new(stream.try_clone()?);
    let mut first = String::new();
    request.read_line(&mut first)?;
    loop {
        let mut header = String::new();
        if request.read_line(&mut header)? == 0 || header.trim().is_empty() {
            break;
        }
    }
    let path = first.split_whitespace().nth(1).unwrap_or("/");
    let file = path.strip_prefix(prefix).filter(|f| !f.contains(".."));
    let (status, body) = match file {
        Some(f) if failing.contains(&f) => ("500 Internal Server Error", b"overloaded".to_vec()),
        Some(f) => match std::fs::read(dir.join(f)) {
            Ok(bytes) => ("200 OK", bytes),
            Err(_) => ("404 Not Found", b"Entry not found".to_vec()),
        },
        None => ("404 Not Found", b"Repository not found".to_vec()),
    };
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Length: {}\r\nContent-Type: application/octet-stream\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    stream.write_all(&body)?;
    stream.flush()?;
    // Drain what the client may still send, so closing does not reset the connection.
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = request.read_to_end(&mut Vec::new());
    Ok(())
}
