//! Internal compiler errors: a check found that afc itself produced
//! something wrong. Every such "cannot happen" takes this one path: the pass
//! unwinds with an [`Ice`] (so temporary files are cleaned up and no output
//! is half-written), and the `afc` binary reports it — the pass, a one-line
//! reason, the source file, exit status 70 — with the details (an LP model,
//! an IR dump) written to a file whose path it prints, never to the
//! terminal.

/// What a failed internal check reports.
#[derive(Clone, Debug)]
pub struct Ice {
    /// The pass whose output failed its check (`cluster`, `loop-ir`, …).
    pub pass: String,
    /// One line: what is wrong.
    pub reason: String,
    /// Everything that helps to find the bug; goes to a file.
    pub details: String,
}

/// Stops compilation with an internal compiler error.
pub fn fail(pass: &str, reason: &str, details: &str) -> ! {
    std::panic::panic_any(Ice {
        pass: pass.to_string(),
        reason: reason.lines().next().unwrap_or("").to_string(),
        details: format!("{}\n\n{}", reason, details),
    })
}
