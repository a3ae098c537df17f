//! The system calls `daemonize yes` needs that std does not offer: fork,
//! setsid and dup2. This is the crate's only unsafe code (lib.rs allows it
//! for this module alone); each block says why it is sound.

use std::io;
use std::os::fd::AsRawFd;

/// jemalloc's background purgers' name (`background_thread:true`, see
/// `.cargo/config.toml`: the allocator starts one before `main`, and names
/// it once it runs). [`detach`] stops them first; one may still be listed
/// for the moment it takes to exit.
const JEMALLOC_THREAD: &str = "jemalloc_bg_thd";

/// The threads of this process other than the caller's and jemalloc's,
/// by name (`/proc/self/task`).
fn foreign_threads() -> io::Result<Vec<String>> {
    let me = std::fs::read_to_string("/proc/thread-self/stat")?.split(' ').next().unwrap_or_default().to_string();
    let mut others = Vec::new();
    for task in std::fs::read_dir("/proc/self/task")? {
        let task = task?;
        if task.file_name().to_string_lossy() == me {
            continue;
        }
        // A thread that ended since the listing has no comm: not counted.
        let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else { continue };
        let comm = comm.trim_end().to_string();
        if comm != JEMALLOC_THREAD {
            others.push(comm);
        }
    }
    Ok(others)
}

/// Forks; the parent exits 0 at once, the child goes on as the leader of a
/// new session with no controlling terminal and its standard input, output
/// and error on `/dev/null`, as Redis's `daemonize()` leaves it.
///
/// jemalloc's background threads are stopped first (and waited for), so
/// that only the caller's thread is left to fork; `jemalloc-bg-thread`
/// starts them again in the child, with the rest of the configuration.
/// Fails, without forking, when the process runs any other thread: the
/// child would inherit locks and half-done work of threads that do not
/// exist in it. Call it before starting any.
pub fn detach() -> io::Result<()> {
    // Without the support (a build without it) there are none to stop.
    let _ = tikv_jemalloc_ctl::background_thread::write(false);
    let others = foreign_threads().map_err(|e| io::Error::new(e.kind(), format!("can't list the process's threads: {e}")))?;
    if !others.is_empty() {
        return Err(io::Error::other(format!("the process already runs other threads ({})", others.join(", "))));
    }
    let devnull = std::fs::OpenOptions::new().read(true).write(true).open("/dev/null")?;
    // SAFETY: fork(2) takes no pointers. What the child may rely on after
    // it: it runs only this thread, which holds no lock, and no other
    // thread was left running to hold one (checked above; a jemalloc
    // thread still listed has been joined and is only exiting); jemalloc's
    // fork handlers leave the allocator consistent in the child.
    match unsafe { libc::fork() } {
        -1 => return Err(io::Error::last_os_error()),
        0 => {}
        // The launching process: nothing of its own to finish.
        _ => std::process::exit(0),
    }
    // SAFETY: setsid(2) takes no arguments and touches no memory.
    if unsafe { libc::setsid() } == -1 {
        return Err(io::Error::last_os_error());
    }
    for fd in [libc::STDIN_FILENO, libc::STDOUT_FILENO, libc::STDERR_FILENO] {
        // SAFETY: `devnull` is open until the end of this function, and
        // dup2(2) only makes descriptors 0 to 2 refer to it: no Rust value
        // owns them (std's stdin, stdout and stderr use them by number).
        if unsafe { libc::dup2(devnull.as_raw_fd(), fd) } == -1 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    /// With a thread of ours alive the check that guards the fork
    /// refuses, naming it (and the test process is not forked).
    #[test]
    fn detach_refuses_a_threaded_process() {
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let (up, is_up) = std::sync::mpsc::channel::<()>();
        // It names itself as it starts: told once it has.
        let t = std::thread::Builder::new()
            .name("tern-bystander".into())
            .spawn(move || {
                let _ = up.send(());
                rx.recv()
            })
            .unwrap();
        is_up.recv().unwrap();
        let e = super::detach().unwrap_err();
        drop(tx);
        let _ = t.join();
        assert!(e.to_string().contains("tern-bystander"), "{e}");
    }
}
