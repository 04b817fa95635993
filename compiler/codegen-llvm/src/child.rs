//! LLVM's work in a child process (`fork`): a crash in LLVM then ends the
//! child, not afc (lib.rs `isolated`), and the parts of a split module
//! run side by side (`units`).

use std::path::{Path, PathBuf};

/// A child at work; it writes its output to `out` and exits.
pub struct Child {
    pid: libc::pid_t,
    out: PathBuf,
}

/// How a child ended.
pub enum End {
    /// Its output.
    Done(Vec<u8>),
    /// Its work failed with this message (not a crash).
    Failed(String),
    /// It crashed: killed by a signal, or gone without its output.
    Crashed(String),
    /// It could not write its output, or afc could not wait for it.
    Lost,
}

/// Starts `work` in a child process; `None` when no process can be made.
pub fn spawn(out: &Path, work: impl FnOnce() -> Result<Vec<u8>, String>) -> Option<Child> {
    // SAFETY: afc's compilation runs on one thread (its main thread only
    // waits for it); the child runs LLVM on its copy of the module, writes
    // one file and leaves with _exit, running no destructors.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return None;
    }
    if pid == 0 {
        // LLVM's crash report would go to the user's terminal.
        let null = std::ffi::CString::new("/dev/null").unwrap();
        // A crash kills the child with its signal, for the parent to see:
        // no handler of the parent's runs on the child's copy (a
        // sanitizer's would report the crash as its own process's and
        // exit with a status; a fuzzer's would save its input as a crash).
        unsafe {
            for sig in [libc::SIGSEGV, libc::SIGBUS, libc::SIGILL, libc::SIGFPE, libc::SIGABRT] {
                libc::signal(sig, libc::SIG_DFL);
            }
            let fd = libc::open(null.as_ptr(), libc::O_WRONLY);
            if fd >= 0 {
                libc::dup2(fd, 2);
            }
        }
        let code = match work() {
            Ok(bytes) => match std::fs::write(out, bytes) {
                Ok(()) => 0,
                Err(_) => 2,
            },
            Err(e) => {
                let _ = std::fs::write(out, e.as_bytes());
                1
            }
        };
        unsafe { libc::_exit(code) };
    }
    Some(Child { pid, out: out.to_path_buf() })
}

impl Child {
    /// Waits for the child. An interrupt that killed it (a Ctrl-C reaches
    /// the child too) ends afc the same way.
    pub fn wait(self) -> Result<End, String> {
        let mut status = 0;
        while unsafe { libc::waitpid(self.pid, &mut status, 0) } < 0 {
            if std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
                return Ok(End::Lost);
            }
        }
        if libc::WIFSIGNALED(status) {
            let sig = libc::WTERMSIG(status);
            if [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT].contains(&sig) {
                unsafe { libc::raise(sig) };
                return Err(format!("interrupted by signal {}", sig));
            }
            return Ok(End::Crashed(format!("signal {}", sig)));
        }
        // The child writes its file before it exits; one that exited
        // without it crashed some other way (a handler that ends the
        // process with a status).
        let Ok(bytes) = std::fs::read(&self.out) else {
            return Ok(End::Crashed(format!("exit status {} without its output", libc::WEXITSTATUS(status))));
        };
        Ok(match libc::WEXITSTATUS(status) {
            0 => End::Done(bytes),
            1 => End::Failed(String::from_utf8_lossy(&bytes).to_string()),
            _ => End::Lost,
        })
    }
}
